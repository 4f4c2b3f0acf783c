"""The audience's Oxford poll on a two-sided debate: its phases and options, casting a vote, what each viewer sees.

The phases are read from what the debate already records (its transcript is its state), never stored:

- *before*: open from the debate's creation until its first public statement by a debater (a public TURN
  event from a seat with a side), or until it ends, whichever comes first;
- *after*: open from the moment the debate completes (a verdict, or the owner's end) for
  CHAOSLM_POLL_AFTER_MINUTES, or until the owner closes it sooner (`poll_closed_at`, the one stored fact).

A vote names a side (or, in an evidence debate, an answer) or "undecided"; each voter ("user:<id>" or an
anonymous cookie's "anon:<id>") has one vote per phase, which they may change while it is open. Nobody sees
who voted what; a viewer sees a phase's tally only after voting in it or once it has closed (no herding).
The arithmetic is audience/polls.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils import timezone

from audience import polls
from audience.models import PollVote
from chaoslm import live
from debates.models import Debate, Event

# The roles that do not argue: a people's choice is among the other seats.
NOT_SPEAKERS = ("moderator", "judge")
PHASES = (PollVote.Phase.BEFORE, PollVote.Phase.AFTER)
# At most one push of a vote's tally per debate in this many seconds, and one more at its end for the votes
# it held back (the interval is held in the cache, so across web processes when that is Redis).
PUSH_INTERVAL = 1.0
# A push that opens or closes a vote reaches every open page in the same instant, and each page must then fetch
# its own box: each waits a random moment up to this long first, so a crowd's fetches spread over a second
# instead of landing on the server all at once (bench/votes.py: five hundred pages fetching in one instant
# ran PostgreSQL out of connections).
SPREAD_MS = 1000
# What a page shows to be let into its vote's tally group (`tally_ticket`): signed, so only a vote gets one.
TICKET_SALT = "chaoslm.poll.tally"


class PollError(Exception):
    """A vote that is not counted: the message says why, `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def has_poll(debate: Debate) -> bool:
    """Whether the debate's audience votes: its owner turned the poll on, its format has a poll (`Format.poll`: two
    sides to take, or a people's choice), and it has an audience (a private debate has none; made unlisted or
    public, its poll appears)."""
    return debate.audience_poll and bool(debate.fmt.poll) and debate.visibility != Debate.Visibility.PRIVATE


@dataclass(frozen=True)
class Phase:
    name: str
    opens_at: datetime | None  # None: not yet
    closes_at: datetime | None  # None: not yet known

    def is_open(self, now: datetime) -> bool:
        return self.opens_at is not None and self.opens_at <= now and (self.closes_at is None or now < self.closes_at)

    def is_closed(self, now: datetime) -> bool:
        return self.closes_at is not None and self.closes_at <= now


@dataclass(frozen=True)
class Poll:
    options: tuple[tuple[str, str], ...]  # (key, label): each side's seat, then undecided
    short: dict[str, str]  # each option's short name, for the paired table's columns: the debater, or A and B
    before: Phase
    after: Phase
    judge_choice: str | None  # the option the judge's verdict names, if it names one
    peoples: bool = False  # a people's choice: one vote, after, for a participant (no undecided, no before)

    @property
    def options_keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.options)

    @property
    def sides(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.options if key != polls.UNDECIDED)

    def label(self, key: str) -> str:
        return dict(self.options).get(key, key)

    @property
    def phases(self) -> tuple[Phase, ...]:
        return (self.after,) if self.peoples else (self.before, self.after)

    def phase(self, name: str) -> Phase | None:
        return next((p for p in self.phases if p.name == name), None)

    def finished(self, now: datetime) -> bool:
        """Whether every vote it has is closed: its result may be shown."""
        return (self.peoples or self.before.is_closed(now)) and self.after.is_closed(now)

    def winner(self, result: polls.Result) -> str | None:
        """The audience's pick: the larger gain, or for a people's choice the most votes."""
        return polls.plurality(result.after, self.sides) if self.peoples else result.winner

    def open_phase(self, now: datetime) -> Phase | None:
        return next((p for p in self.phases if p.is_open(now)), None)


def _first_statement_at(debate: Debate) -> datetime | None:
    public_turns = debate.events.filter(kind=Event.Kind.TURN, visibility=Event.Visibility.PUBLIC, seat__side__gt="")
    return public_turns.order_by("ordinal").values_list("created_at", flat=True).first()


def poll_of(debate: Debate) -> Poll | None:
    """The debate's poll as it stands, or None when it has none."""
    if not has_poll(debate):
        return None
    fmt = debate.fmt
    peoples = fmt.poll == "people"
    seats = list(debate.seats.all())
    # A side is voted for by its first seat (a team's first speaker stands for the team).
    by_key = {seat.key: seat for seat in seats}
    firsts = [side.seats[0] for side in fmt.sides if side.seats]
    sided = [by_key[key] for key in firsts if key in by_key]
    # Sides that argue answers (an evidence debate's A and B) are named by their answers, in the order of the sides.
    answers = debate.options.get(fmt.side_answers_option) if fmt.side_answers_option else None
    options, short = [], {polls.UNDECIDED: "Undecided"}
    if peoples:
        speakers = [seat for seat in seats if seat.role not in NOT_SPEAKERS]
        options = [(seat.key, seat.name) for seat in speakers]
        short.update(options)
    # A team (a side of several seats) is named by its label, as its verdict names it ("Government").
    teams = {side.seats[0]: side.label for side in fmt.sides if len(side.seats) > 1}
    for seat in [] if peoples else sided:
        index = firsts.index(seat.key)
        if isinstance(answers, list) and index < len(answers):
            label, short[seat.key] = f"{seat.side}: {answers[index]}", seat.side
        elif seat.key in teams:
            label, short[seat.key] = f"{teams[seat.key]} ({seat.name} and team)", teams[seat.key]
        else:
            label, short[seat.key] = f"{seat.name} ({seat.side})", seat.name
        options.append((seat.key, label))
    if not peoples:
        options.append((polls.UNDECIDED, "Undecided"))
    ended = debate.finished_at or debate.updated_at if debate.status == Debate.Status.COMPLETED else None
    first = _first_statement_at(debate)
    before_closes = min((t for t in (first, ended) if t is not None), default=None)
    after_closes = None
    if ended is not None:
        after_closes = ended + timedelta(minutes=settings.CHAOSLM_POLL_AFTER_MINUTES)
        if debate.poll_closed_at is not None:
            after_closes = min(after_closes, max(debate.poll_closed_at, ended))
    judge = next((s.key for s in sided if debate.winner and debate.winner in (s.name, s.side, teams.get(s.key))), None)
    return Poll(
        options=tuple(options),
        short=short,
        before=Phase(PollVote.Phase.BEFORE, debate.created_at, before_closes),
        after=Phase(PollVote.Phase.AFTER, ended, after_closes),
        judge_choice=None if peoples else judge,
        peoples=peoples,
    )


def cast_vote(debate: Debate, phase_name: str, voter: str, choice: str, now: datetime | None = None) -> None:
    """Count `voter`'s vote for `choice` in the phase, replacing their earlier one; PollError if it cannot count.

    One statement (INSERT ... ON CONFLICT DO UPDATE): twenty copies of one vote at once leave one row.
    """
    now = now or timezone.now()
    poll = poll_of(debate)
    if poll is None:
        raise PollError("This debate has no audience vote.", 404)
    phase = poll.phase(phase_name)
    if phase is None:
        raise PollError("There is no such vote: it is either before or after the debate.", 404)
    if not phase.is_open(now):
        when = "has not opened yet" if not phase.is_closed(now) else "is closed"
        raise PollError(f"The {phase.name}-debate vote {when}; your vote was not counted.", 409)
    if choice not in dict(poll.options):
        raise PollError("That is not one of this vote's options; your vote was not counted.", 400)
    row = PollVote(debate=debate, phase=phase.name, voter=voter, choice=choice)
    PollVote.objects.bulk_create(
        [row], update_conflicts=True, unique_fields=["debate", "phase", "voter"], update_fields=["choice", "updated_at"]
    )
    push_poll_changed(debate.pk)


def close_after_vote(debate: Debate, now: datetime | None = None) -> None:
    """The owner closes the after-debate vote now (PollError unless it is open)."""
    now = now or timezone.now()
    poll = poll_of(debate)
    if poll is None or not poll.after.is_open(now):
        raise PollError("The after-debate vote is not open.", 409)
    Debate.objects.filter(pk=debate.pk).update(poll_closed_at=now)
    debate.poll_closed_at = now
    live.push_to_debate_sync(debate.pk, poll_ping(CLOSED))


# Where a poll stands, besides an open vote's name: between the two votes, or both closed.
WAITING, CLOSED = "waiting", "closed"


def poll_state(poll: Poll, now: datetime) -> str:
    """The open vote's name, else WAITING or CLOSED: a page's box is drawn again only when this changes."""
    open_phase = poll.open_phase(now)
    return open_phase.name if open_phase else (CLOSED if poll.finished(now) else WAITING)


def poll_ping(state: str) -> str:
    """The push that makes a page whose box shows another `poll_state` fetch its own box (a vote opened or
    closed): the server decides per viewer what the box shows. The address is relative to the page, so a
    debate's page and its share page each fetch from their own. static/js/chaoslm.js sends the span its
    "poll-fetch" a random part of the spread on."""
    return (
        '<div id="poll-ping" hidden hx-swap-oob="true">'
        f'<span hx-get="poll/" hx-trigger="poll-fetch" hx-target="#poll-box" hx-swap="outerHTML"'
        f' data-poll-state="{state}" data-spread-ms="{SPREAD_MS}"></span></div>'
    )


def current_ping(debate: Debate) -> str:
    """`poll_ping` for the poll as the database has it ("" for a debate without a poll)."""
    poll = poll_of(debate)
    return poll_ping(poll_state(poll, timezone.now())) if poll is not None else ""


def push_poll_changed(debate_id: int) -> None:
    """A vote was cast: the open vote's tally goes to the pages of those who voted in it (no one else may see
    it), at most once per PUSH_INTERVAL, and once more at the interval's end if votes came in meanwhile."""
    # Marked before the interval is claimed: whoever holds the interval finds the mark when it ends.
    cache.set(_held_key(debate_id), 1, timeout=PUSH_INTERVAL * 10)
    if cache.add(_interval_key(debate_id), 1, timeout=PUSH_INTERVAL):
        _push_tally(debate_id)


def _interval_key(debate_id: int) -> str:
    return f"poll-push:{debate_id}"


def _held_key(debate_id: int) -> str:
    return f"poll-held:{debate_id}"


def _push_tally(debate_id: int) -> None:
    cache.delete(_held_key(debate_id))  # this push reads every vote stored until now
    debate = Debate.objects.filter(pk=debate_id).first()
    pushed = tally_push(debate) if debate is not None else None
    if pushed is not None:
        live.push_sync(live.debate_tally_group(debate_id, pushed[0]), pushed[1])
    # A little after the interval's end (its key expires first), for the votes it held back.
    live.later(PUSH_INTERVAL + 0.05, lambda: _push_held(debate_id))


def _push_held(debate_id: int) -> None:
    # Another process may have claimed the next interval since (its push carries the held votes): then it
    # is its push; without held votes there is nothing to send.
    if cache.get(_held_key(debate_id)) and cache.add(_interval_key(debate_id), 1, timeout=PUSH_INTERVAL):
        _push_tally(debate_id)


def tally_push(debate: Debate, now: datetime | None = None) -> tuple[str, str] | None:
    """The open vote's name and its tally as someone who voted in it sees it (an out-of-band swap of the box's
    tally), or None when no vote is open."""
    now = now or timezone.now()
    poll = poll_of(debate)
    open_phase = poll.open_phase(now) if poll is not None else None
    if poll is None or open_phase is None:
        return None
    # Drawn for someone who voted in the open vote only: whether they voted in the other shows nothing more.
    voted = {phase: "voted" if phase == open_phase.name else None for phase in PHASES}
    tally = _tally(poll, _votes(debate, PollVote.Phase.BEFORE), _votes(debate, PollVote.Phase.AFTER), voted, now)
    return open_phase.name, render_to_string("audience/_poll_tally.html", {"box": tally, "oob": True})


def tally_ticket(debate_id: int, phase: str) -> str:
    """What a voter's page sends on its socket to join `phase`'s tally group (debates/consumers.py)."""
    return signing.dumps([debate_id, phase], salt=TICKET_SALT)


# A socket's message longer than this is no ticket: it is not parsed.
TICKET_MESSAGE_CHARS = 512


def phase_of_message(message: str, debate_id: int) -> str | None:
    """The vote whose tally a page's socket message `{"tally_ticket": ...}` lets it watch, or None for anything
    else: a ticket this site did not sign for this debate, or a message that is no ticket."""
    if len(message) > TICKET_MESSAGE_CHARS:
        return None
    try:
        ticket = json.loads(message).get("tally_ticket")
        signed = signing.loads(ticket, salt=TICKET_SALT)
    except (ValueError, AttributeError, TypeError, signing.BadSignature):
        return None
    if not isinstance(signed, list) or len(signed) != 2 or signed[0] != debate_id or signed[1] not in PHASES:
        return None
    return signed[1]


def _votes(debate: Debate, phase: str) -> dict[str, str]:
    # Voter ids stay in here: only counts leave this module.
    return dict(debate.poll_votes.filter(phase=phase).values_list("voter", "choice"))


def _rows(poll: Poll, result: polls.Result, show_before: bool, show_after: bool) -> list[dict[str, Any]]:
    return [
        {
            "key": key,
            "label": label,
            "before": result.before[key] if show_before else None,
            "before_share": result.before_share[key] if show_before else None,
            "after": result.after[key] if show_after else None,
            "after_share": result.after_share[key] if show_after else None,
            "swing": result.swing.get(key) if show_before and show_after else None,
        }
        for key, label in poll.options
    ]


def box(debate: Debate, voter: str | None, now: datetime | None = None) -> dict[str, Any] | None:
    """What the poll box shows `voter` (None: someone who has not voted yet): the open phase and their own
    vote in it, and each phase's tally only once they voted in it or it closed; the result once both closed."""
    now = now or timezone.now()
    poll = poll_of(debate)
    if poll is None:
        return None
    before, after = _votes(debate, PollVote.Phase.BEFORE), _votes(debate, PollVote.Phase.AFTER)
    mine = {PollVote.Phase.BEFORE: before.get(voter or ""), PollVote.Phase.AFTER: after.get(voter or "")}
    shown = _tally(poll, before, after, mine, now)
    open_phase = poll.open_phase(now)
    my_choice = mine[open_phase.name] if open_phase else None
    return {
        **shown,
        "open_phase": open_phase.name if open_phase else "",
        "closes_at": open_phase.closes_at if open_phase else None,
        "my_choice": my_choice,
        "my_label": poll.label(my_choice) if my_choice else "",
        "state": poll_state(poll, now),
        # Shown by a page whose viewer voted in the open vote: its socket then receives the tally as it moves.
        "tally_ticket": tally_ticket(debate.pk, open_phase.name) if my_choice else "",
        # A page whose vote closes on its own refetches its box then, so it shows the result unasked.
        "refresh_in": max(1, int((open_phase.closes_at - now).total_seconds()) + 1)
        if open_phase and open_phase.closes_at
        else None,
    }


def _tally(
    poll: Poll, before: Mapping[str, str], after: Mapping[str, str], mine: Mapping[str, str | None], now: datetime
) -> dict[str, Any]:
    """The tally and result part of the box, from each vote's ballots, for someone whose own votes are `mine`."""
    result = polls.result(poll.sides, before, after)
    show_before = not poll.peoples and (
        poll.before.is_closed(now) or (poll.before.is_open(now) and bool(mine["before"]))
    )
    show_after = poll.after.is_closed(now) or (poll.after.is_open(now) and bool(mine["after"]))
    final = poll.finished(now)
    winner = poll.winner(result) if final else None
    return {
        "poll": poll,
        "show_before": show_before,
        "show_after": show_after,
        "before_total": sum(result.before.values()),
        "after_total": sum(result.after.values()),
        "rows": _rows(poll, result, show_before, show_after),
        "final": final,
        "result": result if final else None,
        "winner_label": poll.label(winner) if winner else "",
        "judge_label": poll.label(poll.judge_choice) if poll.judge_choice else "",
        "agrees": polls.agrees(winner, poll.judge_choice) if final else None,
        "paired_rows": _paired_rows(poll, result) if final and not poll.peoples else [],
        "paired_columns": [poll.short[key] for key, _ in poll.options],
    }


def _paired_rows(poll: Poll, result: polls.Result) -> list[dict[str, Any]]:
    return [
        {"label": poll.short[key], "cells": [result.paired[key][other] for other, _ in poll.options]}
        for key, _ in poll.options
    ]


def export(debate: Debate, now: datetime | None = None) -> dict[str, Any] | None:
    """The poll for the transcript exports: counts only, and only of the phases that have closed."""
    now = now or timezone.now()
    poll = poll_of(debate)
    if poll is None:
        return None
    result = polls.result(poll.sides, _votes(debate, PollVote.Phase.BEFORE), _votes(debate, PollVote.Phase.AFTER))
    closed = {p.name: p.is_closed(now) for p in (poll.before, poll.after)}
    if poll.peoples:
        after = phase_counts(result.after, result.after_share, poll.sides) if closed[PollVote.Phase.AFTER] else None
        return {
            "kind": "peoples_choice",
            "options": [{"key": key, "label": label} for key, label in poll.options],
            "after": after,
            "result": {"peoples_choice": poll.winner(result)} if after is not None else None,
        }

    def phase(counts: Mapping[str, int], shares: Mapping[str, float], name: str) -> dict[str, Any] | None:
        return phase_counts(counts, shares, poll.options_keys) if closed[name] else None

    data: dict[str, Any] = {
        "kind": "oxford",
        "options": [{"key": key, "label": label} for key, label in poll.options],
        "before": phase(result.before, result.before_share, PollVote.Phase.BEFORE),
        "after": phase(result.after, result.after_share, PollVote.Phase.AFTER),
        "result": None,
    }
    if all(closed.values()):
        data["result"] = {
            "swing": {k: round(v, 1) for k, v in result.swing.items()},
            "audience_winner": result.winner,
            "judge_winner": poll.judge_choice,
            "agrees_with_judge": polls.agrees(result.winner, poll.judge_choice),
            "voted_both_times": result.paired_voters,
            "changed_their_mind": result.changed,
            "paired": result.paired,
        }
    return data


def phase_counts(counts: Mapping[str, int], shares: Mapping[str, float], keys: tuple[str, ...]) -> dict[str, Any]:
    """One closed phase in an export: the votes and shares (rounded to a tenth of a point) of each option."""
    return {"votes": {k: counts[k] for k in keys}, "shares": {k: round(shares[k], 1) for k in keys}}


def export_markdown(data: Mapping[str, Any] | None) -> list[str]:
    """The Markdown export's lines for the poll `export` returned (none without a poll)."""
    if data is None:
        return []
    if data["kind"] == "peoples_choice":
        return _peoples_markdown(data)
    labels = {o["key"]: o["label"] for o in data["options"]}
    lines = ["", "## Audience vote", ""]
    before, after, result = data["before"], data["after"], data["result"]
    if before is None:
        return [*lines, "The vote before the debate is still open.", ""]
    lines += ["| | Before | After | Swing |", "|---|---|---|---|"]
    for key, label in labels.items():
        swing = result["swing"].get(key) if result else None
        cells = [
            f"{before['shares'][key]:.1f}% ({before['votes'][key]})",
            f"{after['shares'][key]:.1f}% ({after['votes'][key]})" if after else "open",
            f"{swing:+.1f} points" if swing is not None else "",
        ]
        lines.append(f"| {_cell(label)} | " + " | ".join(cells) + " |")
    lines.append("")
    if result is None:
        return [*lines, "The vote after the debate is still open or yet to come.", ""]
    winner = labels.get(result["audience_winner"] or "", "")
    lines.append(f"**Audience's winner (the larger gain):** {_cell(winner) if winner else 'none (a tie)'}")
    if result["judge_winner"]:
        verdict = "agrees" if result["agrees_with_judge"] else "disagrees"
        lines.append(f"**The judge's verdict:** {_cell(labels[result['judge_winner']])}: the audience {verdict}.")
    lines += [
        "",
        f"Of {result['voted_both_times']} people who voted both times, "
        f"{result['changed_their_mind']} changed their mind.",
        "",
        "| Before \\ After | " + " | ".join(_cell(label) for label in labels.values()) + " |",
        "|---|" + "---|" * len(labels),
    ]
    for key, label in labels.items():
        lines.append(f"| {_cell(label)} | " + " | ".join(str(result["paired"][key][k]) for k in labels) + " |")
    return [*lines, ""]


def _cell(text: str) -> str:
    """A label inside a Markdown table: a pipe would end the cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _peoples_markdown(data: Mapping[str, Any]) -> list[str]:
    labels = {o["key"]: o["label"] for o in data["options"]}
    lines = ["", "## People's choice", ""]
    after = data["after"]
    if after is None:
        return [*lines, "The vote after the debate is still open or yet to come.", ""]
    lines += ["| | Votes |", "|---|---|"]
    lines += [
        f"| {_cell(label)} | {after['shares'][key]:.1f}% ({after['votes'][key]}) |" for key, label in labels.items()
    ]
    choice = data["result"]["peoples_choice"]
    return [*lines, "", f"**The people's choice:** {_cell(labels[choice]) if choice else 'none (a tie)'}", ""]
