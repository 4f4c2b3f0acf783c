"""What the debate pages read: everything a page draws, in a constant number of queries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils.safestring import mark_safe

from chaoslm.costs import ZERO, SpendRow, Total, total_of, totals_by
from chaoslm.llm import marks
from debates.event_cards import cards_of
from debates.formats import FormatError, Plan, Side
from debates.formats.card import CardFormat
from debates.models import Debate, Event, Seat
from debates.records import config_of, record_of
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
    # A chart of one scored turn a side (each side spoke once) has no line to draw: each score is a stem from 0 up
    # to its dot, read as a bar. A lone dot beside other sides' lines has its score written above it.
    stem: tuple[float, float, float] | None = None  # x, the baseline's y, the dot's y
    lone: bool = False


# The score chart's box in SVG units: its plot inside margins for the axes' numbers and names.
CHART_WIDTH, CHART_HEIGHT = 320, 176
CHART_LEFT, CHART_RIGHT, CHART_TOP, CHART_BOTTOM = 40, 14, 14, 40


def score_chart(seats: Sequence[Seat], events: Iterable[Event]) -> dict[str, Any]:
    """The running scores as SVG-ready series: x is the turn, y the score out of 10, each axis numbered and named."""
    width, height = CHART_WIDTH, CHART_HEIGHT
    left, right, top, bottom = CHART_LEFT, width - CHART_RIGHT, CHART_TOP, height - CHART_BOTTOM
    by_key = {s.key: s for s in seats}
    scores: dict[str, list[tuple[int, int]]] = {}
    # A judge replay scores debaters who have no seat in it: their names come with the scores.
    named: dict[str, str] = {}
    for event in events:
        if event.kind == Event.Kind.SCORE and isinstance(event.data.get("score"), int):
            scores.setdefault(event.data.get("for", ""), []).append((event.data.get("turn", 0), event.data["score"]))
            named.setdefault(event.data.get("for", ""), str(event.data.get("for_name", "")))
    turned = [t for series in scores.values() for t, _ in series]
    first, turns = min(turned, default=1), max(turned, default=1)

    def x(turn: int) -> float:
        # Each turn in the middle of its own band: the first and last clear of the plot's edges (a bar on the score
        # axis would hide in it), a single turn in the middle.
        return left + (right - left) * (turn - first + 0.5) / (turns - first + 1)

    def y(score: int) -> float:
        return bottom - (bottom - top) * score / 10

    series = []
    bars = all(len(points) == 1 for points in scores.values())
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
                stem=(coords[0][0], round(y(0), 1), coords[0][1]) if bars else None,
                lone=len(coords) == 1,
            )
        )
    grid = [{"y": round(y(s), 1), "label": s} for s in (0, 5, 10)]
    # Every turn numbered, or every few of a long debate's (about ten numbers fit), its last always.
    every = max(1, -(-(turns - first + 1) // 10))
    numbered = sorted({*range(first, turns + 1, every), turns})
    ticks = [{"x": round(x(t), 1), "label": t} for t in numbered] if scores else []
    return {
        "series": series,
        "width": width,
        "height": height,
        "grid": grid,
        "ticks": ticks,
        "left": left,
        "right": right,
        "bottom": bottom,
        "middle": round((left + right) / 2, 1),
        "plot_middle": round((top + bottom) / 2, 1),
    }


@dataclass(frozen=True)
class SeatChip:
    """A seat as the debate's header lists it: who sits there, and the seat and side in the format's words."""

    name: str
    side: str  # its side's key (the chip's colour), or ""
    says: str  # "Prime Minister · Opening Government", "a person · Affirmative"


def seat_chips(debate: Debate, seats: Sequence[Seat]) -> list[SeatChip]:
    """The header's seats, each by its label and its side's label (not their keys: "pm · og"); a person's seat
    says it is a person's, and a side already in the seat's label ("Debater A (for)") is not said twice."""
    fmt = debate.fmt
    labels = {spec.key: spec.label for spec in fmt.seat_specs}
    chips = []
    for seat in seats:
        label = labels.get(seat.key, seat.key)
        # A human seat's own label speaks to the person filling the form ("You (a human seat)").
        words = ["a person"] if seat.is_human else []
        if not (seat.is_human and label.lower().startswith("you")):
            words.append(label)
        side = fmt.side_label(seat.side, debate.options)
        if side and side.lower() not in label.lower():
            words.append(side)
        chips.append(SeatChip(seat.name, seat.side, " · ".join(words)))
    return chips


@dataclass(frozen=True)
class RankedSide:
    """One team of a finished debate whose judge ranks its teams, as its pages show it."""

    place: int  # 1 for the best
    index: int  # its place among its format's sides, in their order (the match's entrant of that side)
    label: str  # "Closing Opposition"
    seats: tuple[tuple[str, str], ...]  # (its seat's label, the speaker's name), in its format's seat order
    teams: int  # how many teams the debate ranked
    spoke: bool = True  # False: the debate ended before any of its speakers, so it is last, not judged

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
    side = winning_side(debate)
    return side.stance if side is not None else ""


def winning_side(debate: Debate) -> Side | None:
    """The side of its format a finished debate's verdict named (by its label, key or one of its seats' names)."""
    if not debate.winner:
        return None
    try:
        sides = debate.fmt.sides
    except FormatError:
        return None
    seats = dict(debate.seats.values_list("key", "name"))
    return next((s for s in sides if debate.winner in {s.label, s.key, *(seats.get(k) for k in s.seats)}), None)


def verdict_words(debate: Debate) -> str:
    """What the protocol calls the verdict's outcome ("Not guilty": its winning side's `verdict`), or ""."""
    side = winning_side(debate)
    return side.verdict if side is not None else ""


def decision(debate: Debate) -> dict[str, Any] | None:
    """The debate's decision over its seats' answers (a card's `decision`: rule, answer, split, voters, reason)
    with the line that announced it, or None: from its stored line, the one event a decision writes."""
    events = debate.events.filter(kind=Event.Kind.SYSTEM, step="decision")
    try:
        fmt = debate.fmt
    except FormatError:  # a format this version no longer has decides nothing it can read
        return None
    found = fmt.decision([record_of(e, None) for e in events])
    if found is None:
        return None
    return {**found, "line": events[0].content}


@dataclass(frozen=True)
class RefereeVote:
    referee: str  # the referee's name
    answer: str | None  # the side it named, by the name the verdict gives it; None: it gave no valid answer
    stance: str  # that side's stance ("for", "against"), or ""


def referee_votes(debate: Debate) -> list[RefereeVote]:
    """A finished debate its referees decide (judging "referees"): each referee's vote, the latest answer its
    decision counted, in seat order; [] for any other debate."""
    try:
        fmt = debate.fmt
    except FormatError:
        return []
    if not isinstance(fmt, CardFormat) or fmt.judging != "referees" or debate.status != Debate.Status.COMPLETED:
        return []
    events = debate.events.filter(kind=Event.Kind.TURN, seat__key__in=fmt.referee_seats).select_related("seat")
    config = judged_config(debate)
    names = fmt.verdict_names(config)
    votes = {v.seat: v for v in fmt.votes(config, [record_of(e, e.seat.key) for e in events])}
    out = []
    for key in fmt.referee_seats:
        if key in votes:
            answer = fmt.side_of_answer(config, votes[key].answer)
            stance = fmt.sides[names.index(answer)].stance if answer is not None else ""
            out.append(RefereeVote(votes[key].name, answer, stance))
    return out


def verdict_fallback(debate: Debate) -> str:
    """Why a finished debate's verdict is not its judge's own ("" when it is): its format's `verdict_fallback`
    over the judge's verdict events."""
    try:
        fmt = debate.fmt
    except FormatError:  # a format this version no longer has: its verdict stands as stored
        return ""
    if debate.status != Debate.Status.COMPLETED or fmt.judge_seat is None:
        return ""
    events = debate.events.filter(kind__in=(Event.Kind.INTERNAL, Event.Kind.VERDICT), seat__key=fmt.judge_seat)
    return fmt.verdict_fallback(judged_config(debate), [record_of(e, fmt.judge_seat) for e in events])


@dataclass(frozen=True)
class MadeBy:
    """Which seats' replies the embedded model wrote, as their calls recorded it (`data.embedded_model`,
    debates/engine.py): not today's settings, which may have changed since."""

    embedded: dict[int, str]  # seat id -> the embedded model it called (SmolLM2-135M)
    others: frozenset[int]  # seats whose replies (some of them) another model wrote

    def line(self, seats: Sequence[Seat]) -> str:
        """What the debate's pages and exports say of it: "Written by the embedded SmolLM2-135M model (for trying
        ChaosLM offline)." when it wrote every reply, else which seats' replies it wrote; "" when it wrote none."""
        embedded = {s.name: self.embedded[s.pk] for s in seats if s.pk in self.embedded}
        return marks.written_by(embedded, all_of_it=not self.others and not any(s.is_human for s in seats))


def made_by(debate: Debate) -> MadeBy:
    """Which model wrote each seat's replies, from the calls stored with the debate. One query."""
    calls = debate.events.exclude(model="").exclude(seat=None)
    embedded: dict[int, str] = {}
    others: set[int] = set()
    for seat_id, model in calls.values_list("seat_id", "data__embedded_model").distinct().order_by("seat_id"):
        if model:
            embedded.setdefault(seat_id, model)
        else:
            others.add(seat_id)
    return MadeBy(embedded, frozenset(others))


def ranked_sides(debate: Debate) -> list[RankedSide]:
    """The teams of a finished debate whose judge ranks more than two, best first, as its verdict ranks them (its
    format's `outcome`, read from the judge's events); [] for any other debate, or a ranking that names not every
    team once. A team is named in a ranking by its label, its key or (a team of one seat) its speaker's name."""
    fmt = debate.fmt
    if not fmt.ranks_teams() or fmt.judge_seat is None or debate.status != Debate.Status.COMPLETED:
        return []
    config = judged_config(debate)
    if config.seat(fmt.judge_seat) is None:
        return []
    # Every seat's events, not only the judge's: who spoke decides which teams the ranking may place.
    events = debate.events.select_related("seat").order_by("ordinal")
    outcome = fmt.outcome(config, [record_of(e, e.seat.key if e.seat else None) for e in events])
    unspoken = set(outcome.get("unspoken") or ())
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
            spoke=not unspoken.intersection((fmt.sides[index].label, *(names.get(k) for k in fmt.sides[index].seats))),
        )
        for place, index in enumerate(ranking, start=1)
    ]


