"""What the debate pages read: everything a page draws, in a constant number of queries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils.safestring import mark_safe

from chaoslm.costs import ZERO, SpendRow, Total, total_of, totals_by
from debates.cards import cards_of
from debates.formats import DebateConfig, FormatError, Plan, SeatInfo
from debates.models import Debate, Event, Seat
from debates.records import record_of
from debates.replay import judged_config
from debates.status import activity, status_line

SERIES_COLOURS = ("#1570ef", "#d92d20", "#12b76a", "#f79009")


@dataclass(frozen=True)
class Series:
    name: str
    colour: str
    points: str  # SVG polyline points
    dots: tuple[tuple[float, float, int], ...]
    last: int


def score_chart(seats: Sequence[Seat], events: Iterable[Event]) -> dict[str, Any]:
    """The running scores as SVG-ready series: x is the turn, y the score out of 10."""
    width, height, pad = 320, 150, 24
    by_key = {s.key: s for s in seats}
    scores: dict[str, list[tuple[int, int]]] = {}
    # A judge replay scores debaters who have no seat in it: their names come with the scores.
    named: dict[str, str] = {}
    for event in events:
        if event.kind == Event.Kind.SCORE and isinstance(event.data.get("score"), int):
            scores.setdefault(event.data.get("for", ""), []).append((event.data.get("turn", 0), event.data["score"]))
            named.setdefault(event.data.get("for", ""), str(event.data.get("for_name", "")))
    turns = max((t for series in scores.values() for t, _ in series), default=1)

    def x(turn: int) -> float:
        return pad + (width - 2 * pad) * (turn - 1) / max(turns - 1, 1)

    def y(score: int) -> float:
        return height - pad - (height - 2 * pad) * score / 10

    series = []
    for index, (key, points) in enumerate(sorted(scores.items())):
        seat = by_key.get(key)
        coords = tuple((round(x(t), 1), round(y(s), 1), s) for t, s in points)
        series.append(
            Series(
                name=seat.name if seat else named.get(key) or key,
                colour=SERIES_COLOURS[index % len(SERIES_COLOURS)],
                points=" ".join(f"{cx},{cy}" for cx, cy, _ in coords),
                dots=coords,
                last=points[-1][1],
            )
        )
    grid = [{"y": round(y(s), 1), "label": s} for s in (0, 5, 10)]
    return {"series": series, "width": width, "height": height, "grid": grid, "pad": pad}


@dataclass(frozen=True)
class RankedSide:
    """One team of a finished debate whose judge ranks its teams, as its pages show it."""

    place: int  # 1 for the best
    index: int  # its place among its format's sides, in their order (the match's entrant of that side)
    label: str  # "Closing Opposition"
    seats: tuple[tuple[str, str], ...]  # (its seat's label, the speaker's name), in its format's seat order
    teams: int  # how many teams the debate ranked

    @property
    def ordinal(self) -> str:
        """Its place as people say it: 1st, 2nd, 3rd, 4th (... 11th, 21st)."""
        place = self.place
        suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
        return f"{place}{suffix}"

    @property
    def wins(self) -> int:
        """The teams it ranked above: the pairwise results its ranking implies, won."""
        return self.teams - self.place

    @property
    def losses(self) -> int:
        return self.place - 1


def winner_stance(debate: Debate) -> str:
    """The stance ("for", "against") of the side a finished debate's verdict named, or "" if it named none: a side
    is named by its label or key (a card's team), one of its seats' names, or, in a judge replay, the name the replay
    gave it (its options' `debaters`, "Ann (Prime Minister), Ann (Whip) and ...")."""
    winner = debate.winner
    if not winner:
        return ""
    named = (debate.options or {}).get("debaters")
    if isinstance(named, dict):
        for entry in named.values():
            if isinstance(entry, dict) and entry.get("name") == winner:
                return str(entry.get("side", ""))
    seats = dict(debate.seats.values_list("key", "name"))
    for side in debate.fmt.sides:
        if winner in {side.label, side.key, *(seats.get(key) for key in side.seats)}:
            return side.stance
    return ""


def ranked_sides(debate: Debate) -> list[RankedSide]:
    """The teams of a finished debate whose judge ranks more than two, best first, as its verdict ranks them (its
    format's `outcome`, read from the judge's events); [] for any other debate, or a ranking that names not every
    team once. A team is named in a ranking by its label, its key or (a team of one seat) its speaker's name."""
    fmt = debate.fmt
    if not fmt.ranks_teams() or fmt.judge_seat is None or debate.status != Debate.Status.COMPLETED:
        return []
    config = judged_config(debate)
    judge = config.seat(fmt.judge_seat)
    events = debate.events.filter(seat__key=fmt.judge_seat) if judge is not None else Event.objects.none()
    outcome = fmt.outcome(config, [record_of(e, fmt.judge_seat) for e in events.order_by("ordinal")])
    named: dict[str, int] = {}
    for index, side in enumerate(fmt.sides):
        for name in (side.label, side.key, *(s.name for s in config.seats if s.key in side.seats)):
            named.setdefault(name, index)
    ranking = [named[n] for n in outcome.get("ranking") or [] if n in named]
    if sorted(ranking) != list(range(len(fmt.sides))):
        return []
    labels = {s.key: s.label for s in fmt.seat_specs}
    names = {s.key: s.name for s in config.seats}
    return [
        RankedSide(
            place=place,
            index=index,
            label=fmt.sides[index].label,
            seats=tuple((labels[k], names[k]) for k in fmt.sides[index].seats if k in names),
            teams=len(ranking),
        )
        for place, index in enumerate(ranking, start=1)
    ]


def listed_mine(user: Any) -> QuerySet[Debate]:
    """The debates a person started themselves, newest first. A tournament's debates (hundreds of them) are
    listed on its own page, not with these."""
    if not user.is_authenticated:
        return Debate.objects.none()
    return Debate.objects.filter(in_batch=False, owner=user)


def listed_public(user: Any) -> QuerySet[Debate]:
    """Everyone else's public debates, newest first (the person's own are in `listed_mine`)."""
    found = Debate.objects.filter(in_batch=False, visibility=Debate.Visibility.PUBLIC)
    return found.exclude(owner=user) if user.is_authenticated else found


def page_state(debate: Debate, *, thinking: bool = True) -> dict[str, Any]:
    """Everything the debate page draws, in a constant number of queries whatever its length.

    The transcript is its stored cards (debates/cards.py); only the scores and the last stage line are
    loaded as events, for the chart and the status line. Without `thinking` (debates/privacy.py), private
    events show as placeholders with no text.
    """
    seats = list(debate.seats.all())
    events = cards_of(debate.events.exclude(kind=Event.Kind.INTERNAL), thinking=thinking)
    scores = list(debate.events.filter(kind=Event.Kind.SCORE))
    stage = debate.events.filter(kind=Event.Kind.SYSTEM).order_by("-ordinal").first()
    stage_text = current_stage([stage] if stage else [])
    fmt = debate.fmt
    return {
        "debate": debate,
        "seats": seats,
        "events": events,
        "scores": scores,
        # The stored cards, concatenated: escaped and sanitized as they were rendered.
        "cards": mark_safe("".join(card.filled() for card in events)),  # noqa: S308
        "last_event_id": max((card.pk for card in events), default=0),
        "chart": score_chart(seats, scores),
        "shows_scores": fmt.scores_turns and any(s.key == fmt.judge_seat for s in seats),
        "verdict_label": fmt.verdict_label,
        "ranked": ranked_sides(debate),
        "human_seat": next((s for s in seats if s.is_human), None),
        "stage": stage_text,
        "status_line": status_line(debate, doing_now(debate, seats), stage_text, awaited=awaited(debate, seats)),
        **usage(debate, seats),
    }


def doing_now(debate: Debate, seats: Sequence[Seat]) -> list[str]:
    """What the seats of a running debate are doing now, as the status line says it ("Ada is planning").

    The transcript is the state: the steps the format finds ready on the stored events are the ones the
    engine runs, so a page that has just loaded names them as the live pushes do.
    """
    if debate.status != Debate.Status.RUNNING:
        return []
    plan = _plan(debate, seats)
    if plan is None:
        return []
    fmt = debate.fmt
    names = {s.key: s.name for s in seats}
    return [
        activity(names.get(step.seat, step.seat), step, fmt, debate.options)
        for step in plan.steps
        if step.calls_llm and step.seat
    ]


def awaited(debate: Debate, seats: Sequence[Seat]) -> str:
    """The step a debate waiting for a person wants from them, by its label ("Negative rebuttal"); "" if none.

    Found as `doing_now` finds its steps: from the stored events, so a card's person knows which of their
    speeches (a constructive, an answer, a rebuttal) is asked for."""
    if debate.status != Debate.Status.WAITING:
        return ""
    plan = _plan(debate, seats)
    return plan.awaited if plan is not None else ""


def _plan(debate: Debate, seats: Sequence[Seat]) -> Plan | None:
    """What the format plans next on the stored events; None if they do not fit it."""
    keys = {s.pk: s.key for s in seats}
    records = [record_of(e, keys.get(e.seat_id)) for e in debate.events.exclude(kind=Event.Kind.ERROR)]
    infos = tuple(
        SeatInfo(key=s.key, role=s.role, name=s.name, side=s.side, system_prompt=s.system_prompt, is_human=s.is_human)
        for s in seats
    )
    config = DebateConfig(
        format=debate.format,
        topic=debate.topic,
        premise=debate.premise,
        options=debate.options,
        seats=infos,
        is_ending=debate.is_ending,
    )
    try:
        return debate.fmt.next_steps(config, records)
    except FormatError:
        return None


@dataclass
class SeatUsage:
    """One seat's calls to one model: tokens and what they cost (a Total: "+ unknown" where a price is)."""

    seat: Seat
    model: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    cost: Total = field(default_factory=Total)

    def add(self, event: Event) -> None:
        """One more call (the live page's running count, with no query)."""
        self.tokens_in += event.tokens_in
        self.tokens_out += event.tokens_out
        self.tokens_cached += event.tokens_cached
        amount = ZERO if event.cost is None else event.cost
        self.cost = self.cost + Total(amount, int(event.cost is None), 1)


def calls_of(debate: Debate) -> QuerySet[Event]:
    """The debate's events that are model calls (every call reads a prompt; no other event has tokens)."""
    return debate.events.filter(tokens_in__gt=0)


def usage(debate: Debate, seats: Sequence[Seat]) -> dict[str, Any]:
    """Tokens and cost, per seat and model and in all: one query."""
    by_seat = {s.pk: s for s in seats}
    rows = [
        SeatUsage(by_seat[seat_id], model, t_in, t_out, t_cached, total)
        for (seat_id, model), total, t_in, t_out, t_cached in totals_by(calls_of(debate), "seat_id", "model")
        if seat_id in by_seat
    ]
    return usage_context(rows, seats)


def usage_context(rows: list[SeatUsage], seats: Sequence[Seat]) -> dict[str, Any]:
    """The usage partial's context: a row per seat and model it called, in seat order, and an empty row for each
    model seat that has made no call yet."""
    called = {row.seat.pk for row in rows}
    rows = rows + [SeatUsage(s) for s in seats if not s.is_human and s.pk not in called]
    order = {s.pk: i for i, s in enumerate(seats)}
    rows.sort(key=lambda row: (order.get(row.seat.pk, 0), row.model))
    return {
        "seat_usage": rows,
        "tokens_in": sum(r.tokens_in for r in rows),
        "tokens_out": sum(r.tokens_out for r in rows),
        "tokens_cached": sum(r.tokens_cached for r in rows),
        "cost": sum((r.cost for r in rows), Total()),
    }


def current_stage(events: Iterable[Event]) -> str:
    """The stage and round the last SYSTEM instruction set, as formats word it ("Round 2 of 3, turn 5.")."""
    system = [e for e in events if e.kind == Event.Kind.SYSTEM]
    return system[-1].data.get("status", "") if system else ""


# The calls a time estimate is averaged over: recent enough to be the site's present model and load.
PACE_SAMPLE = 200


def seconds_per_call() -> float | None:
    """The mean time of this site's last PACE_SAMPLE model calls, in seconds (None before the first): how a card's
    page turns its number of calls into a time."""
    recent = list(
        Event.objects.filter(latency_ms__gt=0).order_by("-pk").values_list("latency_ms", flat=True)[:PACE_SAMPLE]
    )
    return sum(recent) / len(recent) / 1000 if recent else None


@dataclass(frozen=True)
class PersonaUsage:
    """A persona's calls to one model over many debates (a tournament's, an experiment's)."""

    name: str
    model: str
    calls: int
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    cost: Total


def usage_of(debates: QuerySet[Debate]) -> tuple[list[PersonaUsage], Total]:
    """Calls, tokens and cost per persona (by seat name) and model over `debates`, and their Total. One query."""
    rows = [
        PersonaUsage(name, model, total.calls, t_in, t_out, t_cached, total)
        for (name, model), total, t_in, t_out, t_cached in totals_by(
            Event.objects.filter(debate__in=debates, tokens_in__gt=0, seat__isnull=False), "seat__name", "model"
        )
    ]
    return rows, sum((row.cost for row in rows), Total())


def spend(user: Any, since: datetime) -> list[SpendRow]:
    """The user's debates' calls (their tournaments' and experiments' included) since `since`, per persona and
    model (chaoslm/costs.py: register_spend). One query."""
    calls = Event.objects.filter(debate__owner=user, created_at__gte=since, tokens_in__gt=0)
    return totals_by(calls, "seat__name", "model")


def cost_of(debate: Debate) -> Total:
    return total_of(calls_of(debate))


def batch_usage(debates: QuerySet[Debate]) -> dict[str, Any]:
    """The batch usage partial's context (partials/batch_usage.html) over a batch's debates."""
    rows, total = usage_of(debates)
    return {"usage": rows, "usage_total": total}


def usage_json(debates: QuerySet[Debate]) -> dict[str, Any]:
    """A batch's cost for exports and the API: the Total's JSON and a row per persona and model. One query."""
    rows, total = usage_of(debates)
    return {
        **total.as_json(),
        "by_persona": [
            {
                "persona": r.name,
                "model": r.model,
                "calls": r.calls,
                "tokens_in": r.tokens_in,
                "tokens_out": r.tokens_out,
                "tokens_cached": r.tokens_cached,
                **r.cost.as_json(),
            }
            for r in rows
        ],
    }
