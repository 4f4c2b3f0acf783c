"""The audience's poll as people use it (audience/votes.py, audience/poll_views.py): its phases read from the
transcript, one vote per person and phase, no tally before voting, the result beside the verdict, the exports,
and every vote that must not count."""

import asyncio
import json
import re
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.core import signing
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from audience import votes
from audience.models import PollVote
from audience.poll_views import COOKIE, SALT
from chaoslm import live
from config.routing import websocket_urlpatterns
from debates.models import Debate, Event, Seat
from debates.setup import SeatChoice, create_debate
from personas.models import Persona, import_personas

pytestmark = pytest.mark.django_db


def poll_duel(owner, visibility="unlisted", status=Debate.Status.RUNNING, **fields):
    debate = Debate.objects.create(
        topic="Should cities ban cars?",
        format="duel",
        owner=owner,
        visibility=visibility,
        status=status,
        audience_poll=True,
        **fields,
    )
    for i, (key, role, side, name) in enumerate(
        [("a", "debater", "for", "Ada"), ("b", "debater", "against", "Bob"), ("judge", "judge", "", "Jo")]
    ):
        Seat.objects.create(debate=debate, key=key, role=role, side=side, name=name, order=i)
    Event.objects.create(debate=debate, ordinal=0, kind="HEADER", content=debate.topic)
    return debate


def first_statement(debate):
    seat = debate.seats.get(key="a")
    return Event.objects.create(debate=debate, seat=seat, ordinal=4, kind="TURN", step="opening", content="Ban them.")


def finish(debate, minutes_ago=0.0, winner="Ada"):
    debate.status = Debate.Status.COMPLETED
    debate.finished_at = timezone.now() - timedelta(minutes=minutes_ago)
    debate.winner = winner
    debate.save()


def share_urls(debate):
    token = debate.share_token
    return (
        reverse("debate_share", args=[token]),
        reverse("debate_share_poll_vote", args=[token]),
        reverse("debate_share_poll", args=[token]),
    )


def vote(client, url, phase, choice, **extra):
    return client.post(url, {"phase": phase, "choice": choice}, **extra)


# -- the phases, from the transcript -------------------------------------------------------------------------------
def test_the_vote_before_closes_at_the_first_debaters_statement_and_the_vote_after_opens_at_the_end(people):
    debate = poll_duel(people["owner"])
    now = timezone.now()
    poll = votes.poll_of(debate)
    assert poll.open_phase(now).name == "before"
    assert [key for key, _ in poll.options] == ["a", "b", "undecided"]
    assert dict(poll.options)["a"] == "Ada (for)"
    # The judge's notes or a moderator's words do not close it: only a debater's public statement.
    Event.objects.create(debate=debate, seat=debate.seats.get(key="judge"), ordinal=6, kind="SCORE", content="7")
    assert votes.poll_of(debate).before.closes_at is None
    statement = first_statement(debate)
    poll = votes.poll_of(debate)
    assert poll.before.closes_at == statement.created_at
    assert poll.open_phase(timezone.now()) is None
    finish(debate)
    poll = votes.poll_of(debate)
    assert poll.open_phase(timezone.now()).name == "after"
    assert poll.after.closes_at == debate.finished_at + timedelta(minutes=30)
    assert poll.judge_choice == "a"
    assert poll.open_phase(debate.finished_at + timedelta(minutes=31)) is None


def test_an_evidence_debate_votes_on_its_answers(people):
    debate = Debate.objects.create(
        topic="Where?", format="evidence_debate", owner=people["owner"], visibility="public", audience_poll=True,
        options={"answers": ["Paris", "Lyon"], "question": "Where?", "passage": "It was Paris."},
        status=Debate.Status.COMPLETED, finished_at=timezone.now(), winner="B",
    )  # fmt: skip
    Seat.objects.create(debate=debate, key="a", role="debater", side="A", name="Ada", order=0)
    Seat.objects.create(debate=debate, key="b", role="debater", side="B", name="Bob", order=1)
    poll = votes.poll_of(debate)
    assert poll.options == (("a", "A: Paris"), ("b", "B: Lyon"), ("undecided", "Undecided"))
    assert poll.judge_choice == "b"