@dataclass(frozen=True)
class VerdictScore:
    """One side's score in a finished debate's verdict, and what it is out of."""

    name: str  # the name the verdict gives the side
    score: Any
    out_of: int
    marks: tuple[tuple[str, int], ...] = ()  # a rubric's marks by criterion, whose sum the score is

    @property
    def marks_text(self) -> str:
        """The marks as the pages write them: "framework 9, argument 8, clash 8"."""
        return ", ".join(f"{criterion} {mark}" for criterion, mark in self.marks)


# What a running score, and a verdict without a rubric, is out of (the duel's 0-10).
RUNNING_SCORE_MAX = 10


def rubric_marks(debate: Debate) -> dict[str, dict[str, int]]:
    """The marks by criterion behind a verdict's scores, by side name, when its judge scored on a rubric: read from
    the judge's verdict call (private where the judge announces the verdict separately), and only where they sum to
    the scores the verdict kept. {} for any other verdict, or one that fell back to the running scores."""
    scores = debate.scores if isinstance(debate.scores, dict) else {}
    if not scores:
        return {}
    calls = debate.events.filter(kind__in=(Event.Kind.VERDICT, Event.Kind.INTERNAL)).order_by("-ordinal")
    for data in calls.values_list("data", flat=True):
        given = data.get("scores") if isinstance(data, dict) else None
        if isinstance(given, dict) and all(_sums_to(given.get(name), score) for name, score in scores.items()):
            return {name: dict(given[name]) for name in scores}
    return {}


