"""An experiment's question set from JSONL: one question with its passage and two answers a line.

    {"passage": "...", "question": "...", "answers": ["...", "..."], "correct": 0 | 1 | null}

Every bad row is named by its file and line, and nothing is imported when any row is bad. Pure: no Django.
The sizes are the evidence formats' own (docs/protocols/evidence.md), so a question that imports runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from batches.questions import QuestionsError, decode, finish, json_lines
from debates.formats.evidence import MAX_ANSWER, MAX_PASSAGE, MAX_QUESTION

MAX_QUESTIONS = 500
MAX_BYTES = 4 * 1024 * 1024
KEYS = ("passage", "question", "answers", "correct")
SAMPLE = Path(__file__).resolve().parent / "samples" / "evidence-sample.jsonl"


@dataclass(frozen=True)
class EvidenceQuestion:
    passage: str
    question: str
    answers: tuple[str, str]
    correct: int | None  # the index of the correct answer; None when unknown


__all__ = ["MAX_BYTES", "EvidenceQuestion", "QuestionsError", "parse_file", "parse_jsonl", "sample"]


def _text(value: object, name: str, limit: int, *, required: bool = True) -> tuple[str, str]:
    if value is None and not required:
        return "", ""
    if not isinstance(value, str):
        return "", f"{name} must be text"
    value = value.strip()
    if required and not value:
        return "", f"{name} is empty"
    if len(value) > limit:
        return "", f"{name} is longer than {limit} characters"
    return value, ""


def _row(value: object) -> tuple[EvidenceQuestion | None, str]:
    if not isinstance(value, dict):
        return None, "expected a JSON object"
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        return None, f"unknown key {unknown[0]!r}; the keys are {', '.join(KEYS)}"
    missing = [k for k in ("passage", "question", "answers") if k not in value]
    if missing:
        return None, f"{missing[0]!r} is missing"
    passage, problem = _text(value["passage"], "the passage", MAX_PASSAGE)
    if problem:
        return None, problem
    question, problem = _text(value["question"], "the question", MAX_QUESTION)
    if problem:
        return None, problem
    answers = value["answers"]
    if not isinstance(answers, list) or len(answers) != 2:
        return None, "answers must be a list of exactly two answers"
    texts = []
    for index, answer in enumerate(answers):
        text, problem = _text(answer, f"answer {index}", MAX_ANSWER)
        if problem:
            return None, problem
        texts.append(text)
    if texts[0] == texts[1]:
        return None, "the two answers are the same"
    correct = value.get("correct")
    if correct is not None and (isinstance(correct, bool) or correct not in (0, 1)):
        return None, f"correct must be 0, 1 or null, not {json.dumps(correct)}"
    return EvidenceQuestion(passage, question, (texts[0], texts[1]), correct), ""


def parse_jsonl(text: str, name: str = "the questions") -> list[EvidenceQuestion]:
    found: list[EvidenceQuestion] = []
    problems: list[str] = []
    for number, value in json_lines(text, problems, f"{name} "):
        question, problem = _row(value)
        if question is None:
            problems.append(f"{name} line {number}: {problem}")
        else:
            found.append(question)
    return finish(found, problems, MAX_QUESTIONS, "an experiment", f"{name}: ")


def parse_file(name: str, data: bytes) -> list[EvidenceQuestion]:
    """An uploaded or named `.jsonl` file, UTF-8, at most MAX_BYTES."""
    if not name.lower().endswith((".jsonl", ".ndjson")):
        raise QuestionsError([f"{name}: a question set is a .jsonl file"])
    return parse_jsonl(decode(name, data, MAX_BYTES), name)


def sample() -> list[EvidenceQuestion]:
    """The project's own sample set: a dozen short invented passages, each question answerable only from its passage."""
    return parse_file(SAMPLE.name, SAMPLE.read_bytes())