def test_no_poll_on_a_private_debate_a_judge_replay_or_when_turned_off(people):
    assert votes.poll_of(poll_duel(people["owner"], visibility="private")) is None
    off = poll_duel(people["owner"])
    off.audience_poll = False
    assert votes.poll_of(off) is None
    replay = Debate.objects.create(topic="T", format="judge", visibility="public", audience_poll=True)
    assert votes.poll_of(replay) is None  # a judge replay has no audience of its own


# -- voting ---------------------------------------------------------------------------------------------------------
def test_an_anonymous_viewer_votes_by_plain_form_changes_the_vote_and_only_then_sees_the_tally(people):
    debate = poll_duel(people["owner"])
    page, vote_url, box_url = share_urls(debate)
    alice, bert = Client(), Client()
    before_voting = alice.get(page).content.decode()
    assert 'id="poll-box"' in before_voting and "Vote to see how the room stands" in before_voting
    assert "%" not in before_voting.split('id="poll-box"')[1].split("</section>")[0]

    response = vote(alice, vote_url, "before", "a")
    assert response.status_code == 302 and response["Location"] == page + "#poll-box"
    cookie = response.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    assert "Your vote is counted" in alice.get(page).content.decode()
    box = alice.get(box_url).content.decode()
    assert "You voted: <strong>Ada (for)</strong>" in box and "100%" in box

    assert vote(bert, vote_url, "before", "b").status_code == 302
    assert vote(alice, vote_url, "before", "undecided").status_code == 302  # changed: the last one counts
    assert sorted(PollVote.objects.values_list("phase", "choice")) == [("before", "b"), ("before", "undecided")]
    # A newcomer sees no tally until they vote: nobody is swayed by the room.
    carol_box = Client().get(box_url).content.decode()
    assert "%" not in carol_box and "Vote to see" in carol_box


def ballot_of(html):
    return re.search(r'name="ballot" value="([^"]+)"', html).group(1)


def test_a_new_visitors_form_posted_twice_before_the_cookie_exists_is_one_voter(people):
    debate = poll_duel(people["owner"])
    page, vote_url, box_url = share_urls(debate)
    ballot = ballot_of(Client().get(page).content.decode())
    # A double click: the same form twice, the second sent before the first's cookie came back (no cookie on either).
    replies = [Client().post(vote_url, {"phase": "before", "choice": "a", "ballot": ballot}) for _ in range(2)]
    assert [r.status_code for r in replies] == [302, 302]
    voters = {signing.loads(r.cookies[COOKIE].value, salt=SALT) for r in replies}
    assert len(voters) == 1 and ballot not in voters.pop()  # one voter, whose id the ballot does not show
    assert PollVote.objects.count() == 1
    # Another form (another tab, a box fetched again) is another ballot, so another browser's first vote.
    other = ballot_of(Client().get(box_url).content.decode())
    assert other != ballot
    Client().post(vote_url, {"phase": "before", "choice": "b", "ballot": other})
    assert sorted(PollVote.objects.values_list("choice", flat=True)) == ["a", "b"]
    # A post without a ballot (a script) still votes, as a voter of its own.
    Client().post(vote_url, {"phase": "before", "choice": "b"})
    assert PollVote.objects.count() == 3


def test_a_signed_in_person_votes_once_per_phase_and_the_htmx_reply_is_the_box(people):
    debate = poll_duel(people["owner"], visibility="public")
    client = Client()
    client.force_login(people["other"])
    url = reverse("debate_poll_vote", args=[debate.pk])
    for choice in ("a", "b", "a"):
        response = vote(client, url, "before", choice, HTTP_HX_REQUEST="true")
        assert response.status_code == 200
    assert response.content.decode().startswith('<section id="poll-box"')
    assert "You voted: <strong>Ada (for)</strong>" in response.content.decode()
    assert COOKIE not in response.cookies  # an account needs no voter cookie
    assert list(PollVote.objects.values_list("voter", "phase", "choice")) == [
        (f"user:{people['other'].pk}", "before", "a")
    ]


