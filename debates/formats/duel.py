"""The judged duel (protocol: docs/protocols/duel.md): debaters A (for) and B (against), an optional judge.

Ordinals follow the spec's full sequence, so an ordinal is also the number of the LLM call:
0 HEADER; 1, 2 the plans; 3, 4 A's opening think and statement; for turn t >= 2 the speaker's
think at 4t-1 and statement at 4t; the judge's evaluation and score of turn t at 4t+1, 4t+2;
the four verdict calls at 4T+3 ... 4T+6 for T turns.

Each seat's history is its own earlier steps only, so the judge sees debaters' statements only
through its own evaluate prompts (never a PLAN or THINK), and debaters never see the judge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from debates.formats.base import (
    PUBLIC,
    WORD_LIMIT,
    DebateConfig,
    Format,
    OptionSpec,
    Plan,
    Record,
    SeatSpec,
    Side,
    Step,
    StepBuilder,
)

PLAN_PROMPT = """The debate topic is: {topic}

Before the debate begins, privately plan your argument. What are your two or
three strongest points? What counterarguments do you expect, and how will you
answer them?"""

PREMISE_BLOCK = """The debate topic is: {topic}

You are arguing FOR the premise: "{premise}"

"""

TOPIC_BLOCK = """The debate topic is: {topic}

"""

THINK_OPENING = """Your opponent is {b}. You are about to deliver your opening statement.
Privately consider: what is the strongest point to lead with?
How will you frame your position from the start?
Do not deliver your opening statement yet."""

DELIVER_OPENING = """Your opponent is {b}. Deliver your opening argument now, in your own voice.
Speak directly and make your case. Do not write stage directions, do not write
your opponent's lines, and do not present both sides — give only your own argument."""

THINK = """Your opponent just said:

"{statement}"

Before you respond, privately reflect: What did they get right or wrong?
How does this shift the argument? How might the audience be reacting?
Plan what you'll say next. Do not give your debate response yet."""

THINK_FINAL = """Your opponent just said:

"{statement}"

Before you respond, privately reflect: What did they get right or wrong?
How does this shift the argument? How might the audience be reacting?
Plan what you'll say next. This is your final turn — plan a strong closing argument that
summarises your case and lands a decisive point. Do not give your debate response yet."""

RESPOND = """Now give your actual debate response, in character.
Speak in your own voice only — do not write stage directions,
do not write your opponent's lines, and do not present both sides."""

RESPOND_FINAL = """This is your final turn. Deliver your closing argument:
summarise your strongest points, rebut your opponent's key claim,
and make a clear case for why you have won this debate.
Speak in your own voice only — do not write stage directions,
do not write your opponent's lines, and do not present both sides."""

EVALUATE = """{name} just argued:

"{statement}"

Privately consider this argument. How coherent is the logic? If evidence is
used, does it actually warrant the conclusion, or does it merely suggest it?
If they are challenging their opponent's evidence, is that challenge
well-reasoned — and if so, credit it as a strong move in its own right.
How effective is the rhetoric? Note strengths and weaknesses. Do not score yet."""

SCORE_FIRST = """Give {name} an initial score out of 10 based on this first impression.
Respond with a JSON object in exactly this format:
{{"score": 7, "reasoning": "One sentence explaining the score."}}
The score must be a whole number between 0 and 10 inclusive."""

SCORE_RUNNING = """Give your current running score for {name} out of 10. This is a
cumulative score reflecting their whole performance so far — revise it up if
they've strengthened their case, or down if they've been rebutted.
Respond with a JSON object in exactly this format:
{{"score": 7, "reasoning": "One sentence explaining any change."}}
The score must be a whole number between 0 and 10 inclusive."""

DELIBERATE_PREMISE = """The debate premise was:
  {a} argued FOR the premise: "{premise}"
  {b} argued AGAINST the premise: "{premise}"

"""

DELIBERATE = """The debate is over. Privately weigh up what you just heard.
Who made the stronger case and why? Which specific arguments or moments swayed
you, and which fell flat? Give each debater a score out of 10 and decide on a
winner. Be specific. Write in the first person — use 'I', 'my', 'in my view'.
Do not refer to yourself by name or in the third person."""

CONFIRM = """Based on your deliberation, who won?
Reply with exactly one of these names and nothing else: '{a}' or '{b}'."""

