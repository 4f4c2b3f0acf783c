"""The audience poll's pages: a vote, the poll box alone (what open pages fetch when told the poll changed),
and the owner's close. A debate's own address and its share link each have their own, with the same rule of
who may see the debate (chaoslm/sharing.py). The poll itself is audience/votes.py.

Who votes (one voter): a signed-in person by their account; anyone else by their browser, a voter id in a signed
cookie (django.core.signing) set with their first vote. A cookie whose signature fails (forged) or that is older
than CHAOSLM_POLL_COOKIE_DAYS (replayed from long ago) is refused and cleared: nothing is counted. Every
vote is also counted against its address: at most CHAOSLM_POLL_VOTES_PER_MINUTE a minute.

A new visitor's first vote has no cookie yet, so its voter id comes from the form it was posted with: each vote
form carries a random ballot token (`new_ballot`), and the voter id is a keyed hash of it. The same form posted
twice at once (a double click, a resent request) is then the same voter twice, and the database's one vote per
voter keeps one; two forms (two tabs opened before any vote) are two ballots.
"""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.crypto import salted_hmac
from django.views.decorators.http import require_GET, require_POST

from audience import votes
from chaoslm import limits, sharing
from chaoslm.http import message_reply
from chaoslm.security import client_ip
from debates.models import Debate

COOKIE = "chaoslm_voter"
SALT = "chaoslm.poll.voter"
ANON = "anon:"
BALLOT = "ballot"  # the vote forms' field
BALLOT_SALT = "chaoslm.poll.ballot"
BALLOT_FORM = re.compile(r"[A-Za-z0-9_-]{16,64}")


def new_ballot() -> str:
    """A vote form's ballot token: a new anonymous voter's id is drawn from it (`voter_to_vote`)."""
    return secrets.token_urlsafe(18)


def _ballot_voter(ballot: str) -> str | None:
    # Keyed, so a ballot names no voter id anyone could aim at: choosing a ballot makes a new voter, never another's.
    if not BALLOT_FORM.fullmatch(ballot):
        return None
    return ANON + salted_hmac(BALLOT_SALT, ballot).hexdigest()[:32]


class BadCookie(votes.PollError):
    """The voter cookie was not one this site signed, or is too old: it is cleared with the refusal."""


def _cookie_voter(request: HttpRequest) -> str | None:
    """The anonymous voter id the request's cookie holds (None without one); BadCookie if it is not valid."""
    raw = request.COOKIES.get(COOKIE)
    if raw is None:
        return None
    try:
        voter = signing.loads(raw, salt=SALT, max_age=timedelta(days=settings.CHAOSLM_POLL_COOKIE_DAYS))
    except signing.SignatureExpired:
        raise BadCookie("Your voting cookie is too old to be trusted; it has been cleared. Vote again.") from None
    except signing.BadSignature:
        raise BadCookie("Your voting cookie could not be verified; it has been cleared. Vote again.") from None
    if not isinstance(voter, str) or not voter.startswith(ANON) or len(voter) > 64:
        raise BadCookie("Your voting cookie could not be verified; it has been cleared. Vote again.")
    return voter


def viewer(request: HttpRequest) -> str | None:
    """Who is looking, as the poll knows voters; None for someone who has not voted (or whose cookie is bad)."""
    if request.user.is_authenticated:
        return f"user:{request.user.pk}"
    try:
        return _cookie_voter(request)
    except BadCookie:
        return None


def _urls(debate: Debate, via_share: bool) -> dict[str, str]:
    if via_share:
        token = debate.share_token
        return {
            "vote_url": reverse("debate_share_poll_vote", args=[token]),
            "poll_url": reverse("debate_share_poll", args=[token]),
            "back_url": reverse("debate_share", args=[token]),
        }
    return {
        "vote_url": reverse("debate_poll_vote", args=[debate.pk]),
        "poll_url": reverse("debate_poll", args=[debate.pk]),
        "back_url": reverse("debate_detail", args=[debate.pk]),
    }


def box_context(
    request: HttpRequest, debate: Debate, *, via_share: bool = False, voter: str | None = None
) -> dict[str, Any] | None:
    """The poll box's context for this viewer (`voter`: who just voted, else read from the request), or None
    for a debate without a poll."""
    box = votes.box(debate, voter or viewer(request))
    if box is None:
        return None
    owner = sharing.is_owner(request.user, debate)
    can_close = owner and box["open_phase"] == votes.PollVote.Phase.AFTER
    close_url = reverse("debate_poll_close", args=[debate.pk]) if can_close else ""
    return {**box, **_urls(debate, via_share), "close_url": close_url, "ballot": new_ballot()}