def test_the_result_shows_beside_the_verdict_once_both_votes_closed_and_the_exports_give_counts_only(people):
    debate = poll_duel(people["owner"])
    page, vote_url, _ = share_urls(debate)
    clients = [Client() for _ in range(4)]
    for client, choice in zip(clients, ["a", "b", "b", "undecided"], strict=True):
        assert vote(client, vote_url, "before", choice).status_code == 302
    first_statement(debate)
    finish(debate, winner="Ada")
    for client, choice in zip(clients[:3], ["b", "a", "a"], strict=True):  # a->b, b->a, b->a
        assert vote(client, vote_url, "after", choice).status_code == 302
    # While the vote after is open, a viewer who has not voted in it sees the closed "before" only.
    mid = clients[3].get(page).content.decode().split('id="poll-box"')[1].split("</section>")[0]
    assert "25%" in mid and "50%" in mid and "67%" not in mid
    exported = json.loads(clients[3].get(reverse("debate_share_export", args=[debate.share_token, "json"])).content)
    assert exported["audience_poll"]["after"] is None and exported["audience_poll"]["result"] is None

    owner = Client()
    owner.force_login(people["owner"])
    assert "Close the vote now" in owner.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert owner.post(reverse("debate_poll_close", args=[debate.pk])).status_code == 302

    html = clients[3].get(page).content.decode()
    assert html.index('id="verdict"') < html.index('id="poll-box"')
    box = html.split('id="poll-box"')[1].split("</section>")[0]
    # Before: a 1, b 2, undecided 1 of 4 (25, 50, 25). After: a 2, b 1 of 3 (66.7, 33.3): a +41.7, b -16.7.
    assert "+41.7 pts" in box and "-16.7 pts" in box
    assert "The audience's winner (the larger gain): <strong>Ada (for)</strong>" in box
    assert "The judge's verdict: <strong>Ada (for)</strong>. The audience agrees." in box
    assert "Of 3 people who voted both times, 3 changed their minds." in box
    # The paired table, rows before and columns after: Ada's one voter went to Bob, Bob's two to Ada.
    assert '<tr><th scope="row">Ada</th><td>0</td><td>1</td><td>0</td></tr>' in box
    assert '<tr><th scope="row">Bob</th><td>2</td><td>0</td><td>0</td></tr>' in box
    assert '<tr><th scope="row">Undecided</th><td>0</td><td>0</td><td>0</td></tr>' in box

    exported = json.loads(clients[3].get(reverse("debate_share_export", args=[debate.share_token, "json"])).content)
    poll = exported["audience_poll"]
    assert poll["before"]["votes"] == {"a": 1, "b": 2, "undecided": 1}
    assert poll["after"]["shares"] == {"a": 66.7, "b": 33.3, "undecided": 0.0}
    assert poll["result"]["swing"] == {"a": 41.7, "b": -16.7}
    assert poll["result"]["audience_winner"] == "a" and poll["result"]["agrees_with_judge"] is True
    assert poll["result"]["paired"]["b"] == {"a": 2, "b": 0, "undecided": 0}
    assert poll["result"]["paired"]["a"] == {"a": 0, "b": 1, "undecided": 0}
    assert poll["result"]["changed_their_mind"] == 3
    text = json.dumps(exported)
    assert "anon:" not in text and "user:" not in text  # who voted what is nobody's to read
    markdown = clients[3].get(reverse("debate_share_export", args=[debate.share_token, "md"])).content.decode()
    assert "| Ada (for) | 25.0% (1) | 66.7% (2) | +41.7 points |" in markdown
    assert "**The judge's verdict:** Ada (for): the audience agrees." in markdown
    assert "| Bob (against) | 2 | 0 | 0 |" in markdown  # paired: both of b's voters moved to a


def test_the_vote_after_closes_by_itself_after_the_set_time(people, settings):
    settings.CHAOSLM_POLL_AFTER_MINUTES = 10
    debate = poll_duel(people["owner"])
    first_statement(debate)
    finish(debate, minutes_ago=11, winner="Bob")
    _, vote_url, box_url = share_urls(debate)
    response = vote(Client(), vote_url, "after", "a")
    assert response.status_code == 409 and "is closed" in response.content.decode()
    box = Client().get(box_url).content.decode()
    assert "none, a tie" in box  # nobody voted
    assert PollVote.objects.count() == 0


