"""What every kind's question set reads alike: the error that lists every bad row, a file's text within its size,
JSON a line, and the last checks (some questions, not too many). Each kind says what a row is. Pure: no Django."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TypeVar

Q = TypeVar("Q")
MB = 1024 * 1024


class QuestionsError(ValueError):
    """Every problem found, one a row ("line N: ...", with the file's name where it has one)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def size_text(limit: int) -> str:
    """A file size limit for people: "4 MB", "500 KB"."""
    return f"{limit // MB} MB" if limit % MB == 0 else f"{limit // 1024} KB"


def decode(name: str, data: bytes, max_bytes: int) -> str:
    """A file's text: UTF-8 (a byte-order mark is dropped), at most `max_bytes`."""
    if len(data) > max_bytes:
        raise QuestionsError([f"{name} is larger than {size_text(max_bytes)}"])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QuestionsError([f"{name} is not UTF-8 text"]) from None


def json_lines(text: str, problems: list[str], where: str = "") -> Iterator[tuple[int, Any]]:
    """Each line's number and JSON value, blank lines skipped; a line that is not JSON is added to `problems`
    (`where` names the file before "line N")."""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            problems.append(f"{where}line {number}: not valid JSON ({error.msg})")
            continue
        yield number, value


def finish(found: list[Q], problems: list[str], most: int, batch: str, where: str = "") -> list[Q]:
    """The questions read, or QuestionsError with every problem: nothing is imported when any row is bad, and a set
    has at least one question and at most `most` (`batch`: "a tournament", "an experiment")."""
    if not found and not problems:
        problems.append(f"{where}there are no questions")
    if len(found) > most:
        problems.append(f"{where}there are {len(found)} questions; {batch} takes at most {most}")
    if problems:
        raise QuestionsError(problems)
    return found
