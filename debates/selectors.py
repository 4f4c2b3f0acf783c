"""What the debate pages read: everything a page draws, in a constant number of queries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet, Sum
from django.utils.safestring import mark_safe

from debates.cards import cards_of
from debates.engine import record_of
from debates.formats import DebateConfig, FormatError, SeatInfo
from debates.models import Debate, Event, Seat
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
        "human_seat": next((s for s in seats if s.is_human), None),
        "stage": stage_text,
        "status_line": status_line(debate, doing_now(debate, seats), stage_text),
        **usage(debate, seats),
    }


def doing_now(debate: Debate, seats: Sequence[Seat]) -> list[str]:
    """What the seats of a running debate are doing now, as the status line says it ("Ada is planning").

    The transcript is the state: the steps the format finds ready on the stored events are the ones the
    engine runs, so a page that has just loaded names them as the live pushes do.
    """
    if debate.status != Debate.Status.RUNNING:
        return []
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
    fmt = debate.fmt
    try:
        plan = fmt.next_steps(config, records)
    except FormatError:
        return []
    names = {s.key: s.name for s in seats}
    return [
        activity(names.get(step.seat, step.seat), step, fmt, debate.options)
        for step in plan.steps
        if step.calls_llm and step.seat
    ]


def usage(debate: Debate, seats: Sequence[Seat]) -> dict[str, Any]:
    """Tokens in and out, per seat and in all: one query."""
    totals = {
        row["seat_id"]: row
        for row in debate.events.values("seat_id").annotate(tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
    }
    return usage_context(
        [
            (s, totals.get(s.pk, {}).get("tokens_in") or 0, totals.get(s.pk, {}).get("tokens_out") or 0)
            for s in seats
            if not s.is_human
        ]
    )


def usage_context(seat_usage: list[tuple[Seat, int, int]]) -> dict[str, Any]:
    """The usage partial's context from (seat, tokens in, tokens out) for each seat that is a model."""
    return {
        "seat_usage": seat_usage,
        "tokens_in": sum(u[1] for u in seat_usage),
        "tokens_out": sum(u[2] for u in seat_usage),
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