# -- what must not count --------------------------------------------------------------------------------------------
def test_a_vote_on_a_closed_or_unopened_poll_an_unknown_option_or_phase_is_refused(people):
    debate = poll_duel(people["owner"])
    _, vote_url, _ = share_urls(debate)
    client = Client()
    refused = vote(client, vote_url, "after", "a")
    assert refused.status_code == 409 and "has not opened yet" in refused.content.decode()
    wrong = vote(client, vote_url, "before", "judge")
    assert wrong.status_code == 400 and "not one of this vote&#x27;s options" in wrong.content.decode()
    assert vote(client, vote_url, "during", "a").status_code == 404
    assert vote(client, vote_url, "before", "<script>").status_code == 400
    first_statement(debate)
    closed = vote(client, vote_url, "before", "a")
    assert closed.status_code == 409 and "before-debate vote is closed" in closed.content.decode()
    assert PollVote.objects.count() == 0


def test_malformed_votes_get_a_message_and_a_4xx_never_a_500(people):
    debate = poll_duel(people["owner"])
    _, vote_url, box_url = share_urls(debate)
    client = Client()
    assert client.post(vote_url, {}).status_code == 404  # no phase
    assert client.post(vote_url, {"phase": "before"}).status_code == 400  # no choice
    assert vote(client, vote_url, "before", "a" * 10_000).status_code == 400
    assert vote(client, vote_url, "before", "a\x00").status_code == 400
    assert vote(client, vote_url, "before\u00e9", "a").status_code == 404
    assert client.get(vote_url).status_code == 405
    assert client.post(box_url).status_code == 405
    # Another site's form cannot vote for its visitors: no CSRF token, no vote.
    assert vote(Client(enforce_csrf_checks=True), vote_url, "before", "a").status_code == 403
    assert PollVote.objects.count() == 0


def test_a_private_debate_is_a_404_to_those_who_may_not_see_it(people):
    debate = poll_duel(people["owner"], visibility="unlisted")
    stranger = Client()
    stranger.force_login(people["other"])
    assert vote(stranger, reverse("debate_poll_vote", args=[debate.pk]), "before", "a").status_code == 404
    assert stranger.get(reverse("debate_poll", args=[debate.pk])).status_code == 404
    debate.visibility = "private"
    debate.save()
    _, vote_url, box_url = share_urls(debate)
    assert vote(Client(), vote_url, "before", "a").status_code == 404
    assert Client().get(box_url).status_code == 404
    assert vote(Client(), reverse("debate_share_poll_vote", args=["no-such-token"]), "before", "a").status_code == 404
    assert PollVote.objects.count() == 0


def test_a_forged_or_replayed_cookie_is_refused_cleared_and_nothing_counted(people):
    debate = poll_duel(people["owner"])
    _, vote_url, _ = share_urls(debate)
    genuine = signing.dumps("anon:someone", salt=SALT)
    forged = [
        genuine[:-2] + ("AA" if not genuine.endswith("AA") else "BB"),  # a changed signature
        signing.dumps("anon:someone", salt="another.purpose"),  # signed for something else
        signing.dumps("user:1", salt=SALT),  # a genuine signature over something not a voter id
    ]
    for value in forged:
        client = Client()
        client.cookies[COOKIE] = value
        response = vote(client, vote_url, "before", "a")
        assert response.status_code == 400 and "could not be verified" in response.content.decode()
        assert response.cookies[COOKIE]["max-age"] == 0  # cleared: the next vote gets a fresh id

    class LongAgo(signing.TimestampSigner):
        def timestamp(self):
            return signing.b62_encode(int(timezone.now().timestamp()) - 31 * 86400)

    client = Client()
    client.cookies[COOKIE] = LongAgo(salt=SALT).sign_object("anon:someone")
    response = vote(client, vote_url, "before", "a")
    assert response.status_code == 400 and "too old" in response.content.decode()
    assert PollVote.objects.count() == 0
    client.cookies[COOKIE] = genuine
    assert vote(client, vote_url, "before", "a").status_code == 302
    assert list(PollVote.objects.values_list("voter", flat=True)) == ["anon:someone"]


