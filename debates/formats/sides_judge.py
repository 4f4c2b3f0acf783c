"""A judge replay of any two-sided debate (classic, structured, a card's; with or without a judge of its own): a
judge alone reads the two sides' public turns in the order they were spoken, evaluates and scores each, then gives
the verdict, with the judged duel's judge chain and prompts (duel.py `JudgeChain`): the first side in seat order
argues FOR, the second AGAINST.

Only the sides' public statements are read (public TURN events of the seats that have a side): a moderator's or a
judge's words, a PLAN (the structured format's preparation) or a THINK never reach it. A side of several seats (a
team) is named by its speakers' names together. As in judge.py, the statements are copied into the replay's options
at creation, so the format stays pure and never reads another debate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from debates.formats.base import PUBLIC, DebateConfig, FormatError, OptionSpec, Record, SeatInfo, Step
from debates.formats.judge import MAX_STATEMENT, Judge

MAX_TURNS = 60


def sides_replay_options(
    config: DebateConfig, records: Sequence[Record], source_debate: int | None = None
) -> dict[str, Any]:
    """The options of a replay of a finished debate (its config, with its seats in its format's seat order, and its
    records): its two sides, as A (FOR) and B (AGAINST), and their public statements in the order they were
    spoken."""
    sides: dict[str, list[SeatInfo]] = {}
    for seat in config.seats:
        if seat.side:
            sides.setdefault(seat.side, []).append(seat)
    if len(sides) != 2:
        raise FormatError(f"A {config.format} debate cannot be replayed by a judge: it needs two sides.")
    first, second = sides.values()
    as_side = {s.key: "a" for s in first} | {s.key: "b" for s in second}
    spoken = sorted(
        (r for r in records if r.kind == "TURN" and r.visibility == PUBLIC and r.seat in as_side),
        key=lambda r: r.ordinal,
    )
    statements = [{"turn": i, "seat": as_side[r.seat], "text": r.content} for i, r in enumerate(spoken, start=1)]
    return {
        "source_debate": source_debate,
        "source_format": config.format,
        "turns": max(len(statements), 1),
        "debaters": {
            "a": {"name": _name(first), "side": "for"},
            "b": {"name": _name(second), "side": "against"},
        },
        "statements": statements,
    }


def _name(seats: list[SeatInfo]) -> str:
    """A side as the judge names it: its one speaker, or a team's speakers together ("Ada and Ben")."""
    names = [s.name for s in seats]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class SidesJudge(Judge):
    name = "sides_judge"
    title = "Judge replay of a two-sided debate"
    description = (
        "A judge alone reads a finished two-sided debate's public turns (a classic or structured debate's, or a "
        "card's), scores each in order and gives a verdict, as a duel's judge does."
    )
    option_specs = (OptionSpec("turns", "Turns", 6, 1, MAX_TURNS, "The judged debate's public statements."),)

    def replay_options(
        self, config: DebateConfig, records: Sequence[Record], source_debate: int | None = None
    ) -> dict[str, Any]:
        return sides_replay_options(config, records, source_debate)

    replay_keys = Judge.replay_keys | {"source_format"}
    missing_key = "A judge replay needs the debate's {key}: use sides_replay_options()."

    def check_source(self, options: Mapping[str, Any]) -> None:
        if not isinstance(options.get("source_format"), str):
            raise FormatError("A judge replay of a two-sided debate names its format: use sides_replay_options().")

    @staticmethod
    def check_statements(statements: Any, turns: int) -> None:
        _check_statements(statements, turns)

    def header(self, config: DebateConfig) -> Step:
        step = super().header(config)
        return replace(step, data={**step.data, "source_format": config.options["source_format"]})


def _check_statements(statements: Any, turns: int) -> None:
    """In order from turn 1, each spoken by A or B (in any order: the source's own order), each text."""
    if not isinstance(statements, list) or len(statements) > turns:
        raise FormatError(f"The statements must be a list of at most {turns}.")
    for index, statement in enumerate(statements, start=1):
        if not isinstance(statement, Mapping) or set(statement) != {"turn", "seat", "text"}:
            raise FormatError(f"Statement {index} must have exactly a turn, a seat and a text.")
        if statement["turn"] != index or statement["seat"] not in ("a", "b"):
            raise FormatError(f"Statement {index} must be turn {index}, by debater 'a' or 'b'.")
        if not isinstance(statement["text"], str) or len(statement["text"]) > MAX_STATEMENT:
            raise FormatError(f"Statement {index} must be text of at most {MAX_STATEMENT} characters.")
