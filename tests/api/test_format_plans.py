"""A format's plan over the API (api/format_plans.py) and on its page (debates/format_views.py), both from
`debates.forms.given_options`: options given are taken over the defaults (the rest at theirs), a bad or unknown
option is refused with every problem at once in the new-debate form's words (the page marks them), and the plan
says the fewest calls as well as the most. In the server's process (Django's test client with a bearer token)."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from debates import format_cards
from tests.api.test_page_actions import Api

pytestmark = pytest.mark.django_db

CARDS = Path(__file__).resolve().parents[2] / "cards"


@pytest.fixture
def cards():
    saved = {
        name: format_cards.save_card((CARDS / f"{name}.yaml").read_text(), owner=None)
        for name in ("lincoln-douglas", "mad")
    }
    return {name: format_cards.card_format_of(card) for name, card in saved.items()}


def page(user, name: str, query: str = "") -> str:
    client = Client()
    client.force_login(user)
    response = client.get(reverse("format_detail", args=[name]) + query)
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_options_given_are_taken_over_the_defaults(people, cards):
    fmt = cards["lincoln-douglas"]
    at_five = {"questions": 5, "word_limit": 400}  # word_limit at its default
    assert fmt.calls(at_five) != fmt.calls({"questions": 3, "word_limit": 400})
    plan = Api(people["other"]).get("/formats/lincoln-douglas/plan?option_questions=5")
    assert plan.status_code == 200, plan.content
    assert plan.json()["options"] == at_five
    assert plan.json()["calls"] == fmt.calls(at_five) == len(plan.json()["steps"])
    assert f"exactly {fmt.calls(at_five)} LLM calls" in page(people["other"], "lincoln-douglas", "?option_questions=5")


def test_every_bad_option_is_refused_at_once_in_the_forms_words(people, cards):
    reply = Api(people["other"]).get(
        "/formats/lincoln-douglas/plan?option_questions=99&option_word_limit=x&option_bogus=1"
    )
    assert reply.status_code == 422 and reply["Content-Type"] == "application/problem+json"
    errors = {e["field"]: e["message"] for e in reply.json()["errors"]}
    assert errors == {
        "option_questions": "Ensure this value is less than or equal to 6.",
        "option_word_limit": "Enter a whole number.",
        "option_bogus": "The lincoln-douglas format has no option 'bogus'.",
    }
    zero = Api(people["other"]).get("/formats/lincoln-douglas/plan?option_questions=0").json()["errors"]
    assert [e["field"] for e in zero] == ["option_questions"]
    # The page marks the same problems beside its form, and shows the plan at the options it could take.
    shown = page(people["other"], "lincoln-douglas", "?option_questions=99&option_bogus=1")
    assert all(message in shown for key, message in errors.items() if key != "option_word_limit")


def test_the_plan_gives_the_fewest_calls_and_the_most(people, cards):
    fmt = cards["mad"]
    plan = Api(people["other"]).get("/formats/mad/plan?option_rounds=3").json()
    assert fmt.fewest_calls({"rounds": 3}) < fmt.calls({"rounds": 3})
    assert (plan["fewest_calls"], plan["calls"]) == (fmt.fewest_calls({"rounds": 3}), fmt.calls({"rounds": 3}))
    assert f"{plan['fewest_calls']} to {plan['calls']} LLM calls" in page(people["other"], "mad", "?option_rounds=3")
