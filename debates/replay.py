"""Creating a judge replay of a finished debate (a duel, an evidence debate): its public turns, judged again by a
judge persona."""

from __future__ import annotations

from typing import Any

from debates.engine import record_of
from debates.formats import DebateConfig, FormatError, SeatInfo, get_format
from debates.formats.judge import Judge
from debates.models import Debate, Event
from debates.setup import SeatChoice, create_debate


def duel_config(duel: Debate) -> DebateConfig:
    # In the format's own seat order, so a replay reads a debate's first debater as the side that argues FOR.
    order = {spec.key: i for i, spec in enumerate(duel.fmt.seat_specs)}
    seats = tuple(
        SeatInfo(key=s.key, role=s.role, name=s.name, side=s.side, system_prompt=s.system_prompt, is_human=s.is_human)
        for s in sorted(duel.seats.all(), key=lambda s: order.get(s.key, len(order)))
    )
    return DebateConfig(format=duel.format, topic=duel.topic, premise=duel.premise, options=duel.options, seats=seats)


def create_replay(
    duel: Debate,
    judge: SeatChoice,
    *,
    owner: Any = None,
    visibility: str = Debate.Visibility.PRIVATE,
    in_batch: bool = False,
) -> Debate:
    """A new judge-only debate (pending) over `duel`'s public turns, with the duel's topic and premise: a `judge`
    replay of a duel, an `evidence_judge` replay of an evidence debate, a `sides_judge` replay of a classic or a
    structured debate."""
    if duel.status != Debate.Status.COMPLETED:
        raise FormatError("Only a completed debate can be judged again.")
    keys = {s.pk: s.key for s in duel.seats.all()}
    # Only the public statements are read: the replay never holds a PLAN or THINK.
    turns = Event.objects.filter(debate=duel, kind=Event.Kind.TURN)
    records = [record_of(event, keys.get(event.seat_id)) for event in turns]
    # A format no replay judges goes to the duel's, which says what it can replay.
    replay = get_format(duel.fmt.replayed_by or Judge.name)
    options = replay.replay_options(duel_config(duel), records, source_debate=duel.pk)
    return create_debate(
        format_name=replay.name,
        topic=duel.topic,
        premise=duel.premise,
        seats={"judge": judge},
        options=options,
        owner=owner,
        visibility=visibility,
        in_batch=in_batch,
    )