EXTRACT = """Now express that verdict as a JSON object in exactly this format:
{{"winner": "{a_json}", "scores": {{"{a_json}": 8, "{b_json}": 6}}}}
The "winner" must be {must_be} — consistent with your deliberation above.
The "scores" dict must contain entries for both names.
All scores must be whole numbers between 0 and 10."""

ANNOUNCE = """Now deliver your verdict to the debaters and audience, briefly.
State who won, what they did well, and what let the other side down.
Write in the first person — use 'I', 'my', 'in my view'.
Do not refer to yourself by name or in the third person.
No more than a short paragraph."""

SCORE_SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 10},
        "reasoning": {"type": "string"},
    },
    "required": ["score", "reasoning"],
}


def verdict_schema(names: Sequence[str], allowed_winners: Sequence[str]) -> dict[str, Any]:
    score = {"type": "integer", "minimum": 0, "maximum": 10}
    return {
        "type": "object",
        "properties": {
            "winner": {"type": "string", "enum": list(allowed_winners)},
            "scores": {
                "type": "object",
                "properties": {name: score for name in names},
                "required": list(names),
            },
        },
        "required": ["winner", "scores"],
    }


def match_name(reply: str, names: Sequence[str]) -> str | None:
    """The name a winner-confirmation reply gives: an exact answer, else the name it mentions first."""
    cleaned = reply.strip().strip("'\"`*.!").strip()
    for name in names:
        if cleaned.casefold() == name.casefold():
            return name
    found = []
    for name in names:
        hit = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", reply, re.IGNORECASE)
        if hit:
            found.append((hit.start(), name))
    return min(found)[1] if found else None


def _json_text(name: str) -> str:
    return json.dumps(name)[1:-1]


_FENCED = re.compile(r"\A```(?:json)?\s*(.*?)\s*```\Z", re.DOTALL)


# The example reasons in the scoring prompts: a small model sometimes copies one back as its own.
PLACEHOLDER_REASONS = frozenset({"One sentence explaining the score.", "One sentence explaining any change."})
NO_REASON = "The judge gave no reasons for its verdict."
_REASON_KEYS = ("announcement", "text", "reason", "reasoning", "explanation", "verdict")
_CUT_REASON = re.compile('"(?:' + "|".join(_REASON_KEYS) + r')"\s*:\s*"((?:[^"\\]|\\.)+)')


def announcement_text(reply: str) -> str:
    """The verdict announcement to show: the reply itself, or its text when the model answered in JSON.

    The announcement is asked for right after the verdict's JSON extraction, and some models keep answering
    in JSON ({"announcement": "..."}, or the verdict object again); a person should read the sentence, not the
    object around it, and be told plainly when there is none (an object without one, a copied placeholder).
    """
    stripped = reply.strip()
    if stripped in PLACEHOLDER_REASONS:
        return NO_REASON
    fenced = _FENCED.match(stripped)
    try:
        value = json.loads(fenced.group(1) if fenced else stripped)
    except json.JSONDecodeError:
        if not stripped.startswith("{"):
            return reply
        # JSON cut off or malformed (a small model's, or one cut at its token limit): its sentence, if it began one.
        found = _CUT_REASON.search(stripped)
        value = found.group(1).replace('\\"', '"').replace("\\n", " ") if found else ""
    if isinstance(value, dict):
        reasons = (value.get(key) for key in _REASON_KEYS)
        value = next((r for r in reasons if isinstance(r, str) and r.strip() not in PLACEHOLDER_REASONS), "")
    if isinstance(value, str) and value.strip() and value.strip() not in PLACEHOLDER_REASONS:
        return value
    return NO_REASON


def outscored_by(winner: str, scores: Mapping[str, int]) -> str | None:
    """Who the verdict's own scores put above its winner, if anyone: the judge then contradicts itself.

    In a duel the winner is the one the judge confirmed by name and the scores are its JSON scores
    (or, when that JSON failed, its last running scores), so this flags a judge whose numbers say
    the other side won.
    """
    if not winner or winner not in scores:
        return None
    above = [(score, name) for name, score in scores.items() if name != winner and score > scores[winner]]
    return max(above)[1] if above else None