def test_one_address_may_cast_only_so_many_votes_a_minute(people, settings):
    settings.CHAOSLM_POLL_VOTES_PER_MINUTE = 3
    debate = poll_duel(people["owner"])
    _, vote_url, _ = share_urls(debate)
    for _ in range(3):
        assert vote(Client(), vote_url, "before", "a").status_code == 302
    refused = vote(Client(), vote_url, "before", "a")
    assert refused.status_code == 429 and "Too many votes" in refused.content.decode()
    assert PollVote.objects.count() == 3


def test_only_the_owner_closes_the_vote_after(people):
    debate = poll_duel(people["owner"], visibility="public")
    first_statement(debate)
    other = Client()
    other.force_login(people["other"])
    url = reverse("debate_poll_close", args=[debate.pk])
    assert other.post(url).status_code == 403
    owner = Client()
    owner.force_login(people["owner"])
    assert owner.post(url).status_code == 409  # nothing to close before the end
    finish(debate)
    assert owner.post(url).status_code == 302
    debate.refresh_from_db()
    assert debate.poll_closed_at is not None
    assert votes.poll_of(debate).open_phase(timezone.now()) is None


# -- live -----------------------------------------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)  # the push that ends the interval reads the votes from another thread
def test_a_vote_pushes_its_tally_only_to_those_who_voted_in_it_at_most_once_a_second_and_once_more_after(people):
    debate = poll_duel(people["owner"], visibility="public")
    layer = get_channel_layer()
    voters_page, other_page = async_to_sync(layer.new_channel)(), async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(live.debate_tally_group(debate.pk, "before"), voters_page)
    async_to_sync(layer.group_add)(live.debate_viewers_group(debate.pk), other_page)
    async_to_sync(layer.group_add)(live.debate_tally_group(debate.pk, "after"), other_page)
    url = reverse("debate_poll_vote", args=[debate.pk])
    for choice in ("a", "b", "a"):  # three people, at once
        assert vote(Client(), url, "before", choice).status_code == 302
    first = async_to_sync(layer.receive)(voters_page)["html"]
    assert first.startswith('<div id="poll-tally" hx-swap-oob="outerHTML">')
    assert '100% <span class="muted">(1)</span>' in first and "1 vote before" in first
    held = _receive_soon(layer, voters_page, votes.PUSH_INTERVAL + 5)["html"]  # the interval's end: two held back
    assert '67% <span class="muted">(2)</span>' in held and '33% <span class="muted">(1)</span>' in held
    assert "3 votes before" in held
    time.sleep(votes.PUSH_INTERVAL + 0.3)
    with pytest.raises(TimeoutError):  # nothing held back: nothing more
        async_to_sync(_receive_within)(layer, voters_page, 0.1)
    with pytest.raises(TimeoutError):  # a page whose viewer has not voted gets no tally (no herding)
        async_to_sync(_receive_within)(layer, other_page, 0.1)


def test_a_vote_opening_or_closing_tells_every_page_to_fetch_its_own_box_each_at_a_random_moment(people):
    debate = poll_duel(people["owner"], visibility="public")
    layer = get_channel_layer()
    page = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(live.debate_viewers_group(debate.pk), page)
    finish(debate)
    owner = Client()
    owner.force_login(people["owner"])
    assert owner.post(reverse("debate_poll_close", args=[debate.pk])).status_code == 302
    push = async_to_sync(layer.receive)(page)["html"]
    # No tally: the box is drawn for its viewer, by a page whose box shows another state (static/js/chaoslm.js),
    # a random moment into a second, so a crowd's fetches do not come at once.
    assert push == (
        '<div id="poll-ping" hidden hx-swap-oob="true"><span hx-get="poll/" hx-trigger="poll-fetch"'
        ' hx-target="#poll-box" hx-swap="outerHTML" data-poll-state="closed" data-spread-ms="1000"></span></div>'
    )


def test_the_box_says_where_the_poll_stands_as_the_pushes_do(people):
    debate = poll_duel(people["owner"], visibility="public")
    page = reverse("debate_detail", args=[debate.pk])
    shown = []
    for step in (lambda: None, lambda: first_statement(debate), lambda: finish(debate), lambda: finish(debate, 999)):
        step()
        html = Client().get(page).content.decode()
        shown.append(re.search(r'id="poll-box"[^>]*data-poll-state="(\w+)"', html).group(1))
        assert f'data-poll-state="{shown[-1]}"' in votes.current_ping(Debate.objects.get(pk=debate.pk))
    assert shown == ["before", "waiting", "after", "closed"]


