"""Creating a judge replay of a finished debate (a duel, an evidence debate): its public turns, judged again by a
judge persona."""

from __future__ import annotations

from typing import Any

from debates.engine import record_of
from debates.formats import DebateConfig, FormatError, SeatInfo, get_format
from debates.formats.evidence import EvidenceDebate, EvidenceJudge, judge_replay_options
from debates.formats.judge import replay_options
from debates.formats.sides_judge import SidesJudge, sides_replay_options
from debates.models import Debate, Event
from debates.setup import SeatChoice, create_debate

# The two-sided formats with no judge of their own, judged again (a tournament's panel) by `sides_judge`.
SIDES_JUDGED = ("classic", "structured")


def duel_config(duel: Debate) -> DebateConfig:
    seats = tuple(
        SeatInfo(key=s.key, role=s.role, name=s.name, side=s.side, system_prompt=s.system_prompt, is_human=s.is_human)
        for s in duel.seats.all()
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
    config = duel_config(duel)
    if duel.format == EvidenceDebate.name:
        format_name, options = EvidenceJudge.name, judge_replay_options(config, records, source_debate=duel.pk)
    elif duel.format in SIDES_JUDGED:
        format_name = SidesJudge.name
        options = sides_replay_options(get_format(duel.format), config, records, source_debate=duel.pk)
    else:
        format_name, options = "judge", replay_options(config, records, source_debate=duel.pk)
    return create_debate(
        format_name=format_name,
        topic=duel.topic,
        premise=duel.premise,
        seats={"judge": judge},
        options=options,
        owner=owner,
        visibility=visibility,
        in_batch=in_batch,
    )