# What a seat is doing during each duel step; {turn} is the turn's number ("3 of 6").
DOING = {
    "plan": "planning",
    "think_opening": "thinking over the opening statement",
    "opening": "giving the opening statement",
    "think": "thinking over turn {turn}",
    "think_final": "thinking over turn {turn}",
    "respond": "giving turn {turn}",
    "respond_final": "giving turn {turn}",
    "evaluate": "evaluating turn {turn}",
    "score_first": "scoring turn {turn}",
    "score": "scoring turn {turn}",
    "deliberate": "deliberating on the verdict",
    "confirm_winner": "naming the winner",
    "verdict_json": "writing down the verdict",
    "announce": "announcing the verdict",
}


def doing_in_turns(fmt: Format, step: Step, options: Mapping[str, Any]) -> str:
    """A duel step's words, its turn numbered: the turn a step names (a score's), else the duel's layout's: turn
    t's think and statement are at ordinals 4t-1 and 4t, its judging at 4t+1 and 4t+2 (a judge replay keeps the
    duel's ordinals, so it says the same)."""
    doing = Format.doing(fmt, step, options)
    if "{turn}" not in doing:
        return doing
    turns = options.get("turns")
    turn = step.data.get("turn") or (step.ordinal + 1) // 4
    return doing.format(turn=f"{turn}" + (f" of {turns}" if turns else ""))


@dataclass(frozen=True)
class Statement:
    """A public statement as the judge receives it: turn t (1-based) by the speaker of seat `key`."""

    turn: int
    key: str
    name: str
    text: str


def duel_slot(turn: int) -> int:
    """The ordinal of the judge's evaluation of public statement `turn` in the duel's layout (4t+1; its score at
    4t+2), which every judge replay keeps."""
    return Duel.statement_ordinal(turn) + 1


@dataclass(frozen=True)
class JudgeChain:
    """A judge's part of a two-sided debate: evaluate and score each public statement in order, then the verdict.

    It reads statements, whoever gave them and in whatever order the format had them spoken: the duel runs it
    beside its debaters; the judge replays (judge.py, sides_judge.py) run it alone over a finished debate's
    statements. A duel and its replay give the judge the same prompts at the same ordinals, so its history, and
    so every message it receives, is the same in both. Where its calls go is `slot` and `verdict_at` (the duel's
    layout by default), so a format of another layout places them among its own steps.
    """

    a: str  # the names of debater A (for) and B (against)
    b: str
    premise: str
    turns: int  # the statements the verdict waits for at most
    # Statement t's evaluation at slot(t), its score at slot(t) + 1; the verdict's four calls from verdict_at
    # (0: after the last statement's score in the duel's layout, 4T+3).
    slot: Callable[[int], int] = duel_slot
    verdict_at: int = 0

    @property
    def verdict_base(self) -> int:
        return self.verdict_at - 1 if self.verdict_at else 4 * self.turns + 2

    def steps(self, build: StepBuilder, statements: Sequence[Statement], spoken: int) -> None:
        """`statements`: those available so far, in turn order; `spoken`: how many the verdict waits for."""
        seen: set[str] = set()
        for statement in statements:
            at = self.slot(statement.turn)
            first = statement.key not in seen
            seen.add(statement.key)
            build.call(
                "judge",
                at,
                "THINK",
                "evaluate",
                EVALUATE.format(name=statement.name, statement=statement.text),
                needs=(self.slot(statement.turn - 1) + 1,) if statement.turn > 1 else (),
            )
            build.call(
                "judge",
                at + 1,
                "SCORE",
                "score_first" if first else "score",
                (SCORE_FIRST if first else SCORE_RUNNING).format(name=statement.name),
                needs=(at,),
                visibility=PUBLIC,
                json_schema=SCORE_SCHEMA,
                json_fallback=True,
                data={"for": statement.key, "for_name": statement.name, "turn": statement.turn},
            )
        if spoken >= 1:
            self._verdict_steps(build, spoken)

    def _verdict_steps(self, build: StepBuilder, spoken: int) -> None:
        a, b = self.a, self.b
        base = self.verdict_base
        block = DELIBERATE_PREMISE.format(a=a, b=b, premise=self.premise) if self.premise else ""
        build.call("judge", base + 1, "THINK", "deliberate", block + DELIBERATE, needs=(self.slot(spoken) + 1,))
        build.call("judge", base + 2, "INTERNAL", "confirm_winner", CONFIRM.format(a=a, b=b), needs=(base + 1,))
        if base + 2 in build.done:
            confirmed = match_name(build.done[base + 2].content, [a, b])
            must_be = f"'{confirmed}'" if confirmed else f"'{a}' or '{b}'"
            build.call(
                "judge",
                base + 3,
                "INTERNAL",
                "verdict_json",
                EXTRACT.format(a_json=_json_text(a), b_json=_json_text(b), must_be=must_be),
                needs=(base + 2,),
                json_fallback=True,
                data={"confirmed_winner": confirmed},
                json_schema=verdict_schema([a, b], [confirmed] if confirmed else [a, b]),
            )
        build.call("judge", base + 4, "VERDICT", "announce", ANNOUNCE, needs=(base + 3,), visibility=PUBLIC)

    def finished(self, done: Mapping[int, Record], spoken: int) -> bool:
        """Whether the verdict is in; with no statement spoken there is nothing to judge."""
        return spoken < 1 or self.verdict_base + 4 in done

    def outcome(self, records: Sequence[Record], names: Mapping[str, str]) -> dict[str, Any]:
        """The verdict's winner, scores, premise_upheld and announcement; `names`: debater seat key -> name."""
        a, b = self.a, self.b
        by_step = {r.step: r for r in records if r.seat == "judge"}
        announce = by_step.get("announce")
        if announce is None:
            return {}
        extracted = by_step.get("verdict_json")
        confirmed = extracted.data.get("confirmed_winner") if extracted else None
        data = extracted.data if extracted else {}
        running = running_scores(records, names)
        if isinstance(data.get("scores"), dict) and data.get("winner") in (a, b):
            winner = data["winner"]
            scores = {name: int(data["scores"][name]) for name in (a, b)}
        else:
            scores = running
            winner = confirmed
            if winner is None and scores.get(a, -1) != scores.get(b, -1):
                winner = max((a, b), key=lambda n: scores.get(n, -1))
        sides = {a: "for", b: "against"}
        upheld = None
        if self.premise and winner:
            upheld = sides[winner] == "for"
        return {
            "winner": winner or "",
            "scores": scores,
            "premise_upheld": upheld,
            "announcement": announcement_text(announce.content),
        }


