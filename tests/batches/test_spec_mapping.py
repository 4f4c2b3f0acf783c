"""A batch's spec read from a mapping (the API's JSON body) as from its YAML file: the same messages, every
problem at once, and no file on the server read for it."""

from __future__ import annotations

import pytest

from batches.spec import SpecError, SpecErrors
from experiments import spec as experiment_spec
from tournaments import design
from tournaments import spec as tournament_spec

pytestmark = pytest.mark.django_db


def test_every_problem_of_a_tournament_spec_at_once_in_the_files_words(tmp_path):
    path = tmp_path / "cup.yaml"
    path.write_text("debaters: [Nobody]\njudges: 3\nrepeats: two\nformat: chess\n")
    with pytest.raises(SpecErrors) as raised:
        tournament_spec.read_spec(path)
    source = str(path)
    offered = design.formats()  # the built-ins a tournament runs, the default first
    assert raised.value.problems == [
        (
            "format",
            f"{source}: format: one of {', '.join(offered)}, or a list of them such as [{offered[0]}, {offered[-1]}]",
        ),
        (
            "debaters",
            f"{source}: debaters[1]: no persona is named 'Nobody' (known: none yet: run import_personas); "
            "or give a YAML file path",
        ),
        ("judges", f"{source}: judges: expected a list of persona names or YAML paths"),
        ("questions", f"{source}: give either questions or questions_file"),
        ("repeats", f"{source}: repeats: expected a whole number"),
    ]
    # The command line prints them all, one after another.
    assert str(raised.value) == "; ".join(message for _, message in raised.value.problems)


def test_a_mapping_without_a_folder_reads_no_file(tmp_path):
    secret = tmp_path / "persona.yaml"
    secret.write_text("name: Hidden\nrole: debater\n")
    with pytest.raises(SpecErrors) as raised:
        tournament_spec.from_mapping(
            {"debaters": [str(secret)], "questions_file": str(tmp_path / "q.csv")}, None, "spec"
        )
    assert raised.value.problems == [
        ("debaters", "spec: debaters[1]: persona files are read on the command line only; give a persona's name"),
        ("questions", "spec: questions_file: files are read on the command line only; give questions"),
    ]
    with pytest.raises(
        SpecError, match=r"^spec: expected a mapping of keys \(name, debaters, judges, questions \.\.\.\)$"
    ):
        tournament_spec.from_mapping(["not", "a", "mapping"], None, "spec")


def test_an_experiment_takes_its_questions_inline_read_as_its_file_is():
    question = {"passage": "The tower was red.", "question": "Its colour?", "answers": ["Red", "Blue"], "correct": 0}
    spec = experiment_spec.from_mapping(
        {"name": "Inline", "questions": [question], "protocols": ["blind"], "judges": []}, None, "spec"
    )
    assert [(q.question, q.answers, q.correct) for q in spec.questions] == [("Its colour?", ("Red", "Blue"), 0)]
    with pytest.raises(SpecErrors) as raised:
        experiment_spec.from_mapping(
            {"questions": [{**question, "correct": 2}], "sample": True, "protocols": "x"}, None, "spec"
        )
    assert raised.value.problems == [
        ("protocols", "spec: protocols: expected a list such as [evidence_debate, blind]"),
        ("questions", "spec: give one of questions_file, questions or sample: true"),
    ]
    with pytest.raises(SpecErrors) as raised:
        experiment_spec.from_mapping({"questions": [{**question, "correct": 2}], "protocols": ["blind"]}, None, "spec")
    assert raised.value.problems == [("questions", "spec: questions line 1: correct must be 0, 1 or null, not 2")]