def _sums_to(marks: Any, score: Any) -> bool:
    return (
        isinstance(marks, dict)
        and bool(marks)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in marks.values())
        and sum(marks.values()) == score
    )


def verdict_scores(debate: Debate) -> list[VerdictScore]:
    """A finished debate's verdict scores as its verdict box (and the terminal's) shows them, each out of what it is
    out of: a rubric's sum out of the rubric's total (`Format.verdict_score_max`), any other score out of 10 (the
    running scores a rubric's verdict falls back to among them)."""
    scores = debate.scores if isinstance(debate.scores, dict) else {}
    if not scores:
        return []
    marks = rubric_marks(debate)
    try:
        rubric_max = debate.fmt.verdict_score_max
    except FormatError:  # a format this version no longer has
        rubric_max = RUNNING_SCORE_MAX
    out_of = rubric_max if marks else RUNNING_SCORE_MAX
    return [VerdictScore(name, score, out_of, tuple(marks.get(name, {}).items())) for name, score in scores.items()]


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

    The transcript is its stored cards (debates/event_cards.py); only the scores and the last stage line are
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
        "seat_chips": seat_chips(debate, seats),
        "events": events,
        "scores": scores,
        # The stored cards, concatenated: escaped and sanitized as they were rendered.
        "cards": mark_safe("".join(card.filled() for card in events)),  # noqa: S308
        "last_event_id": max((card.pk for card in events), default=0),
        "chart": score_chart(seats, scores),
        "shows_scores": fmt.scores_turns and any(s.key == fmt.judge_seat for s in seats),
        "verdict_label": fmt.verdict_label,
        "verdict_words": verdict_words(debate),
        "verdict_scores": verdict_scores(debate),
        "ranked": ranked_sides(debate),
        "decision": decision(debate) if debate.status == Debate.Status.COMPLETED else None,
        "verdict_fallback": verdict_fallback(debate),
        "embedded_line": made_by(debate).line(seats),
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


