"""Costs and budgets of batches, on the inline runner against the test server over HTTP: a tournament's cost is the
sum of its calls' usage, as the server reported it, at the provider's prices; its estimate's range contains it; a
monthly budget refuses a tournament, pauses one mid-way (nothing lost), and lets it go on once it is raised."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from api.tokens import create_token
from batches.checks import OverBudget, cost_estimate
from chaoslm import costs
from debates.models import Debate, Event
from debates.selectors import usage_of
from personas.models import Budget, Provider
from tests.batches.helpers import always_for, debater, judge, questions, run_to_end
from tournaments import design, results, services
from tournaments.models import Match, Tournament

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = ["Alice", "Bob", "Carol"]
# Dollars per million tokens: input, output, cached input.
PRICES = (Decimal(100), Decimal(200), Decimal(50))
TURNS = 2
MATCHES = 6  # three debaters, each pair on both sides, one question
CALLS = MATCHES * design.debate_calls("duel", {"turns": TURNS})


@pytest.fixture
def paid(llm_server):
    """A provider on the test server with prices set in the admin, reporting cached prompt tokens; its personas."""
    llm_server.configure(rules=always_for(NAMES), reply_words=12, prompt_cache=True)
    provider = Provider.objects.create(
        name="paid",
        base_url=llm_server.url,
        default_model="test-model",
        json_mode="json_object",
        input_price=PRICES[0],
        output_price=PRICES[1],
        cached_input_price=PRICES[2],
    )
    debaters = [services.Contestant.of(debater(n, provider)) for n in NAMES]
    judges = [services.Contestant.of(judge("Judge Una", provider))]
    return debaters, judges


@pytest.fixture
def owner(db):
    return User.objects.create_user("spender", password="pw-spender-1")


def create(owner, paid, name="Budget cup"):
    debaters, judges = paid
    return services.create_tournament(
        name=name,
        debaters=debaters,
        judges=judges,
        questions=questions(1),
        options={"turns": TURNS},
        concurrency=2,
        owner=owner,
    )


def billed(usage: dict) -> Decimal:
    """What a call costs at PRICES, from the usage the server reported, worked out here on its own."""
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    fresh = usage["prompt_tokens"] - cached
    dollars = fresh * PRICES[0] + cached * PRICES[2] + usage["completion_tokens"] * PRICES[1]
    return dollars / Decimal(1_000_000)


def test_a_budget_pauses_a_running_tournament_and_it_completes_each_debate_once_when_raised(
    llm_server, paid, owner, client
):
    # A budget already spent refuses the tournament, saying what it would cost and what is left.
    Budget.objects.create(user=owner, monthly=Decimal("0.00"))
    with pytest.raises(OverBudget, match=r"monthly budget of \$0 is spent"):
        create(owner, paid)
    Budget.objects.filter(user=owner).update(monthly=Decimal("1.00"))
    with pytest.raises(OverBudget, match=r"This would cost about \$.* more than the \$1\.00 left"):
        create(owner, paid)
    assert not Tournament.objects.exists()

    # Made with no budget, then given one that its first calls pass: it pauses mid-way.
    Budget.objects.all().delete()
    tournament = create(owner, paid)
    Budget.objects.create(user=owner, monthly=Decimal("0.01"))
    paused = run_to_end(tournament)
    assert paused.status == Tournament.Status.PAUSED
    made = Debate.objects.filter(in_batch=True)
    # The debates in flight when it paused stopped at their next call boundary, what they said kept (an owner's
    # pause does the same); no other started.
    assert 1 <= made.count() <= 2
    # (one whose last call was the one that spent the budget has nothing left to stop, and completes)
    stopped_or_done = (Debate.Status.INTERRUPTED, Debate.Status.COMPLETED)
    assert all(d.status in stopped_or_done and d.events.exists() for d in made), [
        (d.status, d.stop_requested) for d in made
    ]
    assert Match.objects.filter(tournament=tournament, debate__isnull=True).count() == MATCHES - made.count()

    # Its page says why; resuming is refused while the budget is spent, and it stays paused.
    client.force_login(owner)
    page = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert "Paused: the owner&#x27;s monthly budget of $0.01 is spent" in page
    refused = client.post(reverse("tournament_resume", args=[tournament.pk]), follow=True).content.decode()
    assert "Your monthly budget of $0.01 is spent" in refused
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.PAUSED
    _, secret = create_token(owner, "script", read_only=False)
    over = client.post(
        f"/api/v1/tournaments/{tournament.pk}/resume",
        data="{}",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert over.status_code == 402
    assert over["Content-Type"] == "application/problem+json"
    problem = json.loads(over.content)
    assert problem["title"] == "Payment required"
    assert problem["detail"].startswith("Your monthly budget of $0.01 is spent")

    # Raised: it goes on where it stopped, and every debate is made and completed once.
    Budget.objects.filter(user=owner).update(monthly=Decimal("1000"))
    services.TOURNAMENT.resume(tournament)
    finished = run_to_end(tournament)
    assert finished.status == Tournament.Status.COMPLETED
    matches = list(Match.objects.filter(tournament=tournament).select_related("debate"))
    assert all(m.debate is not None and m.debate.status == Debate.Status.COMPLETED for m in matches)
    assert all(m.attempts == 1 for m in matches)
    assert Debate.objects.filter(in_batch=True).count() == MATCHES
    verdicts = Counter(Event.objects.filter(kind=Event.Kind.VERDICT).values_list("debate_id", flat=True))
    assert sorted(verdicts.values()) == [1] * MATCHES
    # No call was made twice: the server answered each planned call once.
    assert len(llm_server.requests) == CALLS


def test_a_tournaments_cost_is_its_calls_usage_at_the_prices_and_within_its_estimate(llm_server, paid, owner, client):
    tournament = create(owner, paid)
    size = design.estimate(1, len(NAMES), 1, "both", 1, {"turns": TURNS})
    estimate = cost_estimate(size.calls, [*paid[0], *paid[1]])
    finished = run_to_end(tournament)
    assert finished.status == Tournament.Status.COMPLETED

    # Every call's usage is stored as the server reported it, cached prompt tokens included.
    reported = [r.usage for r in llm_server.requests]
    assert len(reported) == CALLS
    calls = Event.objects.filter(tokens_in__gt=0)
    stored = Counter(calls.values_list("tokens_in", "tokens_out", "tokens_cached"))
    sent = Counter(
        (u["prompt_tokens"], u["completion_tokens"], u["prompt_tokens_details"]["cached_tokens"]) for u in reported
    )
    assert stored == sent
    assert any(cached for _, _, cached in stored)

    # The tournament's cost is the sum of those calls at the provider's prices, to the last decimal.
    expected = sum((billed(u) for u in reported), Decimal(0))
    rows, total = usage_of(results.debates_of(tournament))
    assert total == costs.Total(expected, 0, CALLS)
    assert {r.name for r in rows} == {*NAMES, "Judge Una"}
    assert sum((r.cost.amount for r in rows), Decimal(0)) == expected
    # The estimate, made before it started, brackets it.
    assert estimate.calls == CALLS
    assert estimate.low <= expected <= estimate.high
    assert not estimate.unknown

    # The page, the export and the owner's month show it.
    client.force_login(owner)
    text = costs.money(expected)
    page = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert f'Cost so far: <strong class="cost">{text}</strong>' in page
    exported = json.loads(client.get(reverse("tournament_export", args=[tournament.pk, "report.json"])).content)
    assert Decimal(exported["cost"]["usd"]) == expected
    assert exported["cost"]["unknown_price_calls"] == 0
    month = client.get(reverse("account_usage")).content.decode()
    assert text in month
    _, secret = create_token(owner, "script", read_only=True)
    spent = json.loads(client.get("/api/v1/usage", HTTP_AUTHORIZATION=f"Bearer {secret}").content)
    assert (Decimal(spent["usd"]), spent["unknown_price_calls"], spent["budget_usd"]) == (expected, 0, None)
    assert sum(row["calls"] for row in spent["by_persona"]) == CALLS


def test_a_call_at_an_unknown_price_is_counted_apart_never_as_free(llm_server, owner, client):
    """Personas with no provider call the default endpoint (the test server on this machine): no price is known."""
    llm_server.configure(rules=always_for(NAMES), reply_words=6)
    tournament = services.create_tournament(
        name="Unpriced",
        debaters=[services.Contestant.of(debater(n)) for n in NAMES[:2]],
        judges=[services.Contestant.of(judge("Judge Una"))],
        questions=questions(1),
        options={"turns": TURNS},
        sides="once",
        owner=owner,
    )
    run_to_end(tournament)
    _, total = usage_of(results.debates_of(tournament))
    assert total == costs.Total(
        Decimal(0), design.debate_calls("duel", {"turns": TURNS}), design.debate_calls("duel", {"turns": TURNS})
    )
    assert total.text() == "unknown price"
    assert Event.objects.filter(tokens_in__gt=0, cost__isnull=False).count() == 0
    client.force_login(owner)
    page = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert '<strong class="cost">unknown price</strong>' in page


def test_the_form_refuses_a_tournament_over_budget_and_keeps_what_was_typed(llm_server, paid, owner, client):
    Budget.objects.create(user=owner, monthly=Decimal("0.50"))
    client.force_login(owner)
    people = {p.spec.name: p.persona.pk for p in [*paid[0], *paid[1]]}
    form = {
        "name": "Too dear",
        "debaters": [people[n] for n in NAMES],
        "judges": [people["Judge Una"]],
        "questions": "Should cities ban cars?",
        "sides": "both",
        "repeats": 1,
        "option_turns": TURNS,
        "concurrency": 2,
        "visibility": "private",
        "formats": ["duel"],
    }
    reply = client.post(reverse("tournament_new"), form)
    assert reply.status_code == 200
    html = reply.content.decode()
    assert "more than the $0.50 left of your monthly budget of $0.50" in html
    assert 'value="Too dear"' in html
    assert "Should cities ban cars?" in html
    # The running estimate shows the range and what is left before it is sent.
    line = client.post(reverse("tournament_estimate"), form).content.decode()
    assert 'It will cost about <strong class="cost">$' in line
    assert "of a $0.50 budget; $0.50 left." in line
    assert not Tournament.objects.exists()