def _box_response(request: HttpRequest, debate: Debate, via_share: bool, voter: str | None = None) -> HttpResponse:
    return render(
        request, "audience/_poll.html", {"box": box_context(request, debate, via_share=via_share, voter=voter)}
    )


def vote_wait(request: HttpRequest) -> int | None:
    """The seconds to wait for an address past CHAOSLM_POLL_VOTES_PER_MINUTE votes in the last 60 seconds (this one
    counted when allowed), else None. Every kind of vote (polls, the arenas, on a page or over the API) shares the
    one count."""
    return limits.rate(f"chaoslm:votes:{client_ip(request)}", settings.CHAOSLM_POLL_VOTES_PER_MINUTE)


def too_many_votes(wait: int) -> str:
    return f"Too many votes from your address; try again in {wait} seconds."


def over_limit(request: HttpRequest) -> HttpResponse | None:
    """`vote_wait`'s 429 with its Retry-After, else None."""
    wait = vote_wait(request)
    if wait is None:
        return None
    response = message_reply(too_many_votes(wait), 429)
    response["Retry-After"] = str(wait)
    return response


def voter_to_vote(request: HttpRequest) -> tuple[str, str]:
    """Who is voting, and the signed cookie to set when they are a new anonymous voter ("" otherwise); BadCookie
    for a cookie that is not valid. A new voter is their form's ballot's (a random one for a post without it)."""
    if request.user.is_authenticated:
        return f"user:{request.user.pk}", ""
    voter = _cookie_voter(request)
    if voter:
        return voter, ""
    voter = _ballot_voter(request.POST.get(BALLOT, "")) or ANON + secrets.token_urlsafe(18)
    return voter, signing.dumps(voter, salt=SALT)


def refusal(error: votes.PollError) -> HttpResponse:
    """A vote that is not counted: its message and status; a bad cookie is cleared, so the next vote gets a new id."""
    response = message_reply(str(error), error.status)
    if isinstance(error, BadCookie):
        response.delete_cookie(COOKIE, samesite="Lax")
    return response


def remember_voter(request: HttpRequest, response: HttpResponse, new_cookie: str) -> HttpResponse:
    """Set a new anonymous voter's signed cookie (`voter_to_vote`'s) on the response."""
    if new_cookie:
        response.set_cookie(
            COOKIE,
            new_cookie,
            max_age=int(settings.CHAOSLM_POLL_COOKIE_DAYS * 86400),
            httponly=True,
            samesite="Lax",
            secure=request.is_secure(),
        )
    return response


def _vote(request: HttpRequest, debate: Debate, via_share: bool) -> HttpResponse:
    if (limited := over_limit(request)) is not None:
        return limited
    try:
        voter, new_cookie = voter_to_vote(request)
        votes.cast_vote(debate, request.POST.get("phase", ""), voter, request.POST.get("choice", ""))
    except votes.PollError as error:
        return refusal(error)
    if request.htmx:
        response = _box_response(request, debate, via_share, voter)
    else:
        messages.success(request, "Your vote is counted. You may change it while the vote is open.")
        response = redirect(_urls(debate, via_share)["back_url"] + "#poll-box")
    return remember_voter(request, response, new_cookie)


@require_POST
def poll_vote(request: HttpRequest, pk: int) -> HttpResponse:
    return _vote(request, sharing.visible_or_404(Debate, request.user, pk=pk), via_share=False)


@require_POST
def poll_vote_shared(request: HttpRequest, token: str) -> HttpResponse:
    return _vote(request, sharing.visible_or_404(Debate, request.user, token=token), via_share=True)


@require_GET
def poll_box(request: HttpRequest, pk: int) -> HttpResponse:
    return _box_response(request, sharing.visible_or_404(Debate, request.user, pk=pk), via_share=False)


@require_GET
def poll_box_shared(request: HttpRequest, token: str) -> HttpResponse:
    return _box_response(request, sharing.visible_or_404(Debate, request.user, token=token), via_share=True)


@sharing.owner_action(Debate)
def poll_close(request: HttpRequest, debate: Debate) -> HttpResponse:
    """The owner closes the after-debate vote now; the result shows on every page."""
    try:
        votes.close_after_vote(debate)
    except votes.PollError as error:
        return message_reply(str(error), error.status)
    messages.success(request, "The vote after the debate is closed; the result is on the page.")
    return redirect("debate_detail", debate.pk)
