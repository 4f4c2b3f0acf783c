"""A tournament's questions from typed lines, CSV or JSONL: each bad row named by its line number, and
nothing imported when any row is bad. Pure: no Django."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from batches.questions import QuestionsError, decode, finish, json_lines

MAX_QUESTIONS = 500
MAX_TEXT = 500
MAX_BYTES = 1024 * 1024
CORRECT = {"": "", "for": "for", "against": "against", "none": ""}
COLUMNS = ("topic", "premise", "correct")


@dataclass(frozen=True)
class QuestionSpec:
    topic: str
    premise: str = ""
    correct: str = ""  # "for", "against", or "" when unknown


__all__ = ["MAX_BYTES", "QuestionSpec", "QuestionsError", "parse_csv", "parse_file", "parse_jsonl", "parse_lines"]


def _question(line: int, topic: object, premise: object, correct: object) -> tuple[QuestionSpec | None, str]:
    values = []
    for name, value in (("topic", topic), ("premise", premise), ("correct", correct)):
        if value is None:
            value = ""
        if not isinstance(value, str):
            return None, f"line {line}: {name} must be text"
        value = value.strip()
        if len(value) > MAX_TEXT:
            return None, f"line {line}: {name} is longer than {MAX_TEXT} characters"
        values.append(value)
    topic_text, premise_text, correct_text = values
    if not topic_text:
        return None, f"line {line}: the topic is empty"
    if correct_text.lower() not in CORRECT:
        return None, f"line {line}: correct must be 'for', 'against' or empty, not {correct_text!r}"
    return QuestionSpec(topic_text, premise_text, CORRECT[correct_text.lower()]), ""


def _finish(found: list[QuestionSpec], problems: list[str]) -> list[QuestionSpec]:
    return finish(found, problems, MAX_QUESTIONS, "a tournament")


def parse_lines(text: str) -> list[QuestionSpec]:
    """Typed questions: one a line, `topic | premise | correct` (premise and correct optional)."""
    found: list[QuestionSpec] = []
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        parts = [p.strip() for p in raw.split("|")]
        if len(parts) > 3:
            problems.append(f"line {number}: expected at most three parts (topic | premise | correct)")
            continue
        parts += [""] * (3 - len(parts))
        question, problem = _question(number, *parts)
        if question is None:
            problems.append(problem)
        else:
            found.append(question)
    return _finish(found, problems)


def parse_csv(text: str) -> list[QuestionSpec]:
    """CSV with a header row naming the columns: `topic` (required), `premise`, `correct`."""
    found: list[QuestionSpec] = []
    problems: list[str] = []
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise QuestionsError(["the file is empty"]) from None
    except csv.Error as error:
        raise QuestionsError([f"line 1: {error}"]) from None
    unknown = [h for h in header if h not in COLUMNS]
    if "topic" not in header or unknown:
        raise QuestionsError(
            [f"line 1: the header must name the columns topic, premise, correct (got {', '.join(header) or 'nothing'})"]
        )
    try:
        for row in reader:
            number = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                problems.append(f"line {number}: {len(row)} columns, the header has {len(header)}")
                continue
            values = dict(zip(header, row, strict=True))
            question, problem = _question(number, values["topic"], values.get("premise"), values.get("correct"))
            if question is None:
                problems.append(problem)
            else:
                found.append(question)
    except csv.Error as error:
        problems.append(f"line {reader.line_num}: {error}")
    return _finish(found, problems)


def parse_jsonl(text: str) -> list[QuestionSpec]:
    """One JSON object a line: {"topic": ..., "premise": ..., "correct": "for" | "against" | null}."""
    found: list[QuestionSpec] = []
    problems: list[str] = []
    for number, value in json_lines(text, problems):
        if not isinstance(value, dict):
            problems.append(f"line {number}: expected a JSON object")
            continue
        unknown = sorted(set(value) - set(COLUMNS))
        if unknown:
            problems.append(f"line {number}: unknown key {unknown[0]!r}; the keys are topic, premise, correct")
            continue
        question, problem = _question(number, value.get("topic"), value.get("premise"), value.get("correct"))
        if question is None:
            problems.append(problem)
        else:
            found.append(question)
    return _finish(found, problems)


def parse_file(name: str, data: bytes) -> list[QuestionSpec]:
    """An uploaded or named file: `.csv` or `.jsonl`, UTF-8, at most MAX_BYTES."""
    text = decode(name, data, MAX_BYTES)
    lower = name.lower()
    if lower.endswith(".csv"):
        return parse_csv(text)
    if lower.endswith((".jsonl", ".ndjson")):
        return parse_jsonl(text)
    raise QuestionsError([f"{name}: questions files end in .csv or .jsonl"])
