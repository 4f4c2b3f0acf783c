"""The generated arithmetic set: the same questions for the same seed, each gold answer the printed expression's
value (Python's own evaluation here is the independent computation), and the shapes of docs/experiments.md."""

import re

import pytest

from comparisons.arithmetic import generate
from comparisons.question_sets import MAX_QUESTIONS, NUMERIC, grade, parse_answer

SHAPES = {
    1: re.compile(r"What is the result of (\d+)\+(\d+)\?"),
    2: re.compile(r"What is the result of (\d+)\+(\d+)\*(\d+)-(\d+)\?"),
    3: re.compile(r"What is the result of (\d+)\+(\d+)\*(\d+)\+(\d+)-(\d+)\*(\d+)\?"),
}
LARGEST = {1: 9, 2: 29, 3: 29}


def expression(question):
    return question.question.removeprefix("What is the result of ").removesuffix("?")


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_every_gold_answer_is_the_printed_expressions_value(difficulty):
    questions = generate(500, difficulty, seed=11)
    for q in questions:
        assert q.kind == NUMERIC
        assert re.fullmatch(r"[0-9+*-]+", expression(q))
        value = eval(expression(q), {"__builtins__": {}})
        assert q.answer == str(value) and q.value == value
        assert grade(q, str(value)) and not grade(q, str(value + 1))


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_each_difficulty_has_its_shape_and_draws_every_number_of_its_range(difficulty):
    questions = generate(2000, difficulty, seed=3)
    drawn = set()
    for q in questions:
        match = SHAPES[difficulty].fullmatch(q.question)
        assert match, q.question
        drawn |= {int(n) for n in match.groups()}
    assert drawn == set(range(LARGEST[difficulty] + 1))


def test_the_same_seed_draws_the_same_questions_and_a_larger_draw_begins_with_a_smaller():
    assert generate(50, 3, seed=7) == generate(50, 3, seed=7)
    assert generate(200, 3, seed=7)[:50] == generate(50, 3, seed=7)
    assert [q.question for q in generate(50, 3, seed=7)] != [q.question for q in generate(50, 3, seed=8)]
    assert [q.id for q in generate(3, 1)] == ["1", "2", "3"]


def test_a_reply_in_du_et_al_s_words_is_read_and_graded():
    question = generate(1, 3, seed=0)[0]
    reply = f"Working it out step by step, the result of {expression(question)} is {question.answer}."
    assert grade(question, parse_answer(question, reply))


@pytest.mark.parametrize(
    ("count", "difficulty", "message"),
    [
        (10, 4, "There is no difficulty 4; the difficulties are 1, 2 and 3."),
        (0, 1, "An arithmetic set has 1 to 10,000 questions, not 0."),
        (MAX_QUESTIONS + 1, 1, "An arithmetic set has 1 to 10,000 questions, not 10001."),
    ],
)
def test_a_difficulty_or_size_out_of_range_is_refused(count, difficulty, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        generate(count, difficulty)