def test_only_a_box_drawn_for_someone_who_voted_in_the_open_vote_carries_its_tally_ticket(people):
    debate, other = poll_duel(people["owner"], visibility="public"), poll_duel(people["owner"], visibility="public")
    page = reverse("debate_detail", args=[debate.pk])
    visitor = Client()
    assert "data-tally-ticket" not in visitor.get(page).content.decode()
    assert vote(visitor, reverse("debate_poll_vote", args=[debate.pk]), "before", "b").status_code == 302
    ticket = re.search(r'data-tally-ticket="([^"]+)"', visitor.get(page).content.decode()).group(1)
    message = json.dumps({"tally_ticket": ticket})
    assert votes.phase_of_message(message, debate.pk) == "before"
    assert votes.phase_of_message(message, other.pk) is None  # another debate's ticket
    forged = signing.dumps([debate.pk, "before"], salt="another salt")
    refused = [{"tally_ticket": forged}, {"tally_ticket": ticket + "x"}, {"tally_ticket": 5}, [ticket]]
    refused.append({"tally_ticket": ticket, "pad": "x" * 600})  # too long to be read
    for sent in [json.dumps(body) for body in refused] + ["{"]:
        assert votes.phase_of_message(sent, debate.pk) is None
    first_statement(debate)  # the vote before closes: no vote is open, so no ticket
    assert "data-tally-ticket" not in visitor.get(page).content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_page_that_sends_its_ticket_on_its_socket_receives_the_tally_as_it_moves_and_a_forged_one_does_not(people):
    debate = poll_duel(people["owner"], visibility="public")
    socket = f"/ws/debates/{debate.pk}/"
    ticket = votes.tally_ticket(debate.pk, "before")

    async def go():
        application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        pages = []
        for sent in (ticket, signing.dumps([debate.pk, "before"], salt="not ours")):
            page = WebsocketCommunicator(application, socket)
            page.scope["user"] = AnonymousUser()
            assert (await page.connect())[0]
            await page.receive_from()  # the catch-up
            await page.send_to(text_data=json.dumps({"tally_ticket": sent}))
            pages.append(page)
        await asyncio.sleep(0.2)  # the consumer has read it
        await sync_to_async(votes.cast_vote)(debate, "before", "anon:x", "b")
        assert "1 vote before" in await pages[0].receive_from()
        assert await pages[1].receive_nothing(0.5)
        for page in pages:
            await page.disconnect()

    asyncio.run(go())


async def _receive_within(layer, channel, seconds):
    return await asyncio.wait_for(layer.receive(channel), seconds)


