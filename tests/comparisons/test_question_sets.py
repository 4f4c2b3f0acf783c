"""Question sets with known answers: each kind from its fields, JSONL and CSV alike, every bad row refused with its
line and field, the grading rules of docs/experiments.md, and answers read from free text."""

import json
from fractions import Fraction

import pytest

from comparisons.question_sets import (
    MAX_QUESTIONS,
    MULTIPLE_CHOICE,
    NUMERIC,
    SHORT_ANSWER,
    GoldQuestion,
    Problem,
    QuestionSetError,
    answer_key,
    grade,
    normalise,
    number,
    parse_answer,
    read_csv,
    read_file,
    read_jsonl,
    sample,
)


def jsonl(*rows):
    return "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows)


def refused(read, text, name="set.jsonl"):
    with pytest.raises(QuestionSetError) as raised:
        read(text, name)
    return raised.value


CAPITAL = GoldQuestion("1", "What is the capital of France?", MULTIPLE_CHOICE, "B", ("Lyon", "Paris", "Nice"))
SUM = GoldQuestion("2", "What is 1000+234?", NUMERIC, "1,234", value=Fraction(1234))
THIRD = GoldQuestion("3", "What is one third as a decimal?", NUMERIC, "0.333333", value=Fraction(333333, 10**6))
BAND = GoldQuestion("4", "Which band recorded Abbey Road?", SHORT_ANSWER, "The Beatles")


# -- reading ---------------------------------------------------------------------------------------------------------
def test_each_kind_follows_from_its_fields_in_jsonl():
    text = jsonl(
        {"question": "What is the capital of France?", "choices": ["Lyon", "Paris", "Nice"], "answer": "b"},
        {"id": "sum", "question": "What is 1000+234?", "answer": "1,234"},
        {"question": "What is half of 3?", "answer": 1.5, "material": "| x | y |\n|---|---|\n| 3 | 1.5 |"},
        "",
        {"question": "Which band recorded Abbey Road?", "answer": " The Beatles "},
        {"question": "Which is larger?", "choices": ["ten", "two"], "answer": "TEN"},
    )
    assert read_jsonl(text) == [
        GoldQuestion("1", "What is the capital of France?", MULTIPLE_CHOICE, "B", ("Lyon", "Paris", "Nice")),
        GoldQuestion("sum", "What is 1000+234?", NUMERIC, "1,234", value=Fraction(1234)),
        GoldQuestion(
            "3",
            "What is half of 3?",
            NUMERIC,
            "1.5",
            material="| x | y |\n|---|---|\n| 3 | 1.5 |",
            value=Fraction(3, 2),
        ),
        # A blank line is skipped; a default id is the question's line.
        GoldQuestion("5", "Which band recorded Abbey Road?", SHORT_ANSWER, "The Beatles"),
        # An answer may be a choice's text, compared as a short answer is.
        GoldQuestion("6", "Which is larger?", MULTIPLE_CHOICE, "A", ("ten", "two")),
    ]


def test_csv_reads_as_jsonl_does_with_choices_in_one_cell_and_a_quoted_passage_over_lines():
    text = (
        "id,question,choices,answer,material\n"
        'c1,"What is the capital of France?",Lyon|Paris|Nice,Paris,\n'
        'c2,What is 6 times 7?,,42,"A passage\nover two lines"\n'
        "c3,Which band recorded Abbey Road?,,The Beatles,\n"
    )
    assert read_csv(text) == [
        GoldQuestion("c1", "What is the capital of France?", MULTIPLE_CHOICE, "B", ("Lyon", "Paris", "Nice")),
        GoldQuestion(
            "c2", "What is 6 times 7?", NUMERIC, "42", material="A passage\nover two lines", value=Fraction(42)
        ),
        GoldQuestion("c3", "Which band recorded Abbey Road?", SHORT_ANSWER, "The Beatles"),
    ]


