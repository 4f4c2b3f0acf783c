"""Every placeholder of the card language, in one table (docs/cards.md, "Placeholders").

A row says where the placeholder may stand, what its value is, and whether it reserves a seat key. The names
known since the language began reserve theirs: no saved card can have a seat of that name. A name added later
does not, so no card saved before it stops reading: in a card with a seat of that key, `{key}` is the seat's
name, as every seat key is, and the later placeholder is not offered there.

Contexts: `call` (a speech, a private call, a system or status line), `question` and `answer` (a
cross-examination's), `score` (the judge's `score` and `evaluate`), `verdict` (the verdict's other parts),
`decide` (the verdict's JSON), `check` (a repeat's `until` check). `EVERYWHERE` is all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

CONTEXTS = ("call", "question", "answer", "score", "verdict", "decide", "check")
EVERYWHERE = frozenset(CONTEXTS)


@dataclass(frozen=True)
class Placeholder:
    name: str
    where: frozenset[str]  # the contexts it may stand in
    value: str  # what it is replaced by, in words (the docs' table)
    reserves_seat: bool = True  # a seat may not take its name
    in_repeat: bool = False  # known only inside a repeat
    needs_two_sides: bool = False
    needs_answer: bool = False  # known only in a speech that gives an answer


def _row(name: str, where: frozenset[str] | tuple[str, ...], value: str, **flags: bool) -> Placeholder:
    return Placeholder(name, frozenset(where), value, **flags)


TABLE: tuple[Placeholder, ...] = (
    _row("topic", EVERYWHERE, "the debate's topic"),
    _row("premise", EVERYWHERE, "the debate's premise (may be empty)"),
    _row(
        "material",
        EVERYWHERE,
        "the debate's material: a passage, a question and its candidate answers, a case file (may be empty)",
        reserves_seat=False,
    ),
    _row("stage", EVERYWHERE, "this step's label"),
    _row("speaker", EVERYWHERE, "the name of the persona (or person) in the seat acting"),
    _row("seat", EVERYWHERE, "the acting seat's label (Prime Minister, Referee 2)", reserves_seat=False),
    _row("side", EVERYWHERE, "the acting seat's side label (empty for a seat with no side)"),
    _row("stance", EVERYWHERE, "the acting seat's stance (empty for a seat with no side)"),
    _row("opponent", EVERYWHERE, "the other side's name (its one speaker's name, or its label)", needs_two_sides=True),
    _row("opponents", EVERYWHERE, 'the other sides\' names, as "A, B and C"'),
    _row("sides", EVERYWHERE, 'all sides\' names, as "A, B and C"'),
    _row("previous", EVERYWHERE, "the last public speech before this step"),
    _row("previous_speaker", EVERYWHERE, "the name of the last public speech's speaker"),
    _row("round", EVERYWHERE, "the round's number", in_repeat=True),
    _row("rounds", EVERYWHERE, "the number of rounds (a repeat's count)", in_repeat=True),
    _row("exchanges", ("question",), "the examination so far"),
    _row("question", ("answer",), "the question just asked"),
    _row("asker", ("question", "answer"), "the name of this examination's asker"),
    _row("answerer", ("question", "answer"), "the name of this examination's answerer"),
    _row("scored", ("score",), "the name of the speaker judged"),
    _row("speech", ("score",), "the speech judged"),
    _row("turn", ("score",), "the speech's number among the speeches"),
    _row("names_or", ("verdict", "decide"), "the sides' names in quotes: 'Ada' or 'Bob'"),
    _row("must_be", ("decide",), "the confirmed winner in quotes, or {names_or}"),
    _row(
        "answer_format",
        ("call",),
        'how to reply with the answer: Reply with JSON only: {"reasoning": "...", "answer": ...}, its answer typed',
        reserves_seat=False,
        needs_answer=True,
    ),
)

BY_NAME = {p.name: p for p in TABLE}

# `<prefix><step>` reads a step's speech (docs/cards.md): own_, team_, opponent_, last_ (one speech), others_
# (every other seat's latest, each with its speaker's name).
REFERENCE_PREFIXES = ("own_", "team_", "opponent_", "last_", "others_")
# The prefixes a seat key may not start with: those the language began with (others_ came later).
RESERVED_PREFIXES = ("own_", "team_", "opponent_", "last_")
RESERVED_SEAT_KEYS = frozenset(p.name for p in TABLE if p.reserves_seat)


def known(context: str, in_repeat: bool, answer: bool, seats: frozenset[str] | set[str]) -> list[str]:
    """The placeholders a template of this context may use (for a problem's list), seats' names aside."""
    return sorted(
        p.name
        for p in TABLE
        if context in p.where
        and (in_repeat or not p.in_repeat)
        and (answer or not p.needs_answer)
        and (p.reserves_seat or p.name not in seats)
    )
