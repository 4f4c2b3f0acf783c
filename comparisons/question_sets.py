"""Question sets with known answers, for comparing protocols: multiple-choice, numeric and short-answer questions,
each with optional material (a passage, a table as text), read from JSONL or CSV, graded by a documented rule.

    {"id": "q1", "question": "...", "choices": ["...", "..."], "answer": "B", "material": "..."}

The kind follows from the fields: with `choices` it is multiple choice (the answer a choice's letter or its text);
else a numeric answer makes it numeric; else it is a short answer. Every bad row is refused with its line and
field, all at once (`QuestionSetError.rows`), and nothing is read when any row is bad. docs/experiments.md has the
format, the limits and the grading rules for readers. Pure: no Django.
"""

from __future__ import annotations

import csv
import io
import json
import re
import string
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

from batches.questions import QuestionsError, size_text

MULTIPLE_CHOICE = "multiple_choice"
NUMERIC = "numeric"
SHORT_ANSWER = "short_answer"
KINDS = (MULTIPLE_CHOICE, NUMERIC, SHORT_ANSWER)

KEYS = ("id", "question", "choices", "answer", "material")
REQUIRED = ("question", "answer")
LETTERS = "ABCDEFGHIJ"
MIN_CHOICES = 2
MAX_CHOICES = len(LETTERS)
MAX_QUESTIONS = 10_000
MAX_BYTES = 16 * 1024 * 1024
MAX_ID = 100
MAX_QUESTION = 4_000
MAX_CHOICE = 1_000
MAX_ANSWER = 1_000
MAX_MATERIAL = 40_000
# A decimal gold answer matches within this share of its value; an integer one only exactly (docs/experiments.md).
RELATIVE_TOLERANCE = Fraction(1, 10**6)
CSV_CHOICES = "|"  # a CSV cell's choices are separated by this; a choice holding it is written in JSONL
SAMPLE = Path(__file__).resolve().parent / "samples" / "multiple-choice-sample.jsonl"


@dataclass(frozen=True)
class GoldQuestion:
    """A question with its gold answer: for multiple choice the choice's letter, for a numeric one its text as given
    (`value` the exact number), for a short answer its text."""

    id: str
    question: str
    kind: str
    answer: str
    choices: tuple[str, ...] = ()
    material: str = ""
    value: Fraction | None = None  # a numeric question's gold answer, exact

    @property
    def letters(self) -> str:
        """The letters the choices are shown under: "ABCD" for four."""
        return LETTERS[: len(self.choices)]


class Problem(NamedTuple):
    """One bad row's problem; `line` None and `field` "" for a problem of the whole file."""

    line: int | None
    field: str
    message: str


class QuestionSetError(QuestionsError):
    """Every problem found: `rows` as (line, field, message), `problems` as the sentences a page lists."""

    def __init__(self, rows: list[Problem], name: str = "the questions") -> None:
        self.rows = rows
        super().__init__([_sentence(name, row) for row in rows])


def _sentence(name: str, row: Problem) -> str:
    if row.line is None:
        return f"{name}: {row.message}"
    return (
        f"{name} line {row.line}: {row.field}: {row.message}" if row.field else f"{name} line {row.line}: {row.message}"
    )


__all__ = [
    "KINDS",
    "MAX_BYTES",
    "MAX_QUESTIONS",
    "GoldQuestion",
    "Problem",
    "QuestionSetError",
    "answer_key",
    "grade",
    "normalise",
    "number",
    "parse_answer",
    "read_csv",
    "read_file",
    "read_jsonl",
    "read_rows",
    "sample",
]