def test_every_bad_row_of_jsonl_is_refused_with_its_line_and_field_all_at_once():
    good = {"question": "What is 2+2?", "answer": 4}
    error = refused(
        read_jsonl,
        jsonl(
            good,
            "{not json",
            {"question": "Pick one", "choices": ["x", "y"], "answer": "C"},
            {"question": "Pick one", "choices": ["x"], "answer": "x"},
            {"question": "Pick one", "choices": ["x", " X! "], "answer": "x"},
            {"question": "Pick one", "choices": ["x", ""], "answer": "A"},
            {"question": "Pick one", "choices": ["B", "C"], "answer": "B"},
            {"answer": "y"},
            {"question": "  ", "answer": "y", "colour": "red"},
            {"question": "Which?", "answer": "the"},
            {"question": "How long?", "answer": 1.5, "material": "x" * 40_001},
            {"id": "1", "question": "Again?", "answer": "yes"},
            [1, 2],
            {"question": "Which?", "answer": True},
            {"question": "What?", "answer": "y", "choices": "x|y"},
        ),
    )
    assert error.rows == [
        Problem(2, "", "not valid JSON (Expecting property name enclosed in double quotes)"),
        Problem(3, "answer", "'C' is neither a choice's letter (A-B) nor its text"),
        Problem(4, "choices", "there are 1; a question has 2 to 10 choices"),
        Problem(5, "choices", "choices A and B are the same"),
        Problem(6, "choices", "choice B is empty"),
        Problem(7, "answer", "'B' is both the letter B and the text of choice A"),
        Problem(8, "question", "is missing"),
        Problem(9, "colour", "unknown field; the fields are id, question, choices, answer, material"),
        Problem(10, "answer", "'the' is empty once punctuation and articles are removed"),
        Problem(11, "material", "is longer than 40,000 characters"),
        Problem(12, "id", "'1' is line 1's id too"),
        Problem(13, "", "expected a JSON object"),
        Problem(14, "answer", "must be text"),
        Problem(15, "choices", "must be a list of texts"),
    ]
    assert error.problems[:3] == [
        "set.jsonl line 2: not valid JSON (Expecting property name enclosed in double quotes)",
        "set.jsonl line 3: answer: 'C' is neither a choice's letter (A-B) nor its text",
        "set.jsonl line 4: choices: there are 1; a question has 2 to 10 choices",
    ]


def test_a_row_with_an_unknown_field_and_an_empty_question_reports_both():
    error = refused(read_jsonl, jsonl({"question": " ", "answer": "y"}, {"question": "q", "answer": "y", "hint": 1}))
    assert error.rows == [
        Problem(1, "question", "is empty"),
        Problem(2, "hint", "unknown field; the fields are id, question, choices, answer, material"),
    ]


def test_a_bad_csv_row_is_named_by_the_line_it_starts_on_after_a_passage_over_lines():
    text = (
        'question,answer,material\nWhat is 6 times 7?,42,"line one\nline two\nline three"\nWhich?,the,\nExtra?,1,2,3\n'
    )
    assert refused(read_csv, text, "set.csv").rows == [
        Problem(5, "answer", "'the' is empty once punctuation and articles are removed"),
        Problem(6, "", "4 cells; the header has 3 columns"),
    ]


def test_a_csv_header_without_the_answer_or_with_an_unknown_column_is_refused():
    assert refused(read_csv, "question,hint\nq,h\n", "set.csv").problems == [
        "set.csv line 1: hint: unknown column; the columns are id, question, choices, answer, material",
        "set.csv line 1: answer: the header has no such column",
    ]


@pytest.mark.parametrize(
    ("name", "data", "problem"),
    [
        ("set.txt", b"question,answer", "set.txt: a question set is a .jsonl or .csv file"),
        ("set.csv", b"\xff\xfe", "set.csv: the file is not UTF-8 text"),
        ("set.jsonl", b"\n\n", "set.jsonl: there are no questions"),
        ("set.csv", b"question,answer\n", "set.csv: there are no questions"),
        ("big.jsonl", b" " * (16 * 1024 * 1024 + 1), "big.jsonl: the file is larger than 16 MB"),
    ],
)
def test_files_that_are_not_a_question_set_are_refused(name, data, problem):
    with pytest.raises(QuestionSetError) as raised:
        read_file(name, data)
    assert raised.value.problems == [problem]


def test_a_set_holds_at_most_its_limit_of_questions():
    text = "\n".join(json.dumps({"question": "q", "answer": i}) for i in range(MAX_QUESTIONS + 1))
    assert refused(read_jsonl, text).rows == [Problem(None, "", "there are 10,001 questions; a set has at most 10,000")]
    assert len(read_jsonl(text.rsplit("\n", 1)[0])) == MAX_QUESTIONS


def test_a_file_is_read_by_its_name_and_a_byte_order_mark_is_dropped():
    data = "\ufeffquestion,answer\nWhat is 2+2?,4\n".encode()
    assert read_file("Set.CSV", data) == [GoldQuestion("2", "What is 2+2?", NUMERIC, "4", value=Fraction(4))]


# -- grading ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "right"),
    [
        ("1234", True),
        ("1,234", True),
        ("1234.0", True),
        (" +1234 ", True),
        (1234, True),
        (1234.0, True),
        ("2468/2", True),
        ("1.234e3", True),
        ("1234.0001", False),  # an integer gold answer is matched exactly
        ("1,23,4", False),
        ("12,34", False),
        ("1234 apples", False),
        ("", False),
        (None, False),
        (True, False),
    ],
)
def test_a_numeric_answer_is_compared_by_value_exactly_for_an_integer(given, right):
    assert grade(SUM, given) is right


@pytest.mark.parametrize(
    ("given", "right"),
    [
        ("0.333333", True),
        ("0.3333333", True),  # within a relative 1e-6 of 0.333333
        ("0.333333333333", True),  # 0.333333 and one millionth of it: the edge, included
        ("1/3", False),  # 1/3 - 0.333333 = 1/3,000,000: just over a millionth of 0.333333
        ("0.333334", False),  # 1e-6 away: three times the tolerance
        ("0.3333", False),
    ],
)
def test_a_decimal_answer_is_matched_within_a_relative_one_millionth(given, right):
    assert grade(THIRD, given) is right


