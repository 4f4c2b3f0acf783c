"""Experiments: which runs they make (pure), and running them on the inline runner against test servers over HTTP."""

from __future__ import annotations

import json
import time

import pytest

from batches.checks import Contestant
from chaoslm.llm.testserver import TestLLMServer
from chaoslm.runner import inline
from debates.models import Debate
from experiments import design, exports, selectors, services, work
from experiments.models import Experiment, Run
from experiments.questions import sample
from personas.models import Persona
from tests.batches.helpers import debater, judge, provider_for


# -- the design (pure) ------------------------------------------------------------------------------------------------
def test_every_run_is_made_in_both_answer_orders_and_twins_differ_only_in_the_order():
    runs = design.runs(questions=2, protocols=list(design.PROTOCOLS), debaters=2, judges=2)
    # Per question and judge: debate 2 ordered pairs, consultancy 2 consultants x 2 answers, blind 1, oracle 1.
    assert len(runs) == 2 * 2 * (2 + 4 + 1 + 1) * 2 == design.count(2, list(design.PROTOCOLS), 2, 2)
    assert len(set(runs)) == len(runs)
    twins: dict[tuple, list[bool]] = {}
    for run in runs:
        twins.setdefault(run.pair, []).append(run.swapped)
    assert all(sorted(orders) == [False, True] for orders in twins.values())


def test_each_debater_argues_each_answer_equally_often_and_consultants_are_balanced():
    runs = design.runs(questions=1, protocols=[design.DEBATE, design.CONSULTANCY], debaters=3, judges=1)
    debates = [r for r in runs if r.protocol == design.DEBATE]
    for who in range(3):
        assert sum(r.first == who for r in debates) == sum(r.second == who for r in debates) == 4
    consultancies = [r for r in runs if r.protocol == design.CONSULTANCY]
    assert sorted((r.first, r.assigned) for r in consultancies if not r.swapped) == [
        (0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)
    ]  # fmt: skip
    # A debate needs two different debaters.
    assert design.runs(1, [design.DEBATE], 1, 1) == []


def test_the_seats_and_answers_follow_the_order():
    assert design.shown(("yes", "no"), swapped=False) == ["yes", "no"]
    assert design.shown(("yes", "no"), swapped=True) == ["no", "yes"]
    assert design.seats("first", "second", swapped=True) == ("second", "first")
    assert design.letter_of(0, swapped=True) == 1


def test_a_panel_judges_one_debate_but_each_judge_holds_its_own_consultancy():
    runs = design.runs(questions=1, protocols=[design.DEBATE, design.CONSULTANCY], debaters=2, judges=3)
    for index, run in enumerate(runs):
        if run.protocol == design.DEBATE and run.judge > 0:
            source = runs[run.source]
            assert (source.judge, source.pair[:1], source.swapped) == (0, run.pair[:1], run.swapped)
            assert (source.first, source.second) == (run.first, run.second)
            assert source.source is None and run.source < index
        else:
            assert run.source is None
    assert sum(r.source is None for r in runs if r.protocol == design.DEBATE) == 2 * 2  # pairings x orders


# -- creating ---------------------------------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"protocols": []}, "An experiment needs at least one protocol."),
        ({"protocols": ["duel"]}, "There is no protocol 'duel'"),
        ({"debaters": []}, "A debate or a consultancy needs at least one debater."),
        ({"debaters": ["Cy"]}, "An evidence debate needs two debaters"),
        ({"judges": []}, "An experiment needs at least one judge."),
        ({"options": {"rounds": 0}}, "Rounds must be a whole number from 1 to 10."),
        ({"options": {"turns": 2}}, "There is no option 'turns'"),
        ({"questions": []}, "An experiment needs at least one question."),
        ({"concurrency": 0}, "Concurrency must be between 1 and 100."),
    ],
)
def test_an_experiment_that_cannot_be_made_says_why(change, message):
    ask = {
        "name": "E",
        "questions": sample()[:1],
        "protocols": [design.DEBATE],
        "debaters": ["Ada", "Bob"],
        "judges": [Contestant.of(judge("Judy"))],
        **change,
    }
    ask["debaters"] = [Contestant.of(debater(name)) for name in ask["debaters"]]
    with pytest.raises(services.ExperimentError, match=message):
        services.create_experiment(**ask)
    assert not Experiment.objects.exists()


