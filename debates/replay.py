"""Creating a judge replay of a finished debate (a duel, an evidence debate, any two-sided debate): its public
turns, judged again by a judge persona."""

from __future__ import annotations

from typing import Any

from debates.formats import DebateConfig, FormatError, SeatInfo, get_format
from debates.formats.sides_judge import SidesJudge
from debates.models import Debate, Event
from debates.records import record_of
from debates.setup import SeatChoice, create_debate


def judged_config(judged: Debate) -> DebateConfig:
    # In the format's own seat order, so a replay reads a debate's first debater as the side that argues FOR.
    order = {spec.key: i for i, spec in enumerate(judged.fmt.seat_specs)}
    seats = tuple(
        SeatInfo(key=s.key, role=s.role, name=s.name, side=s.side, system_prompt=s.system_prompt, is_human=s.is_human)
        for s in sorted(judged.seats.all(), key=lambda s: order.get(s.key, len(order)))
    )
    return DebateConfig(
        format=judged.format,
        topic=judged.topic,
        premise=judged.premise,
        material=judged.material,
        options=judged.options,
        seats=seats,
    )


def create_replay(
    judged: Debate,
    judge: SeatChoice,
    *,
    owner: Any = None,
    visibility: str = Debate.Visibility.PRIVATE,
    in_batch: bool = False,
) -> Debate:
    """A new judge-only debate (pending) over `judged`'s public turns, with its topic, premise and material: its
    format's own replay (`replayed_by`: a `judge` replay of a duel, an `evidence_judge` replay of an evidence
    debate), else for any debate of two sides a `sides_judge` replay."""
    if judged.status != Debate.Status.COMPLETED:
        raise FormatError("Only a completed debate can be judged again.")
    fmt = judged.fmt
    name = fmt.replayed_by or (SidesJudge.name if len(fmt.sides) == 2 else "")
    if not name:
        raise FormatError(f"A {fmt.title} debate cannot be judged again: a judge replay reads two sides.")
    keys = {s.pk: s.key for s in judged.seats.all()}
    # Only the public statements are read: the replay never holds a PLAN or THINK.
    turns = Event.objects.filter(debate=judged, kind=Event.Kind.TURN)
    records = [record_of(event, keys.get(event.seat_id)) for event in turns]
    replay = get_format(name)
    options = replay.replay_options(judged_config(judged), records, source_debate=judged.pk)
    return create_debate(
        format_name=replay.name,
        topic=judged.topic,
        premise=judged.premise,
        material=judged.material,
        seats={"judge": judge},
        options=options,
        owner=owner,
        visibility=visibility,
        in_batch=in_batch,
    )