def test_negative_numbers_and_the_unicode_minus():
    question = GoldQuestion("n", "What is 3-15?", NUMERIC, "-12", value=Fraction(-12))
    assert [grade(question, g) for g in ("-12", "\u221212", "12", "-12.00")] == [True, True, False, True]
    assert number("3/0") is None and number("nan") is None and number(float("inf")) is None


@pytest.mark.parametrize(
    ("given", "right"),
    [("B", True), ("b", True), ("(B)", True), ("B)", True), ("B.", True), ("paris", True), ("Paris!", True)],
)
def test_a_multiple_choice_answer_by_letter_or_by_its_text(given, right):
    assert grade(CAPITAL, given) is right


@pytest.mark.parametrize("given", ["A", "D", "Lyon", "Paris, France", "", "BB"])
def test_a_multiple_choice_answer_naming_another_choice_or_none_is_wrong(given):
    assert grade(CAPITAL, given) is False


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Beatles", "beatles"),
        ("  the   BEATLES!! ", "beatles"),
        ("A cat, an apple & the dog.", "cat apple dog"),
        ("Theatre", "theatre"),  # an article only as a whole word
        ("\u201cRock\u2019n\u2019roll\u201d \u2014 yes", "rocknroll yes"),  # Unicode punctuation too
        ("New\tYork\nCity", "new york city"),
    ],
)
def test_short_answers_are_normalised_as_squad_does(text, normalised):
    assert normalise(text) == normalised


def test_a_short_answer_is_right_when_equal_once_normalised():
    # An article goes wherever it stands, so "Beatles, The" is right too (as SQuAD's rule has it).
    assert [grade(BAND, g) for g in ("beatles", "THE BEATLES.", "Beatles, The", "the beatle", None)] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_equal_answers_share_a_key_for_counting_votes():
    assert {answer_key(SUM, g) for g in ("1234", "1,234", "1234.0", 1234)} == {"1234"}
    assert answer_key(THIRD, "0.5") == "1/2"
    assert {answer_key(CAPITAL, g) for g in ("b", "Paris", "(B)")} == {"B"}
    assert answer_key(CAPITAL, "Rome") is None
    assert answer_key(BAND, "The Beatles!") == "beatles"
    assert answer_key(SUM, "many") is None and answer_key(BAND, None) is None


# -- answers read from free text -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "read"),
    [
        ("1000 + 234 = 1,234. So the total is 1,234.", "1234"),
        ("First 3-4 = -1, then the answer is -12. Check: 3-15", "-12"),
        ("Adding gives \\boxed{1234} in the end, not 99.", "1234"),
        ("My answer is the same as the other agents: the result of 12+28*19+6 is 550.", "550"),
        ("I cannot tell.", None),
    ],
)
def test_a_numeric_reply_gives_its_stated_answer_else_its_last_number(reply, read):
    assert parse_answer(SUM, reply) == read


@pytest.mark.parametrize(
    ("reply", "read"),
    [
        ("The answer is (B).", "B"),
        ("Answer: b", "B"),
        ("Lyon is too far south, so the answer is B because Paris is the capital.", "B"),
        ("I weighed (A) against it; I settle on (B)", "B"),
        ("B. Paris is the seat of government.", "B"),
        ("It must be Paris, of course.", "B"),
        ("Either Paris or Lyon.", None),
        ("The answer is (D).", None),
    ],
)
def test_a_multiple_choice_reply_gives_a_letter(reply, read):
    assert parse_answer(CAPITAL, reply) == read


@pytest.mark.parametrize(
    ("reply", "read"),
    [
        ("Answer: **The Beatles**. They recorded it in 1969.", "The Beatles"),
        ("I think the answer is the Beatles.", "the Beatles"),
        ("The Beatles", "The Beatles"),
        ("   ", None),
    ],
)
def test_a_short_answer_reply_gives_its_stated_sentence(reply, read):
    assert parse_answer(BAND, reply) == read


# -- the shipped sample ----------------------------------------------------------------------------------------------
def test_the_multiple_choice_sample_reads_with_one_right_choice_each_spread_over_the_letters():
    questions = sample()
    assert 20 <= len(questions) <= 30
    assert {q.kind for q in questions} == {MULTIPLE_CHOICE}
    assert len({q.id for q in questions}) == len(questions)
    letters = [q.answer for q in questions]
    assert {letters.count(letter) for letter in "ABCD"} == {len(questions) // 4}
    for q in questions:
        right = q.choices[q.letters.index(q.answer)]
        assert grade(q, right) and grade(q, q.answer)
        assert [grade(q, c) for c in q.choices].count(True) == 1
    with_material = [q for q in questions if q.material]
    assert len(with_material) == 2 and any(q.material.startswith("| Town |") for q in with_material)