def awaited_step(debate: Debate, seats: Sequence[Seat]) -> str:
    """The name of the step a debate waiting for a person wants from them ("affirmative_constructive"); "" where
    its format names none (a moderated discussion's free message)."""
    if debate.status != Debate.Status.WAITING:
        return ""
    plan = _plan(debate, seats)
    return plan.awaited_step if plan is not None else ""


def _plan(debate: Debate, seats: Sequence[Seat]) -> Plan | None:
    """What the format plans next on the stored events; None if they do not fit it."""
    keys = {s.pk: s.key for s in seats}
    records = [record_of(e, keys.get(e.seat_id)) for e in debate.events.exclude(kind=Event.Kind.ERROR)]
    try:
        return debate.fmt.next_steps(config_of(debate, seats, is_ending=debate.is_ending), records)
    except FormatError:
        return None


def messages_sent(debate: Debate) -> dict[int, list[dict[str, str]]]:
    """Each model call's messages as its format sent them, by the call's ordinal: the format's plan on the events
    before it, as the engine asked it then (the transcript is the state). Kept only where that plan's step has the
    stored prompt, so nothing is shown that was not sent; a format this version no longer has gives none."""
    try:
        fmt = debate.fmt
    except FormatError:
        return {}
    seats = list(debate.seats.all())
    keys = {s.pk: s.key for s in seats}
    events = list(debate.events.exclude(kind=Event.Kind.ERROR).order_by("ordinal"))
    records = [record_of(e, keys.get(e.seat_id)) for e in events]
    # Before its owner ended it, a debate was not ending: the steps after the end are planned as ending.
    configs = [config_of(debate, seats, is_ending=False)]
    if debate.is_ending:
        configs.append(config_of(debate, seats, is_ending=True))
    sent: dict[int, list[dict[str, str]]] = {}
    for position, event in enumerate(events):
        if event.kind == Event.Kind.USER or not event.prompt:
            continue
        for config in configs:
            try:
                plan = fmt.next_steps(config, records[:position])
            except FormatError:
                continue
            step = next((s for s in plan.steps if s.ordinal == event.ordinal and s.calls_llm), None)
            if step is not None and step.prompt == event.prompt:
                sent[event.ordinal] = [dict(m) for m in step.messages]
                break
    return sent


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