def running_scores(records: Sequence[Record], names: Mapping[str, str]) -> dict[str, int]:
    """Each debater's latest valid score, by name; `names`: the scored seat's key -> its name."""
    scores: dict[str, int] = {}
    for record in sorted(records, key=lambda r: r.ordinal):
        if record.kind == "SCORE" and isinstance(record.data.get("score"), int):
            name = names.get(record.data.get("for", ""))
            if name is not None:
                scores[name] = record.data["score"]
    return scores


class Duel(Format):
    name = "duel"
    title = "Judged duel"
    replayed_by = "judge"
    doing_words = DOING
    plain_steps = frozenset({"respond"})
    doing = doing_in_turns
    description = (
        "Two debaters, for and against, plan privately, then alternate public turns; a judge "
        "scores each turn as it lands and gives a verdict."
    )
    seat_specs = (
        SeatSpec("a", "debater", "Debater A (for)", side="for"),
        SeatSpec("b", "debater", "Debater B (against)", side="against"),
        SeatSpec("judge", "judge", "Judge", required=False),
    )
    option_specs = (OptionSpec("turns", "Turns", 6, 1, 40, "Public statements in all; A opens."), WORD_LIMIT)
    sides = (Side("for", "For", ("a",), "for"), Side("against", "Against", ("b",), "against"))
    noun = "duel"
    judging = "in_debate"
    judge_seat = "judge"
    poll = "sides"

    def statements(self, options: Mapping[str, Any]) -> int:
        return self.value(options, "turns")

    def calls(self, options: Mapping[str, Any]) -> int:
        """Two plans, a think and a statement a turn, the judge's evaluation and score a turn, and the verdict's
        four calls (the ordinals 1 ... 4T+6)."""
        return 4 * self.statements(options) + 6

    def silent_side(self, options: Mapping[str, Any]) -> str:
        # A opens, B answers: with one turn only A (FOR) speaks.
        if self.statements(options) >= 2:
            return ""
        return (
            "A duel needs both sides to speak: turns must be at least 2 "
            "(with 1, only the FOR side speaks, and the judge would score a silent side)."
        )

    def step_title(self, step: str) -> str:
        return {"opening": "Opening statement", "respond_final": "Closing argument"}.get(step) or super().step_title(
            step
        )

    def ended_early(self, options: Mapping[str, Any], statements: int) -> str:
        turns = int(options.get("turns", 6))
        return f"Ended by its owner after turn {statements} of {turns}." if statements < turns else ""

    # -- ordinals ---------------------------------------------------------------------------------
    @staticmethod
    def statement_ordinal(turn: int) -> int:
        return 4 * turn

    @staticmethod
    def speaker(turn: int) -> str:
        return "a" if turn % 2 == 1 else "b"

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        build = StepBuilder(config, records)
        turns = self.option(config, "turns")
        if 0 not in build.done:
            build.steps.append(self.header(config))
        spoken_so_far = sum(1 for t in range(1, turns + 1) if self.statement_ordinal(t) in build.done)
        # The turns that will be spoken: all of them, or when ending, only those already spoken.
        spoken = spoken_so_far if config.is_ending else turns
        if not config.is_ending:
            self._debater_steps(config, build, turns)
        chain = self.judge_chain(config)
        if chain is not None:
            chain.steps(build, self.spoken_statements(config, build.done, spoken), spoken)
            finished = chain.finished(build.done, spoken)
        else:
            finished = config.is_ending or self.statement_ordinal(turns) in build.done
        return Plan(steps=tuple(build.steps), finished=finished)

    def _debater_steps(self, config: DebateConfig, build: StepBuilder, turns: int) -> None:
        """The plans, A's opening, then each turn's think and statement, alternating B and A."""
        b = config.seat("b")
        assert b is not None
        word_limit = config.options.get("word_limit") or None
        block = (PREMISE_BLOCK if config.premise else TOPIC_BLOCK).format(topic=config.topic, premise=config.premise)
        build.call("a", 1, "PLAN", "plan", PLAN_PROMPT.format(topic=config.topic))
        build.call("b", 2, "PLAN", "plan", PLAN_PROMPT.format(topic=config.topic))
        build.call("a", 3, "THINK", "think_opening", block + THINK_OPENING.format(b=b.name), needs=(1,))
        build.call(
            "a",
            4,
            "TURN",
            "opening",
            block + DELIVER_OPENING.format(b=b.name),
            needs=(3,),
            visibility=PUBLIC,
            word_limit=word_limit,
        )
        for turn in range(2, turns + 1):
            previous = self.statement_ordinal(turn - 1)
            if previous not in build.done:
                break
            final = turn >= turns - 1
            speaker = self.speaker(turn)
            own_previous = self.statement_ordinal(turn - 2) if turn > 2 else 2
            think = (THINK_FINAL if final else THINK).format(statement=build.done[previous].content)
            build.call(
                speaker, 4 * turn - 1, "THINK", "think_final" if final else "think", think, needs=(own_previous,)
            )
            build.call(
                speaker,
                4 * turn,
                "TURN",
                "respond_final" if final else "respond",
                RESPOND_FINAL if final else RESPOND,
                needs=(4 * turn - 1,),
                visibility=PUBLIC,
                word_limit=word_limit,
            )

    def spoken_statements(self, config: DebateConfig, done: Mapping[int, Record], spoken: int) -> list[Statement]:
        """The public statements in the transcript, in order, up to the first one still to come."""
        found = []
        for turn in range(1, spoken + 1):
            record = done.get(self.statement_ordinal(turn))
            if record is None:
                break
            seat = config.seat(self.speaker(turn))
            assert seat is not None
            found.append(Statement(turn=turn, key=seat.key, name=seat.name, text=record.content))
        return found

    def judge_chain(self, config: DebateConfig) -> JudgeChain | None:
        a, b = config.seat("a"), config.seat("b")
        if config.seat("judge") is None or a is None or b is None:
            return None
        return JudgeChain(a=a.name, b=b.name, premise=config.premise, turns=self.option(config, "turns"))

    # -- the result -------------------------------------------------------------------------------
    def running_scores(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, int]:
        """Each debater's latest valid score, by name."""
        return running_scores(records, {s.key: s.name for s in config.seats})

    def fallback_words(self, config: DebateConfig, records: Sequence[Record]) -> str:
        return "the winner is the one it confirmed and the scores are its running scores"

    def outcome(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, Any]:
        chain = self.judge_chain(config)
        if chain is None:
            return {}
        return chain.outcome(records, {s.key: s.name for s in config.seats if s.key in ("a", "b")})