def _receive_soon(layer, channel, seconds):
    """The next message, looked for every 0.1 s: one sent from another thread (a timer's) is already queued when
    looked for, rather than waking a wait on this thread's loop (the in-memory layer's queues are not thread-safe)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return async_to_sync(_receive_within)(layer, channel, 0.01)
        except TimeoutError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# -- the people's choice on many-speaker formats -------------------------------------------------------------------
def panel_of_speakers(owner):
    debate = Debate.objects.create(
        topic="Tea or coffee?", format="standard", owner=owner, visibility="public", audience_poll=True,
        status=Debate.Status.RUNNING,
    )  # fmt: skip
    for i, (key, role, name) in enumerate(
        [("moderator", "moderator", "Mo"), ("p1", "debater", "Ada"), ("p2", "debater", "Bob"), ("p3", "debater", "Cy")]
    ):
        Seat.objects.create(debate=debate, key=key, role=role, name=name, order=i)
    return debate


def test_a_many_speaker_debate_has_one_vote_after_the_end_for_who_argued_best(people):
    debate = panel_of_speakers(people["owner"])
    url = reverse("debate_poll_vote", args=[debate.pk])
    poll = votes.poll_of(debate)
    assert poll.options == (("p1", "Ada"), ("p2", "Bob"), ("p3", "Cy"))  # no moderator, no "undecided"
    box = Client().get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "People's choice</h3>" in box and "The vote opens when the debate ends." in box
    assert vote(Client(), url, "before", "p1").status_code == 404  # it has no vote before
    assert vote(Client(), url, "after", "p1").status_code == 409
    finish(debate, winner="")
    assert vote(Client(), url, "after", "moderator").status_code == 400
    assert vote(Client(), url, "after", "undecided").status_code == 400
    for choice in ("p2", "p2", "p1"):
        assert vote(Client(), url, "after", choice).status_code == 302
    debate.poll_closed_at = timezone.now()
    debate.save()
    box = Client().get(reverse("debate_poll", args=[debate.pk])).content.decode()
    assert "After the debate: who argued best?" not in box
    assert "The people's choice: <strong>Bob</strong>" in box
    assert "67%" in box and "33%" in box and "Before" not in box and "Swing" not in box
    exported = json.loads(Client().get(reverse("debate_export", args=[debate.pk, "json"])).content)["audience_poll"]
    assert exported == {
        "kind": "peoples_choice",
        "options": [{"key": "p1", "label": "Ada"}, {"key": "p2", "label": "Bob"}, {"key": "p3", "label": "Cy"}],
        "after": {"votes": {"p1": 1, "p2": 2, "p3": 0}, "shares": {"p1": 33.3, "p2": 66.7, "p3": 0.0}},
        "result": {"peoples_choice": "p2"},
    }
    markdown = Client().get(reverse("debate_export", args=[debate.pk, "md"])).content.decode()
    assert "| Bob | 66.7% (2) |" in markdown and "**The people's choice:** Bob" in markdown


# -- creating a debate with a poll ----------------------------------------------------------------------------------
def test_the_form_offers_the_poll_checked_and_a_new_debate_has_one_unless_a_batch_made_it(people, client):

    client.force_login(people["owner"])
    form = client.get(reverse("debate_new")).content.decode()
    assert 'name="audience_poll" aria-describedby="id_audience_poll_helptext" id="id_audience_poll" checked>' in form
    import_personas(
        [
            ("a.yaml", "name: Ann\nrole: debater\npersonality: Ann.\n"),
            ("b.yaml", "name: Ben\nrole: debater\npersonality: Ben.\n"),
        ]
    )
    seats = {
        "a": SeatChoice(persona=Persona.objects.get(name="Ann")),
        "b": SeatChoice(persona=Persona.objects.get(name="Ben")),
    }

    def made(**kwargs):
        return create_debate(format_name="duel", topic="T?", seats=seats, visibility="public", **kwargs).audience_poll

    assert made() is True
    assert made(in_batch=True) is False
    assert made(audience_poll=False) is False


@pytest.mark.django_db(transaction=True)
def test_the_debate_command_has_the_poll_on_unless_told_no_poll(llm_server):

    call_command(
        "import_personas", str(Path(__file__).resolve().parents[2] / "personas" / "samples"), stdout=StringIO()
    )
    duel = ["duel", "--topic", "Cars?", "--a", "Ada Sterling", "--b", "Marcus Vale", "--turns", "1"]
    call_command("debate", *duel, "--visibility", "public", stdout=StringIO())
    call_command("debate", *duel, "--visibility", "public", "--no-poll", stdout=StringIO())
    assert list(Debate.objects.order_by("pk").values_list("audience_poll", flat=True)) == [True, False]


def test_a_finished_debate_with_an_open_vote_has_a_way_to_it_from_the_top(people):
    """On a phone the vote sits under the whole transcript: a link near the top of the page goes to it."""
    debate = poll_duel(people["owner"])
    page = share_urls(debate)[0]
    first_statement(debate)
    finish(debate)
    html = Client().get(page).content.decode()
    jump = re.search(r'<p class="vote-jump"><a href="#([\w-]+)">Vote on this debate <span aria-hidden="true">', html)
    assert jump and f'id="{jump[1]}"' in html and jump[1] == "poll-box"
    assert html.index('class="vote-jump"') < html.index('id="transcript"') < html.index('id="poll-box"')
    # Once the vote has closed the link still leads to its result; a debate with no vote has none.
    owner = Client()
    owner.force_login(people["owner"])
    owner.post(reverse("debate_poll_close", args=[debate.pk]))
    assert '<a href="#poll-box">The audience vote' in Client().get(page).content.decode()
    Debate.objects.filter(pk=debate.pk).update(audience_poll=False)
    assert "vote-jump" not in Client().get(page).content.decode()
