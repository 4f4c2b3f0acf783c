"""What the debate page says is true for whoever reads it: "(you)" only for the person in the seat, seats in the
format's words, an End that asks first, and a score panel that does not promise scores to a finished debate."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from debates.broadcast import status_html
from debates.models import Debate, Event, Seat
from debates.services import post_message

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
CSS = (ROOT / "static" / "css" / "chaoslm.css").read_text()


@pytest.fixture
def spoken(people):
    """An unlisted duel whose human seat (its owner, "admin") has spoken."""
    debate = Debate.objects.create(
        topic="Cars?", premise="Ban cars", format="duel", owner=people["owner"], visibility="unlisted"
    )
    Seat.objects.create(debate=debate, key="a", role="debater", side="for", name="admin", is_human=True, order=0)
    Seat.objects.create(debate=debate, key="b", role="debater", side="against", name="Marcus Vale", order=1)
    Debate.objects.filter(pk=debate.pk).update(status=Debate.Status.WAITING)
    post_message(debate.pk, "Cars make cities loud.")
    return debate


def _page_div(html: str) -> str:
    return html[html.index('<div id="debate"') :].split(">", 1)[0]


def test_you_is_said_to_the_person_in_the_seat_alone(client, people, spoken):
    share = reverse("debate_share", args=[spoken.share_token])
    # Logged out, at the share link: nobody here sits in the seat.
    html = client.get(share).content.decode()
    assert "Cars make cities loud." in html
    assert "(you)" not in html
    assert "yours" not in _page_div(html)
    # Staff, at the debate's own address: not the person in the seat either.
    client.force_login(people["staff"])
    html = client.get(reverse("debate_detail", args=[spoken.pk])).content.decode()
    assert "(you)" not in html and "yours" not in _page_div(html)
    # The owner, who spoke from the seat, at either address: the page is theirs, and its style says "(you)".
    client.force_login(people["owner"])
    for address in (reverse("debate_detail", args=[spoken.pk]), share):
        html = client.get(address).content.decode()
        assert "(you)" not in html
        assert 'class="yours"' in _page_div(html)
    assert '#debate.yours .card.kind-user .who::after { content: " (you)"; }' in CSS
    # The stored card, the same for every viewer, names the speaker only.
    card = Event.objects.get(debate=spoken, kind=Event.Kind.USER).html
    assert '<span class="who">admin</span>' in card and "(you)" not in card


BP = (ROOT / "cards" / "british-parliamentary.yaml").read_text()


def test_seat_chips_give_the_seats_label_and_its_sides_not_their_keys(client, people):
    client.force_login(people["owner"])
    debate = Debate.objects.create(
        topic="Cars?", premise="Ban cars", format="british-parliamentary", card_source=BP, owner=people["owner"]
    )
    Seat.objects.create(debate=debate, key="pm", role="debater", side="og", name="Ada Sterling", order=0)
    Seat.objects.create(debate=debate, key="dlo", role="debater", side="oo", name="olive", is_human=True, order=1)
    Seat.objects.create(debate=debate, key="judge", role="judge", name="Judge Ines Okafor", order=2)

    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()

    assert '<strong>Ada Sterling</strong> <span class="muted">Prime Minister · Opening Government</span>' in html
    assert (
        '<strong>olive</strong> <span class="muted">a person · Deputy Leader of the Opposition · Opening Opposition'
        "</span>" in html
    )
    assert '<strong>Judge Ines Okafor</strong> <span class="muted">Adjudicator</span>' in html
    assert "pm · og" not in html and "dlo · oo" not in html


def test_an_event_card_names_its_side_as_the_format_does_not_by_its_key(people):
    debate = Debate.objects.create(
        topic="Cars?", premise="Ban cars", format="british-parliamentary", card_source=BP, owner=people["owner"]
    )
    pm = Seat.objects.create(debate=debate, key="pm", role="debater", side="og", name="Ada Sterling", order=0)
    judge = Seat.objects.create(debate=debate, key="judge", role="judge", name="Judge Ines Okafor", order=1)

    speech = Event.objects.create(debate=debate, seat=pm, ordinal=1, kind=Event.Kind.TURN, content="Ban them.")
    note = Event.objects.create(debate=debate, seat=judge, ordinal=2, kind=Event.Kind.TURN, content="Noted.")

    assert '<span class="who">Ada Sterling</span> <span class="side">Opening Government</span>' in speech.html
    assert ">og<" not in speech.html
    assert 'class="side"' not in note.html  # a seat with no side shows none


def test_a_duels_chip_says_its_side_once(client, people):
    client.force_login(people["owner"])
    debate = Debate.objects.create(topic="Cars?", premise="Ban cars", format="duel", owner=people["owner"])
    Seat.objects.create(debate=debate, key="a", role="debater", side="for", name="Ada Sterling", order=0)
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert '<strong>Ada Sterling</strong> <span class="muted">Debater A (for)</span>' in html


def test_end_asks_first_as_delete_does(client, people):
    client.force_login(people["owner"])
    debate = Debate.objects.create(topic="Cars?", premise="Ban cars", format="duel", owner=people["owner"])
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    end = html[html.index(f'hx-post="{reverse("debate_end", args=[debate.pk])}"') :].split(">", 1)[0]
    assert (
        'hx-confirm="End this debate? Its format brings it to a close at its next step (a summary, a verdict), '
        'and it does not go on."'
    ) in end
    assert 'data-confirm="Delete this debate for good?"' in html


def test_a_finished_debate_with_no_scored_turn_does_not_promise_scores(client, people):
    client.force_login(people["owner"])
    debate = Debate.objects.create(topic="Cars?", premise="Ban cars", format="duel", owner=people["owner"])
    Seat.objects.create(debate=debate, key="judge", role="judge", name="Judge Ines Okafor", order=2)
    promise = "Scores appear as the judge scores each turn."

    assert promise in client.get(reverse("debate_detail", args=[debate.pk])).content.decode()

    Debate.objects.filter(pk=debate.pk).update(status=Debate.Status.COMPLETED)
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert promise not in html
    assert "No turn was scored: the debate ended before the judge scored one." in html


def test_a_debate_waiting_for_its_person_tells_only_that_person_it_is_their_turn(client, people):
    debate = Debate.objects.create(
        topic="Cars?", premise="Ban cars", format="duel", owner=people["owner"], visibility="unlisted"
    )
    Seat.objects.create(debate=debate, key="a", role="debater", side="for", name="admin", is_human=True, order=0)
    Seat.objects.create(debate=debate, key="b", role="debater", side="against", name="Marcus Vale", order=1)
    Debate.objects.filter(pk=debate.pk).update(status=Debate.Status.WAITING)
    debate.refresh_from_db()
    share = reverse("debate_share", args=[debate.share_token])
    # Logged out, at the share link, the line was "Waiting for you: it is your turn to speak.".
    html = client.get(share).content.decode()
    status = html[html.index('<div id="status"') :].split("</div>", 1)[0]
    assert '<span class="others-only">Waiting for admin to speak.</span>' in status
    assert '<span class="yours-only">Waiting for you: it is your turn to speak.</span>' in status
    assert "yours" not in _page_div(html)
    assert "#debate:not(.yours) .status .yours-only, #debate.yours .status .others-only { display: none; }" in CSS
    # The owner, who sits in the seat, is spoken to; a live push carries both lines, for every viewer alike.
    client.force_login(people["owner"])
    assert 'class="yours"' in _page_div(client.get(share).content.decode())
    push = status_html(debate)
    assert "Waiting for admin to speak." in push and "Waiting for you: it is your turn to speak." in push
