"""The judge-only format: a judge replays a finished duel's judge chain over its stored public turns.

A tournament's other panel judges, and repeat judgments, use it. The replay's options carry the
duel's public statements (copied in at creation, so the format stays pure and never reads another
debate); the judge evaluates and scores each in order, then gives the four-call verdict, with the
duel's prompts at the duel's ordinals. Its history is built from its own steps as in the duel, so a
replay by the same judge persona sends exactly the messages the in-duel judge received.

PLAN and THINK text cannot reach it: `replay_options` copies TURN events only, and the options are
the replay's only source of debate text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from debates.formats.base import (
    DebateConfig,
    Format,
    FormatError,
    OptionSpec,
    Plan,
    Record,
    SeatSpec,
    Step,
    StepBuilder,
)
from debates.formats.duel import DOING, Duel, JudgeChain, Statement, doing_in_turns

SIDES = {"a": "for", "b": "against"}
MAX_STATEMENT = 200_000  # characters; a duel's statement is far shorter, this only bounds bad input


def replay_options(
    duel_config: DebateConfig, duel_records: Sequence[Record], source_debate: int | None = None
) -> dict[str, Any]:
    """The judge format's options for replaying a duel: its turns, debaters and public statements in order.

    Pure: built from the duel's config and records (a finished duel's, or one ended early: the
    statements are those spoken). `source_debate` is the duel's id, kept for links and reports.
    """
    if duel_config.format != Duel.name:
        raise FormatError(f"Only a judged duel can be replayed by a judge, not a {duel_config.format!r} debate.")
    duel = Duel()
    a, b = duel_config.seat("a"), duel_config.seat("b")
    if a is None or b is None:
        raise FormatError("The duel has no debaters to replay.")
    turns = duel.option(duel_config, "turns")
    done = {r.ordinal: r for r in duel_records if r.kind == "TURN"}
    statements = [
        {"turn": s.turn, "seat": s.key, "text": s.text} for s in duel.spoken_statements(duel_config, done, spoken=turns)
    ]
    return {
        "source_debate": source_debate,
        "turns": turns,
        "debaters": {"a": {"name": a.name, "side": "for"}, "b": {"name": b.name, "side": "against"}},
        "statements": statements,
    }


class Judge(Format):
    name = "judge"
    title = "Judge replay"
    description = (
        "A judge alone reads a finished duel's public turns, scores each in order and gives a verdict, "
        "exactly as the duel's own judge did."
    )
    seat_specs = (SeatSpec("judge", "judge", "Judge"),)
    listed = False
    replays_a_debate = True
    header_template = "partials/replay_turns.html"
    doing_words = DOING
    doing = doing_in_turns

    def replay_options(
        self, config: DebateConfig, records: Sequence[Record], source_debate: int | None = None
    ) -> dict[str, Any]:
        return replay_options(config, records, source_debate)

    option_specs = (OptionSpec("turns", "Turns", 6, 1, 40, "The judged duel's turns."),)
    judging = "in_debate"
    judge_seat = "judge"

    def statements(self, options: Mapping[str, Any]) -> int:
        return self.value(options, "turns")

    def calls(self, options: Mapping[str, Any]) -> int:
        """An evaluation and a score a statement, then the four verdict calls."""
        return 2 * self.statements(options) + 4

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        build = StepBuilder(config, records)
        if 0 not in build.done:
            build.steps.append(self.header(config))
        chain = self.judge_chain(config)
        statements = self.judged_statements(config)
        # Ending a replay changes nothing: like an ending duel, the judge finishes with what was spoken.
        chain.steps(build, statements, spoken=len(statements))
        return Plan(steps=tuple(build.steps), finished=chain.finished(build.done, len(statements)))

    def judge_chain(self, config: DebateConfig) -> JudgeChain:
        names = self.names(config)
        return JudgeChain(a=names["a"], b=names["b"], premise=config.premise, turns=self.option(config, "turns"))

    @staticmethod
    def names(config: DebateConfig) -> dict[str, str]:
        debaters = config.options["debaters"]
        return {key: debaters[key]["name"] for key in SIDES}

    def judged_statements(self, config: DebateConfig) -> list[Statement]:
        names = self.names(config)
        return [
            Statement(turn=s["turn"], key=s["seat"], name=names[s["seat"]], text=s["text"])
            for s in config.options["statements"]
        ]

    def outcome(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, Any]:
        return self.judge_chain(config).outcome(records, self.names(config))

    def header(self, config: DebateConfig) -> Step:
        step = super().header(config)
        extra = {"source_debate": config.options.get("source_debate"), "debaters": config.options["debaters"]}
        return replace(step, data={**step.data, **extra})

    # What the options of a replay hold besides `turns`, as its `replay_options` builds them, and where to build them.
    replay_keys: ClassVar[frozenset[str]] = frozenset({"source_debate", "turns", "debaters", "statements"})
    missing_key: ClassVar[str] = "A judge replay needs the duel's {key}: build its options with replay_options()."

    def validate(self, config: DebateConfig) -> None:
        """The check of every judge replay (this one of a duel's, sides_judge.py's of a two-sided debate's): its
        options are those its `replay_options` built, the judged debate's debaters and its statements in order."""
        options = config.options
        extra = set(options) - self.replay_keys
        if extra:
            raise FormatError(f"{self.title} has no option called {sorted(extra)[0]!r}.")
        self.check_source(options)
        for key in ("debaters", "statements"):
            if key not in options:
                raise FormatError(self.missing_key.format(key=key))
        source = options.get("source_debate")
        if source is not None and (isinstance(source, bool) or not isinstance(source, int)):
            raise FormatError("The source debate must be a debate's id.")
        super().validate(
            DebateConfig(
                format=config.format,
                topic=config.topic,
                premise=config.premise,
                options={"turns": options.get("turns", 6)},
                seats=config.seats,
            )
        )
        _check_debaters(options["debaters"])
        self.check_statements(options["statements"], self.option(config, "turns"))

    def check_source(self, options: Mapping[str, Any]) -> None:
        """What the replay's options say of the judged debate beyond its id (a duel's need nothing more)."""

    @staticmethod
    def check_statements(statements: Any, turns: int) -> None:
        _check_statements(statements, turns)


def _check_debaters(debaters: Any) -> None:
    if not isinstance(debaters, Mapping) or set(debaters) != set(SIDES):
        raise FormatError("The debaters must be exactly 'a' (for) and 'b' (against).")
    for key, side in SIDES.items():
        entry = debaters[key]
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
            raise FormatError(f"Debater {key!r} needs a name.")
        if entry.get("side") != side:
            raise FormatError(f"Debater {key!r} argues {side.upper()} in a duel.")
    if debaters["a"]["name"] == debaters["b"]["name"]:
        raise FormatError("The two debaters need different names: the verdict names the winner.")


def _check_statements(statements: Any, turns: int) -> None:
    if not isinstance(statements, list):
        raise FormatError("The statements must be a list.")
    if len(statements) > turns:
        had = f"{turns} turn{'s' if turns != 1 else ''}"
        raise FormatError(f"The duel had {had}, but there are {len(statements)} statements.")
    for index, statement in enumerate(statements, start=1):
        if not isinstance(statement, Mapping) or set(statement) != {"turn", "seat", "text"}:
            raise FormatError(f"Statement {index} must have exactly a turn, a seat and a text.")
        if statement["turn"] != index:
            raise FormatError(f"Statement {index} must be turn {index}: statements run in order from the first.")
        if statement["seat"] != Duel.speaker(index):
            raise FormatError(f"Turn {index} is spoken by debater {Duel.speaker(index)!r}, A and B alternating.")
        if not isinstance(statement["text"], str) or len(statement["text"]) > MAX_STATEMENT:
            raise FormatError(f"Statement {index} must be text of at most {MAX_STATEMENT} characters.")