# -- running ----------------------------------------------------------------------------------------------------------
@pytest.fixture
def judge_server():
    with TestLLMServer() as server:
        yield server


def run_to_end(experiment: Experiment, timeout: float = 120) -> Experiment:
    work.EXPERIMENT.start(experiment)
    deadline = time.monotonic() + timeout
    while not work.EXPERIMENT.is_settled(experiment.pk):
        assert time.monotonic() < deadline, "the experiment did not finish in time"
        time.sleep(0.1)
    inline.wait_idle()
    experiment.refresh_from_db()
    return experiment


@pytest.mark.django_db(transaction=True)
def test_an_experiment_runs_every_run_once_within_its_concurrency_and_the_judge_never_reads_the_passage(
    llm_server, judge_server
):
    bench = provider_for(judge_server, "bench")
    questions = sample()[:2]
    experiment = services.create_experiment(
        name="Side by side",
        questions=questions,
        protocols=list(design.PROTOCOLS),
        debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
        judges=[Contestant.of(judge("Judy", bench))],
        options={"rounds": 1, "word_limit": 60},
        concurrency=3,
    )
    finished = run_to_end(experiment)
    assert finished.status == Experiment.Status.COMPLETED
    runs = list(Run.objects.filter(experiment=experiment).select_related("debate", "first", "second", "question"))
    assert len(runs) == 2 * (2 + 4 + 1 + 1) * 2
    assert all(r.debate.status == Debate.Status.COMPLETED and r.attempts == 1 for r in runs)
    spans = sorted((r.debate.started_at, r.debate.finished_at) for r in runs)
    assert max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans) <= 3
    # Calls: a debate 2 notes + 2 speeches (the debaters' server) and an answer; a consultancy notes + speech and
    # an answer; blind and oracle an answer. The judge's server hears only judges.
    assert len(llm_server.requests) == 2 * (2 * 2 * 4 + 4 * 2 * 2)
    assert len(judge_server.requests) == len(runs)
    for request in judge_server.requests:
        text = json.dumps(request.messages)
        oracle = "Read the passage, then answer" in request.last_user
        for q in questions:
            # Each passage's last sentence: no speaker quotes it (the test server's speakers do not quote).
            tail = q.passage.rsplit(". ", 1)[-1][:40]
            assert (json.dumps(tail)[1:-1] in text) == (oracle and q.question in request.last_user)
    # The seats follow the order: swapped, the debater arguing answer 1 sits at A and the answers are reversed.
    debate_run = next(r for r in runs if r.protocol == design.DEBATE and r.swapped)
    seats = {s.key: s.name for s in debate_run.debate.seats.all()}
    assert seats == {"a": debate_run.second.name, "b": debate_run.first.name, "judge": "Judy"}
    assert debate_run.debate.options["answers"] == list(reversed(debate_run.question.answers))
    consultancy = next(r for r in runs if r.protocol == design.CONSULTANCY and r.swapped and r.assigned == 0)
    assert consultancy.debate.options["consultant_answer"] == 1
    figures = selectors.progress(finished)
    assert (figures.total, figures.done, figures.running, figures.failed) == (32, 32, 0, 0)


@pytest.fixture
def second_judge_server():
    with TestLLMServer() as server:
        yield server


