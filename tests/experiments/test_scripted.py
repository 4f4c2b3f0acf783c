"""An experiment end to end over the test servers, with scripted speakers and judges, read through the report:

debaters quote the passage truthfully for the correct answer and invent quotes for the wrong one; a judge who
trusts only verified quotes is always right in debates, and flips a coin when blind; a judge who always picks
the answer shown first flips its verdict whenever only the order changes.
"""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from batches.checks import Contestant
from chaoslm.llm.testserver import TestLLMServer
from debates import privacy, transcripts
from debates.event_cards import card_html
from debates.formats.quotes import verify
from debates.models import Event
from experiments import selectors, services, stats
from experiments.models import Experiment
from experiments.questions import sample
from tests.batches.helpers import debater, judge, provider_for
from tests.experiments.test_runs import run_to_end

pytestmark = pytest.mark.django_db(transaction=True)

A_WINS, B_WINS = json.dumps({"A": 1, "B": 0}), json.dumps({"A": 0, "B": 1})


@pytest.fixture
def trusting_server():
    with TestLLMServer() as server:
        yield server


@pytest.fixture
def first_server():
    with TestLLMServer() as server:
        yield server


def speaker_rules(questions) -> list[dict[str, str]]:
    """For each question: arguing its correct answer, quote the passage's first eight words; arguing the other,
    a quote the passage does not hold."""
    rules = []
    for q in questions:
        true_quote = " ".join(q.passage.split()[:8])
        for index, answer in enumerate(q.answers):
            quote = true_quote if index == q.correct else f"the record says {answer.lower()} beyond doubt"
            rules.append(
                {
                    "match": "arguing for [AB]: " + re.escape(json.dumps(answer, ensure_ascii=False)),
                    "reply": f"The passage settles it: <quote>{quote}</quote>.",
                }
            )
    return rules


def test_debate_with_verified_quotes_makes_a_trusting_judge_right_and_position_bias_shows_as_flips(
    llm_server, trusting_server, first_server
):
    questions = sample()[:6]
    llm_server.configure(rules=speaker_rules(questions))
    trusting_server.configure(
        rules=[
            # In a debate: side with the debater whose quote was verified.
            {"match": r"debater A:\n[^\n]*<v_quote>", "reply": A_WINS},
            {"match": r"debater B:\n[^\n]*<v_quote>", "reply": B_WINS},
            # Blind: a coin.
            {"match": "You have no passage", "reply": A_WINS, "probability": 0.5},
            {"match": "You have no passage", "reply": B_WINS},
        ],
    )
    first_server.configure(rules=[{"match": "", "reply": A_WINS}])
    experiment = services.create_experiment(
        name="Scripted",
        questions=questions,
        protocols=["evidence_debate", "blind"],
        debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
        judges=[
            Contestant.of(judge("Trusting judge", provider_for(trusting_server, "trusting"))),
            Contestant.of(judge("First judge", provider_for(first_server, "first"))),
        ],
        options={"rounds": 1},
        # One at a time: the coin's draws (the test server's seeded generator) come in the same order every time.
        concurrency=1,
    )
    finished = run_to_end(experiment, timeout=240)
    assert finished.status == "completed"
    judged = selectors.judged(finished)
    assert len(judged) == 6 * (2 + 1) * 2 * 2

    trusting_only = [r for r in judged if r.judge == "Trusting judge"]
    debates = [r for r in trusting_only if r.protocol == "evidence_debate"]
    blind = [r for r in trusting_only if r.protocol == "blind"]
    report = selectors.report(finished)
    by_judge = {j.name: j for j in report.judges}
    assert by_judge["Trusting judge"].accuracy["evidence_debate"].value == 1.0
    assert all(r.score == 1.0 for r in debates)
    coin = by_judge["Trusting judge"].accuracy["blind"].value
    assert 0.2 <= coin <= 0.8
    blind_estimate = stats.accuracy(blind)
    assert blind_estimate.low <= 0.5 <= blind_estimate.high
    # The judge who always picks the answer shown first flips every pair; the trusting one never does in debates.
    assert by_judge["First judge"].flip_rate.value == 1.0
    assert by_judge["First judge"].accuracy["evidence_debate"].value == 0.5
    # Each debater argued the correct answer in half its debates, quoted truly there and falsely elsewhere.
    ada = next(d for d in report.debaters if d.name == "Ada")
    assert ada.quotes == 6 * 2 * 2  # 6 questions, 2 pairings, 2 orders, one quote a debate (both judges read it)
    assert ada.verified == ada.unverified
    assert ada.verified_rate.value == 0.5
    # Trusting judge only: persuasive when right, never when wrong.
    trusting_report = stats.build_report(
        trusting_only, ["evidence_debate"], ["Ada", "Bob"], ["Trusting judge"], bootstrap=0
    )
    ada = trusting_report.debaters[0]
    assert (ada.win_rate_correct.value, ada.win_rate_incorrect.value) == (1.0, 0.0)
    # The runs table shows each judge's answer: the trusting judge's first debate, right.
    Experiment.objects.filter(pk=finished.pk).update(visibility="unlisted")
    table = Client().get(f"/xs/{finished.share_token}/").content.decode()
    first_row = table.split('id="runs"', 1)[1].split("<tbody>", 1)[1].split("</tr>", 1)[0]
    assert "Trusting judge" in first_row and f"<td>answer {questions[0].correct + 1} · right</td>" in first_row
    assert table.count(" · right</td>") + table.count(" · wrong</td>") == 50  # one page of runs, each decided
    # The exports show each quote as checked: one debate's Markdown and JSON, as a stranger gets them.
    debate = Event.objects.filter(kind="TURN", debate__format="evidence_debate").first().debate
    exported = transcripts.as_dict(debate, access=privacy.access(None, debate, via_share=True))
    speeches = [e for e in exported["events"] if e["kind"] == "TURN"]
    assert sorted(e["quotes"][0]["verified"] for e in speeches) == [False, True]
    assert all(e["as_judged"] == verify(debate.options["passage"], e["content"]).marked for e in speeches)
    markdown = transcripts.as_markdown(debate, access=privacy.access(None, debate, via_share=True))
    assert markdown.count("” [verified]") == markdown.count("” [unverified]") == 1
    assert "<quote>" not in markdown and "*1 quote: 1 verified*" in markdown and "*1 quote: 0 verified*" in markdown
    assert f"**Answer:** {debate.winner}" in markdown
    # The debate's page draws each quote as the judge read it.
    cards = [card_html(e) for e in Event.objects.filter(kind="TURN", debate__format="evidence_debate")]
    assert sum('class="quote verified"' in c for c in cards) == sum('class="quote unverified"' in c for c in cards)
    assert sum('class="quote verified"' in c for c in cards) == len(cards) // 2 > 0
    # The judge never read a passage: the sentences no one quoted never reached either judge's server.
    for server in (trusting_server, first_server):
        seen = json.dumps([r.messages for r in server.requests])
        for q in questions:
            unquoted = " ".join(q.passage.split()[9:])
            assert json.dumps(unquoted)[1:-1] not in seen
