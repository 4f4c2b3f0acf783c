"""Questions typed in, or uploaded as CSV or JSONL: bad rows named by line, nothing imported on error."""

import pytest

from tournaments.questions import QuestionsError, QuestionSpec, parse_csv, parse_file, parse_jsonl, parse_lines


def test_typed_lines_with_optional_premise_and_correct_side():
    text = "Should cities ban cars?\n\nIs tea better than coffee? | Tea is better | FOR\n  Is the earth round? || for\n"
    assert parse_lines(text) == [
        QuestionSpec("Should cities ban cars?"),
        QuestionSpec("Is tea better than coffee?", "Tea is better", "for"),
        QuestionSpec("Is the earth round?", "", "for"),
    ]


def test_csv_with_a_header_and_quoted_commas():
    text = 'topic,premise,correct\n"Cars, or not?",Ban them,against\nTea?,,\n'
    assert parse_csv(text) == [QuestionSpec("Cars, or not?", "Ban them", "against"), QuestionSpec("Tea?")]


def test_csv_errors_name_every_bad_line_and_nothing_is_imported():
    text = "topic,correct\nGood one,for\n,for\nAnother,maybe\nToo,many,cells\n"
    with pytest.raises(QuestionsError) as caught:
        parse_csv(text)
    assert caught.value.problems == [
        "line 3: the topic is empty",
        "line 4: correct must be 'for', 'against' or empty, not 'maybe'",
        "line 5: 3 columns, the header has 2",
    ]


def test_csv_without_a_topic_column_is_refused_at_line_one():
    with pytest.raises(QuestionsError, match="line 1: the header must name the columns"):
        parse_csv("question,answer\nx,y\n")


def test_jsonl_errors_name_their_lines():
    text = (
        '{"topic": "A"}\nnot json\n["a list"]\n{"topic": "B", "colour": "red"}\n{"topic": "C", "correct": "against"}\n'
    )
    with pytest.raises(QuestionsError) as caught:
        parse_jsonl(text)
    assert [p.split(":")[0] for p in caught.value.problems] == ["line 2", "line 3", "line 4"]
    assert parse_jsonl('{"topic": "A", "premise": "P", "correct": null}\n') == [QuestionSpec("A", "P", "")]


def test_files_by_extension_size_and_encoding():
    assert parse_file("q.csv", b"\xef\xbb\xbftopic\nA\n") == [QuestionSpec("A")]
    assert parse_file("q.jsonl", b'{"topic": "A"}') == [QuestionSpec("A")]
    with pytest.raises(QuestionsError, match=r"end in \.csv or \.jsonl"):
        parse_file("q.txt", b"A")
    with pytest.raises(QuestionsError, match="not UTF-8"):
        parse_file("q.csv", b"topic\n\xff\n")
    with pytest.raises(QuestionsError, match="larger than"):
        parse_file("q.csv", b"x" * (1024 * 1024 + 1))
    with pytest.raises(QuestionsError, match="no questions"):
        parse_file("q.csv", b"topic\n")
