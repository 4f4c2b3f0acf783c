"""An experiment's question set from JSONL: bad rows named by file and line, nothing imported on any error."""

import json

import pytest

from experiments.questions import EvidenceQuestion, QuestionsError, parse_file, parse_jsonl, sample


def line(**row):
    base = {"passage": "Pell was afraid of sheep.", "question": "What was Pell afraid of?"}
    base["answers"] = ["sheep", "deer"]
    return json.dumps({**base, **row})


def test_a_good_file_imports_every_question_with_its_passage_answers_and_correct_index():
    text = "\n".join([line(correct=0), "", line(correct=None, answers=[" deer ", "sheep"]), line()])
    found = parse_file("set.jsonl", text.encode())
    assert found == [
        EvidenceQuestion("Pell was afraid of sheep.", "What was Pell afraid of?", ("sheep", "deer"), 0),
        EvidenceQuestion("Pell was afraid of sheep.", "What was Pell afraid of?", ("deer", "sheep"), None),
        EvidenceQuestion("Pell was afraid of sheep.", "What was Pell afraid of?", ("sheep", "deer"), None),
    ]


def test_every_bad_row_is_named_by_file_and_line_and_nothing_is_imported():
    rows = [
        line(correct=1),
        "{not json",
        line(correct=2),
        line(answers=["only one"]),
        line(passage=""),
        line(colour="red"),
        json.dumps({"question": "q", "answers": ["a", "b"]}),
        line(answers=["same", "same "]),
        line(correct=True),
        "[1, 2]",
        line(passage="x" * 20_001),
    ]
    with pytest.raises(QuestionsError) as raised:
        parse_file("mine.jsonl", "\n".join(rows).encode())
    assert raised.value.problems == [
        "mine.jsonl line 2: not valid JSON (Expecting property name enclosed in double quotes)",
        "mine.jsonl line 3: correct must be 0, 1 or null, not 2",
        "mine.jsonl line 4: answers must be a list of exactly two answers",
        "mine.jsonl line 5: the passage is empty",
        "mine.jsonl line 6: unknown key 'colour'; the keys are passage, question, answers, correct",
        "mine.jsonl line 7: 'passage' is missing",
        "mine.jsonl line 8: the two answers are the same",
        "mine.jsonl line 9: correct must be 0, 1 or null, not true",
        "mine.jsonl line 10: expected a JSON object",
        "mine.jsonl line 11: the passage is longer than 20000 characters",
    ]


@pytest.mark.parametrize(
    ("name", "data", "problem"),
    [
        ("set.csv", b"passage,question", "set.csv: a question set is a .jsonl file"),
        ("set.jsonl", b"\xff\xfe", "set.jsonl is not UTF-8 text"),
        ("set.jsonl", b"\n\n", "set.jsonl: there are no questions"),
        ("big.jsonl", b" " * (4 * 1024 * 1024 + 1), "big.jsonl is larger than 4 MB"),
    ],
)
def test_files_that_are_not_a_question_set_are_refused(name, data, problem):
    with pytest.raises(QuestionsError) as raised:
        parse_file(name, data)
    assert raised.value.problems == [problem]


def test_the_default_name_when_pasted():
    with pytest.raises(QuestionsError, match="the questions line 1: expected a JSON object"):
        parse_jsonl("3")


def test_the_sample_set_is_a_dozen_passages_whose_answers_need_the_passage():
    questions = sample()
    assert len(questions) == 12
    assert {q.correct for q in questions} == {0, 1}
    for q in questions:
        assert q.correct is not None
        assert len(q.passage.split()) <= 80  # short: a small model reads it with room to argue
