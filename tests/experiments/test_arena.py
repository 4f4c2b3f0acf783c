"""The evidence arena: an opted-in experiment's finished evidence debates served blind and redacted, with the
question and answers as its judge read them; the correct answer and who argued what only after answering; the
refusals of its own; and the report's human row beside each judge's (tests/batches/test_arena.py has what every
arena does alike: one answer per person and debate, the other refusals)."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import pytest
from django.test import Client
from django.urls import reverse

from audience.poll_views import COOKIE
from batches.checks import Contestant
from chaoslm.runner import inline
from debates.models import Debate, Event
from experiments import arena, design, services
from experiments.models import ArenaVote, Run
from experiments.questions import sample
from tests.batches.helpers import debater, judge, name_each_other
from tests.experiments.test_runs import run_to_end

pytestmark = pytest.mark.django_db(transaction=True)

# Every judge gives answer A 80%: right on the run that shows the correct answer as A, wrong on its twin.
ALWAYS_A = [{"match": "Give the probability that each answer is correct", "reply": '{"A": 0.8, "B": 0.2}'}]


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def finished(
    owner, llm_server, names=("Ada Sterling", "Marcus Vale"), judges=("Judge Okafor",), arena_on=True, **changes
):
    """A finished experiment of one question's evidence debate in both answer orders, whose debaters name
    themselves, each other and their model in every speech, in the ways a redaction must catch."""
    llm_server.configure(rules=ALWAYS_A)
    experiment = services.create_experiment(
        name="Does debate help?",
        questions=sample()[:1],
        protocols=[design.DEBATE],
        debaters=[Contestant.of(debater(n)) for n in names],
        judges=[Contestant.of(judge(n)) for n in judges],
        options={"rounds": 1, "word_limit": 60},
        owner=owner,
        arena=arena_on,
        **changes,
    )
    run_to_end(experiment)
    turns = Event.objects.filter(
        debate__experiment_run__experiment=experiment, kind=Event.Kind.TURN, seat__key__in=("a", "b")
    )
    name_each_other(turns, names)
    return experiment


def text(response) -> str:
    return response.content.decode()


def served_run(html: str) -> int:
    return int(re.search(r"/arena/evidence/(\d+)/vote/", html).group(1))


def test_the_arena_serves_a_redacted_debate_as_its_judge_read_it_and_reveals_the_answer_after(
    people, llm_server, runner_idle
):
    experiment = finished(people["owner"], llm_server)
    client = Client()
    response = client.get(reverse("evidence_arena"))
    assert response.status_code == 200
    html = text(response)
    # The CSRF tokens are random letters: now and then they spell "ada".
    shown = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"|"X-CSRFToken": "[^"]*"', "", html)
    for name in ("ada", "sterling", "marcus", "vale", "test-model", "okafor", experiment.name.lower()):
        assert name not in shown.lower()
    run = Run.objects.select_related("question").get(pk=served_run(html))
    # The question and the answers in the run's order, as the judge was shown them; not the passage.
    shown = design.shown(run.question.answers, run.swapped)
    assert f'<h2 id="arena-question">{run.question.question}</h2>' in html
    assert f"<dt>A</dt><dd>{shown[0]}</dd>" in html and f"<dt>B</dt><dd>{shown[1]}</dd>" in html
    assert run.question.passage[:60] not in html
    speeches = re.findall(r'<div class="md"><p>(.*?)</p>', html)
    assert speeches == [
        "I am Debater A. Debater B's case fails; Debater B forgets [a model]'s limits.",
        "I am Debater B. Debater A's case fails; Debater A forgets [a model]'s limits.",
    ]
    assert "Which answer is correct?" in html and 'name="csrfmiddlewaretoken"' in html

    correct = arena.correct_letter(run)
    response = client.post(reverse("evidence_arena_vote", args=[run.pk]), {"choice": correct})
    assert response.status_code == 302 and response["Location"] == reverse("evidence_arena_debate", args=[run.pk])
    assert COOKIE in response.cookies
    revealed = text(client.get(response["Location"]))
    at_a, at_b = design.seats(run.first, run.second, run.swapped)
    assert f"<dt>Debater A</dt><dd><strong>{at_a.name}</strong>" in revealed
    assert f"<dt>Debater B</dt><dd><strong>{at_b.name}</strong>" in revealed
    assert f"You picked <strong>answer {correct}</strong>: <strong>right</strong>" in revealed
    assert f"The correct answer is <strong>{correct}</strong>" in revealed and "Next debate" in revealed
    assert "Your answer is counted." in revealed
    assert ArenaVote.objects.get().choice == correct and not ArenaVote.objects.get().excluded

    # Each pair argues each answer, in both orders: four debates, each served once; then none is left.
    answered = {run.pk}
    for _ in range(3):
        following = served_run(text(client.get(reverse("evidence_arena"))))
        assert following not in answered
        answered.add(following)
        client.post(reverse("evidence_arena_vote", args=[following]), {"choice": "A"})
    assert "You have answered every debate in the arena" in text(client.get(reverse("evidence_arena")))
    # A stranger who has not answered sees it blind, even at its own address.
    assert at_a.name not in text(Client().get(reverse("evidence_arena_debate", args=[run.pk])))


def test_a_panels_replay_and_a_question_without_a_known_answer_are_not_in_the_arena(people, llm_server, runner_idle):
    """The refusals of this arena's own (tests/batches/test_arena.py has every arena's)."""
    experiment = finished(people["owner"], llm_server, judges=("Judge Okafor", "Judge Ines"))
    client = Client()
    # A panel's replay rereads a debate already served: it is no debate of its own in the arena.
    replay = Run.objects.filter(experiment=experiment, source__isnull=False).first()
    assert replay is not None and replay.debate.status == Debate.Status.COMPLETED
    assert client.post(reverse("evidence_arena_vote", args=[replay.pk]), {"choice": "A"}).status_code == 404
    assert client.get(reverse("evidence_arena_debate", args=[replay.pk])).status_code == 404
    run = arena.debates().first()
    vote = reverse("evidence_arena_vote", args=[run.pk])
    run.question.__class__.objects.filter(pk=run.question_id).update(correct=None)
    assert client.post(vote, {"choice": "A"}).status_code == 404
    assert not ArenaVote.objects.exists()


def wilson(hits: float, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval, by its formula."""
    z = 1.959963984540054
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_the_report_sets_human_accuracy_beside_each_judges_on_the_same_debates(people, llm_server, runner_idle):
    experiment = finished(people["owner"], llm_server, judges=("Judge Okafor", "Judge Ines"), visibility="public")
    voters = [Client() for _ in range(3)]
    runs = list(arena.debates())
    assert len(runs) == 4
    for run in runs:
        right = arena.correct_letter(run)
        wrong = "B" if right == "A" else "A"
        # On the debates whose correct answer is shown as A, the third voter is wrong; on the others all are right.
        picks = (right, right, wrong) if right == "A" else (right, right, right)
        for voter, choice in zip(voters, picks, strict=True):
            voter.post(reverse("evidence_arena_vote", args=[run.pk]), {"choice": choice})
    low, high = wilson(10, 12)
    judge_low, judge_high = wilson(2, 4)  # each judge: always A, so right on the two debates that show it as A

    page = text(Client().get(reverse("experiment_detail", args=[experiment.pk])))
    assert "People against the judges (arena answers)" in page
    assert "12 answers from 3 people on 4 evidence debates." in page
    assert (
        f'<td class="name">People (arena)</td><td>12</td><td>4</td><td>83%</td>'
        f"<td>{100 * low:.0f}% to {100 * high:.0f}%</td>"
    ) in page
    for name in ("Judge Okafor", "Judge Ines"):
        assert (
            f'<td class="name">{name}</td><td>4</td><td>4</td><td>50%</td>'
            f"<td>{100 * judge_low:.0f}% to {100 * judge_high:.0f}%</td>"
        ) in page

    data = json.loads(Client().get(reverse("experiment_export", args=[experiment.pk, "report.json"])).content)
    human = data["human"]
    assert (human["votes"], human["voters"], human["debates"], human["excluded"]) == (12, 3, 4, 0)
    assert human["accuracy"]["value"]["value"] == pytest.approx(10 / 12)
    assert (human["accuracy"]["low"], human["accuracy"]["high"]) == (pytest.approx(low), pytest.approx(high))
    assert [(j["name"], j["runs"], j["debates"]) for j in human["judges"]] == [
        ("Judge Okafor", 4, 4),
        ("Judge Ines", 4, 4),
    ]
    assert all(j["accuracy"]["value"]["value"] == 0.5 for j in human["judges"])
    assert all(j["accuracy"]["low"] == pytest.approx(judge_low) for j in human["judges"])
    assert 'voter"' not in json.dumps(human) and "anon:" not in json.dumps(data)

    rows = list(
        csv.reader(io.StringIO(text(Client().get(reverse("experiment_export", args=[experiment.pk, "human.csv"])))))
    )
    assert rows[0] == ["who", "answers", "voters", "debates", "excluded", "accuracy", "ci_low", "ci_high"]
    assert rows[1][:5] == ["the audience", "12", "3", "4", "0"] and float(rows[1][5]) == pytest.approx(10 / 12)
    assert (float(rows[1][6]), float(rows[1][7])) == (pytest.approx(low), pytest.approx(high))
    assert [r[:4] for r in rows[2:]] == [["Judge Okafor", "4", "", "4"], ["Judge Ines", "4", "", "4"]]


def test_quotes_are_marked_as_the_judge_read_them_and_model_text_is_escaped(people, llm_server, runner_idle):
    finished(people["owner"], llm_server)
    run = arena.debates().select_related("question").first()
    words = " ".join(run.question.passage.split()[:6])
    speech = Event.objects.get(debate=run.debate, kind=Event.Kind.TURN, seat__key="a")
    speech.content = f"See <quote>{words}</quote>, not <quote>moons of cheese</quote>. <script>alert(1)</script>"
    speech.save(card=False)
    html = text(Client().get(reverse("evidence_arena_debate", args=[run.pk])))
    assert f'<mark class="quote verified" title="Verified: these words are in the passage">{words}</mark>' in html
    assert '<mark class="quote unverified" title="Unverified: not found in the passage">moons of cheese</mark>' in html
    assert "<script>alert" not in html