# -- normalising and numbers -----------------------------------------------------------------------------------------
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalise(text: str) -> str:
    """A short answer as it is compared (SQuAD's rule): lower case, punctuation removed (ASCII and Unicode), the
    articles a, an and the removed, runs of whitespace made one space, ends stripped."""
    text = "".join(
        " " if unicodedata.category(c).startswith("Z") else c
        for c in text.lower()
        if c not in string.punctuation and not unicodedata.category(c).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", text).split())


# An optional sign, then a fraction (3/4), or digits with commas between groups of three (1,234,567) or without,
# an optional decimal part and exponent (12.5, .5, 1e3). The exponent has at most three digits: 1e999999999 would
# be a number of a billion digits, worked out exactly.
_NUMBER = re.compile(
    r"[+-]?(?:\d+/\d+|(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d{1,3})?|\.\d+(?:[eE][+-]?\d{1,3})?)"
)
_MINUSES = str.maketrans({"\u2212": "-", "\u2013": "-"})


def number(given: object) -> Fraction | None:
    """The exact value of a number written as text ("1,234", "12.0", "-3", "3/4", "1e3", a Unicode minus) or given
    as an int or a float (read as its shortest decimal: 0.1 is one tenth); None for anything else."""
    if isinstance(given, bool):
        return None
    if isinstance(given, int):
        return Fraction(given)
    if isinstance(given, float):
        return Fraction(repr(given)) if given == given and abs(given) != float("inf") else None
    if not isinstance(given, str):
        return None
    text = given.strip().translate(_MINUSES)
    if not _NUMBER.fullmatch(text):
        return None
    try:
        if "/" in text:
            top, bottom = text.split("/")
            return None if int(bottom) == 0 else Fraction(int(top), int(bottom))
        return Fraction(text.replace(",", ""))
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        return None


def _matches_number(gold: Fraction, given: Fraction) -> bool:
    if gold.denominator == 1:
        return given == gold
    return abs(given - gold) <= RELATIVE_TOLERANCE * abs(gold)


def _canonical_number(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


# -- grading ---------------------------------------------------------------------------------------------------------
_LETTER = re.compile(r"\(?([A-Za-z])[).:]?")


def _choice(question: GoldQuestion, given: str) -> str | None:
    """The letter a multiple-choice answer names: a letter ("B", "b", "(B)", "B)", "B.") or a choice's text, compared
    normalised; None when it names none."""
    given = given.strip()
    letter = _LETTER.fullmatch(given)
    if letter and letter.group(1).upper() in question.letters:
        return letter.group(1).upper()
    wanted = normalise(given)
    for letter_of, text in zip(question.letters, question.choices, strict=True):
        if wanted and normalise(text) == wanted:
            return letter_of
    return None


def answer_key(question: GoldQuestion, given: object) -> str | None:
    """A given answer in the form equal answers share, for counting votes: a choice's letter, a number reduced
    ("12.0" and "12" are "12", "0.5" is "1/2"), a short answer normalised; None when it is no answer of the kind."""
    if given is None:
        return None
    if question.kind == MULTIPLE_CHOICE:
        return _choice(question, str(given))
    if question.kind == NUMERIC:
        value = number(given)
        return None if value is None else _canonical_number(value)
    return normalise(str(given)) or None


def grade(question: GoldQuestion, given: object) -> bool:
    """Whether `given` (text, or a number for a numeric question; None: no answer) is the gold answer. Multiple
    choice: by letter or by a choice's text; numeric: by value, exactly for an integer gold answer, within a relative
    1e-6 for any other; short answer: equal once normalised (`normalise`)."""
    if given is None:
        return False
    if question.kind == NUMERIC:
        value = number(given)
        return value is not None and question.value is not None and _matches_number(question.value, value)
    if question.kind == MULTIPLE_CHOICE:
        return _choice(question, str(given)) == question.answer
    return normalise(str(given)) == normalise(question.answer)


# -- answers from free text ------------------------------------------------------------------------------------------
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
# "The answer is (B)", "Answer: 42", "**Final answer:** Paris": the last one in the reply counts.
_SAID = re.compile(r"\banswer\b\s*(?:is\b)?\s*[:=]?\s*(?:\*\*)?\s*(?P<said>[^\n]*)", re.IGNORECASE)
# The end of a sentence: a full stop, ! or ? after a word, a closing mark or Markdown bold, then a space or the end.
_SENTENCE_END = re.compile(r"(?<=[\w*\"')\]])[.!?](?:\s|$)")
# A number in running text: a minus only where it is no subtraction ("3-4" holds 3 and 4; "is -12", -12).
_IN_TEXT = re.compile(
    r"(?:(?<![\w)\]])-)?(?<![\w.])(?:\d+/\d+|(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d{1,3})?|\.\d+)(?![\w/])"
)
_PARENTHESISED = re.compile(r"\(([A-J])\)")
_LEADING = re.compile(r"\(?([A-J])(?:[.):]|$)")
_LEADING_SAID = re.compile(r"\(?([A-J])\b")
_DECORATION = " *\"'`"


def _said(text: str) -> str | None:
    boxed = _BOXED.findall(text)
    if boxed:
        return boxed[-1].strip()
    said = [m.group("said").strip() for m in _SAID.finditer(text)]
    said = [s for s in said if s.strip(_DECORATION)]
    return said[-1] if said else None


def _numbers_in(text: str) -> list[str]:
    return [m.group(0).replace(",", "") for m in _IN_TEXT.finditer(text.translate(_MINUSES))]


def parse_answer(question: GoldQuestion, text: str) -> str | None:
    """The answer a free-text reply gives, for `grade`, or None when it gives none.

    What the reply says in its last \\boxed{...}, else after its last "answer is" or "answer:" (the said part), else
    the whole reply. Numeric: the last number in the said part's first sentence, else the reply's last number (Du et
    al.'s reading).
    Multiple choice: the said part as a letter or a choice's text; in a reply with no said part, its last "(X)",
    else a letter that starts it ("B.", "(B)"), else the one choice whose text it holds. Short answer: the said part
    (else the reply) up to its first full stop, without Markdown bold or quotes around it."""
    said = _said(text)
    if question.kind == NUMERIC:
        found = _numbers_in(_first_sentence(said)) if said is not None else []
        found = found or _numbers_in(text)
        return found[-1] if found else None
    where = (said if said is not None else text).strip().strip(_DECORATION)
    if not where:
        return None
    if question.kind == MULTIPLE_CHOICE:
        return _choice_in(question, where, said is not None)
    return _first_sentence(where).strip(_DECORATION) or None


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text, maxsplit=1)[0]


def _choice_in(question: GoldQuestion, text: str, said: bool) -> str | None:
    whole = _choice(question, text.rstrip("."))
    if whole is not None:
        return whole
    parenthesised = [] if said else [m for m in _PARENTHESISED.findall(text) if m in question.letters]
    if parenthesised:
        return parenthesised[-1]
    start = (_LEADING_SAID if said else _LEADING).match(text)
    if start and start.group(1) in question.letters:
        return start.group(1)
    wanted = f" {normalise(text)} "
    held = [
        letter
        for letter, choice in zip(question.letters, question.choices, strict=True)
        if normalise(choice) and f" {normalise(choice)} " in wanted
    ]
    return held[0] if len(held) == 1 else None


# -- reading a row ---------------------------------------------------------------------------------------------------
def _text(value: object, name: str, limit: int, problems: list[tuple[str, str]]) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        problems.append((name, "must be text"))
        return ""
    text = value.strip() if isinstance(value, str) else json.dumps(value)
    if not text:
        problems.append((name, "is empty"))
    elif len(text) > limit:
        problems.append((name, f"is longer than {limit:,} characters"))
    return text


def _choices(value: object, problems: list[tuple[str, str]]) -> tuple[str, ...]:
    if not isinstance(value, list):
        problems.append(("choices", "must be a list of texts"))
        return ()
    if not MIN_CHOICES <= len(value) <= MAX_CHOICES:
        problems.append(("choices", f"there are {len(value)}; a question has {MIN_CHOICES} to {MAX_CHOICES} choices"))
        return ()
    texts = []
    for index, item in enumerate(value):
        found: list[tuple[str, str]] = []
        text = _text(item, "choices", MAX_CHOICE, found)
        problems.extend((field, f"choice {LETTERS[index]} {message}") for field, message in found)
        texts.append(text)
    seen: dict[str, int] = {}
    for index, text in enumerate(texts):
        key = normalise(text)
        if key and key in seen:
            problems.append(("choices", f"choices {LETTERS[seen[key]]} and {LETTERS[index]} are the same"))
        seen.setdefault(key, index)
    return tuple(texts)


def _mc_answer(answer: str, choices: tuple[str, ...], problems: list[tuple[str, str]]) -> str:
    letters = LETTERS[: len(choices)]
    by_text = [
        letters[i] for i, choice in enumerate(choices) if normalise(choice) and normalise(choice) == normalise(answer)
    ]
    letter = answer.upper() if len(answer) == 1 and answer.upper() in letters else None
    if letter and by_text and by_text[0] != letter:
        problems.append(("answer", f"{answer!r} is both the letter {letter} and the text of choice {by_text[0]}"))
        return ""
    if letter or by_text:
        return letter or by_text[0]
    problems.append(("answer", f"{answer!r} is neither a choice's letter ({letters[0]}-{letters[-1]}) nor its text"))
    return ""


def _row(value: object, line: int, problems: list[tuple[str, str]]) -> GoldQuestion | None:
    if not isinstance(value, dict):
        problems.append(("", "expected a JSON object"))
        return None
    for key in sorted(set(value) - set(KEYS), key=str):
        problems.append((str(key), f"unknown field; the fields are {', '.join(KEYS)}"))
    for key in REQUIRED:
        if value.get(key) is None:
            problems.append((key, "is missing"))
    if problems:
        return None
    question = _text(value["question"], "question", MAX_QUESTION, problems)
    raw = value["answer"]
    answer = _text(raw, "answer", MAX_ANSWER, problems)
    identity = str(line) if value.get("id") in (None, "") else _text(value["id"], "id", MAX_ID, problems)
    material = (
        "" if value.get("material") in (None, "") else _text(value["material"], "material", MAX_MATERIAL, problems)
    )
    choices = () if value.get("choices") in (None, "") else _choices(value["choices"], problems)
    if problems or not answer:
        return None
    if choices:
        letter = _mc_answer(answer, choices, problems)
        return GoldQuestion(identity, question, MULTIPLE_CHOICE, letter, choices, material) if letter else None
    gold = number(raw) if isinstance(raw, int | float) else number(answer)
    if isinstance(raw, float) and gold is None:
        problems.append(("answer", "is not a finite number"))
        return None
    if gold is not None:
        return GoldQuestion(identity, question, NUMERIC, answer, (), material, gold)
    if not normalise(answer):
        problems.append(("answer", f"{answer!r} is empty once punctuation and articles are removed"))
        return None
    return GoldQuestion(identity, question, SHORT_ANSWER, answer, (), material)


def _read(rows: Iterator[tuple[int, Any]], found_problems: list[Problem], name: str) -> list[GoldQuestion]:
    found: list[GoldQuestion] = []
    lines: dict[str, int] = {}
    for line, value in rows:
        problems: list[tuple[str, str]] = []
        question = _row(value, line, problems)
        if question is not None and question.id in lines:
            problems.append(("id", f"{question.id!r} is line {lines[question.id]}'s id too"))
        found_problems.extend(Problem(line, field, message) for field, message in problems)
        if question is not None and not problems:
            lines[question.id] = line
            found.append(question)
    if not found and not found_problems:
        found_problems.append(Problem(None, "", "there are no questions"))
    if len(found) > MAX_QUESTIONS:
        found_problems.append(
            Problem(None, "", f"there are {len(found):,} questions; a set has at most {MAX_QUESTIONS:,}")
        )
    if found_problems:
        raise QuestionSetError(found_problems, name)
    return found


def _json_rows(text: str, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            yield line, json.loads(raw)
        except json.JSONDecodeError as error:
            problems.append(Problem(line, "", f"not valid JSON ({error.msg})"))


def read_jsonl(text: str, name: str = "the questions") -> list[GoldQuestion]:
    """A question set written one JSON object a line (blank lines skipped)."""
    problems: list[Problem] = []
    return _read(_json_rows(text, problems), problems, name)


def read_rows(rows: list[Any], name: str = "the questions") -> list[GoldQuestion]:
    """A question set given as a list of rows, each as a JSONL line's object (a spec's or an API body's
    `questions`); a problem names its row's place in the list as its line."""
    return _read(enumerate(rows, start=1), [], name)


def _csv_rows(text: str, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    end = 0
    for cells in reader:
        start, end = end + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in cells]
            for column in header:
                if column not in KEYS:
                    problems.append(Problem(start, column, f"unknown column; the columns are {', '.join(KEYS)}"))
            for column in REQUIRED:
                if column not in header:
                    problems.append(Problem(start, column, "the header has no such column"))
            if len(set(header)) != len(header):
                problems.append(Problem(start, "", "a column is named twice"))
            if problems:
                return
            continue
        if len(cells) > len(header):
            problems.append(Problem(start, "", f"{len(cells)} cells; the header has {len(header)} columns"))
            continue
        row: dict[str, Any] = {key: cell for key, cell in zip(header, cells, strict=False) if cell.strip()}
        if "choices" in row:
            row["choices"] = row["choices"].split(CSV_CHOICES)
        yield start, row
    if header is None:
        problems.append(Problem(None, "", "there are no questions"))


def read_csv(text: str, name: str = "the questions") -> list[GoldQuestion]:
    """A question set as CSV: a header naming its columns (question and answer, and any of id, choices, material),
    then a question a row; a row's choices in one cell separated by "|"; an empty cell is no value."""
    problems: list[Problem] = []
    try:
        return _read(_csv_rows(text, problems), problems, name)
    except csv.Error as error:
        raise QuestionSetError([*problems, Problem(None, "", f"not valid CSV ({error})")], name) from None


def read_file(name: str, data: bytes) -> list[GoldQuestion]:
    """An uploaded or named file: `.jsonl` (or `.ndjson`) or `.csv`, UTF-8, at most MAX_BYTES."""
    lower = name.lower()
    if not lower.endswith((".jsonl", ".ndjson", ".csv")):
        raise QuestionSetError([Problem(None, "", "a question set is a .jsonl or .csv file")], name)
    if len(data) > MAX_BYTES:
        raise QuestionSetError([Problem(None, "", f"the file is larger than {size_text(MAX_BYTES)}")], name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QuestionSetError([Problem(None, "", "the file is not UTF-8 text")], name) from None
    return read_csv(text, name) if lower.endswith(".csv") else read_jsonl(text, name)


def sample() -> list[GoldQuestion]:
    """The project's multiple-choice sample: general-knowledge questions of four choices with one right answer."""
    return read_file(SAMPLE.name, SAMPLE.read_bytes())