@pytest.mark.django_db(transaction=True)
def test_the_panels_second_judge_reads_the_first_judges_debate_with_the_same_prompt(
    llm_server, judge_server, second_judge_server
):
    experiment = services.create_experiment(
        name="Panel",
        questions=sample()[:1],
        protocols=[design.DEBATE],
        debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
        judges=[
            Contestant.of(judge("Judy", provider_for(judge_server, "one"))),
            Contestant.of(judge("Kim", provider_for(second_judge_server, "two"))),
        ],
        options={"rounds": 1},
        concurrency=2,
    )
    finished = run_to_end(experiment)
    assert finished.status == Experiment.Status.COMPLETED
    runs = list(Run.objects.filter(experiment=experiment).select_related("debate", "judge", "source__debate"))
    held = [r for r in runs if r.source is None]
    replays = [r for r in runs if r.source is not None]
    assert {r.judge.name for r in held} == {"Judy"} and {r.judge.name for r in replays} == {"Kim"}
    assert len(held) == len(replays) == 2 * 2  # two pairings, both orders
    for run in replays:
        assert run.debate.format == "evidence_judge"
        assert run.debate.options["source_debate"] == run.source.debate_id
        assert run.debate.status == Debate.Status.COMPLETED
        assert (run.source.first_id, run.source.second_id, run.source.swapped) == (
            run.first_id,
            run.second_id,
            run.swapped,
        )
    # The debaters argued four debates, not eight: 2 notes and 2 speeches each.
    assert len(llm_server.requests) == 4 * 4
    # Each judge answered once a debate, and the second read word for word what the first did.
    assert len(judge_server.requests) == len(second_judge_server.requests) == 4
    assert sorted(r.last_user for r in judge_server.requests) == sorted(
        r.last_user for r in second_judge_server.requests
    )
    assert all(r.messages[0]["content"] != judge_server.requests[0].messages[0]["content"]
               for r in second_judge_server.requests)  # fmt: skip
    # Only the debate's first judge's run counts the speakers' quotes: a transcript's quotes are counted once.
    judged = selectors.judged(finished)
    assert sum(bool(j.quotes) for j in judged) == 4
    # The runs' CSV says whose debate each judge read, and leaves a replay's quote counts to that run's row.
    rows = [dict(zip(exports.RUN_COLUMNS, row, strict=True)) for row in exports.run_rows(judged)[1:]]
    sources = {r.pk: r.source_id for r in replays}
    for row in rows:
        assert row["debate_of_run"] == sources.get(row["run"], row["run"])
        assert (row["quotes"] == "") == (row["run"] in sources)


@pytest.mark.django_db(transaction=True)
def test_a_consultancy_judge_who_declines_to_ask_is_counted_and_the_consultant_is_told(llm_server, judge_server):
    judge_server.configure(
        rules=[{"match": r"round 1 of 3\)[\s\S]*NO QUESTION if you have none", "reply": "No question."}]
    )
    experiment = services.create_experiment(
        name="Quiet judge",
        questions=sample()[:1],
        protocols=[design.CONSULTANCY],
        debaters=[Contestant.of(debater("Ada"))],
        judges=[Contestant.of(judge("Judy", provider_for(judge_server, "quiet")))],
        options={"rounds": 3},
    )
    finished = run_to_end(experiment)
    # Each of the 4 consultancies: the judge passes after round 1 and asks after round 2.
    second_speeches = [r for r in llm_server.requests if "round 2 of 3" in r.last_user]
    assert len(second_speeches) == 4
    assert all(r.last_user.startswith("The judge has no question.\n\n") for r in second_speeches)
    assert [j.asked for j in selectors.judged(finished)] == [(1, 2)] * 4
    assert selectors.report(finished, bootstrap=0).judges[0].asked.value == 0.5


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_judge_cannot_take_its_seat_fails_and_the_experiment_still_settles(llm_server, judge_server):
    gone = provider_for(judge_server, "gone")
    experiment = services.create_experiment(
        name="Lost judge",
        questions=sample()[:1],
        protocols=[design.BLIND],
        debaters=[],
        judges=[Contestant.of(judge("Judy")), Contestant.of(judge("Vanished", gone))],
    )
    # Its persona and provider deleted since: the snapshot names a provider that is no more, so its runs cannot be made.
    Persona.objects.filter(name="Vanished").delete()
    gone.delete()
    finished = run_to_end(experiment, timeout=30)
    assert finished.status == Experiment.Status.COMPLETED
    runs = {r.judge.name: r for r in Run.objects.filter(experiment=experiment).select_related("judge", "debate")}
    assert runs["Judy"].debate.status == Debate.Status.COMPLETED
    assert runs["Vanished"].debate is None
    figures = selectors.progress(finished)
    assert (figures.total, figures.done, figures.failed) == (4, 2, 2)
