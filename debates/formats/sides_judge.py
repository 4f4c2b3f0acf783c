"""A judge replay of any two-sided debate with no judge of its own (classic, structured): a judge alone reads the
two debaters' public turns in order, evaluates and scores each, then gives the verdict, with the judged duel's
judge chain and prompts (duel.py `JudgeChain`): the first debater argues FOR, the second AGAINST.

Only the debaters' public statements are read (TURN events of the two debater seats): a moderator's words, a
PLAN (the structured format's preparation) or a THINK never reach it. As in judge.py, the statements are copied
into the replay's options at creation, so the format stays pure and never reads another debate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from debates.formats.base import DebateConfig, FormatError, OptionSpec, Record, Step
from debates.formats.judge import MAX_STATEMENT, Judge

MAX_TURNS = 60


def sides_replay_options(
    config: DebateConfig, records: Sequence[Record], source_debate: int | None = None
) -> dict[str, Any]:
    """The options of a replay of a finished debate (its config, with its seats in its format's seat order, and its
    records): its two debaters, as A (FOR) and B (AGAINST), and their public statements in the order they were
    spoken."""
    debaters = [s for s in config.seats if s.role == "debater"]
    if len(debaters) != 2 or any(s.role == "judge" for s in config.seats):
        raise FormatError(f"A {config.format} debate cannot be replayed by a judge: it needs two sides and no judge.")
    as_side = {debaters[0].key: "a", debaters[1].key: "b"}
    spoken = sorted((r for r in records if r.kind == "TURN" and r.seat in as_side), key=lambda r: r.ordinal)
    statements = [{"turn": i, "seat": as_side[r.seat], "text": r.content} for i, r in enumerate(spoken, start=1)]
    return {
        "source_debate": source_debate,
        "source_format": config.format,
        "turns": max(len(statements), 1),
        "debaters": {
            "a": {"name": debaters[0].name, "side": "for"},
            "b": {"name": debaters[1].name, "side": "against"},
        },
        "statements": statements,
    }


class SidesJudge(Judge):
    name = "sides_judge"
    title = "Judge replay of a two-sided debate"
    description = (
        "A judge alone reads a finished classic or structured debate's public turns, scores each in order and "
        "gives a verdict, as a duel's judge does."
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
