"""Evidence protocols (protocol: docs/protocols/evidence.md): does debate help a judge who cannot read the passage?

Four formats over one question with a passage and exactly two answers, A and B:

- `evidence_debate`: debaters `a` (argues A) and `b` (argues B) read the passage, make private notes,
  then argue `rounds` rounds, in turn or simultaneously; then the judge gives its probabilities.
  Ordinals: 0 HEADER; 1, 2 the notes; round r: A at 2r+1, B at 2r+2; the judge at 2R+3 (retry 2R+4).
- `consultancy`: one consultant argues the answer `consultant_answer`; after each of its statements but
  the last, the judge asks it one question. Ordinals: 0 HEADER; 1 the notes; round r: the consultant at
  2r, the judge's question at 2r+1 (r < R); the judge's answer at 2R+1 (retry 2R+2).
- `blind`: the judge answers from the question and the answers alone. Ordinals: 0; 1 (retry 2).
- `oracle`: the judge reads the passage itself (a ceiling). Ordinals as blind.

The passage is in the options. Only the speakers' prompts carry it (and the oracle judge's): the judge
of the other three protocols reads the speeches with their quotes checked (quotes.py), never the
passage and never a speaker's notes. Each seat's history is its own earlier steps (base.Histories).

The judge's answer is parsed strictly (`parse_answer`): an unreadable one is asked again once, then
recorded as unparsed; it is never guessed.

One module per format (debate, consultancy, blind and oracle, replay: the judge replay) over the shared
parts (prompts, answers, common). This package's names are what the rest of the code imports.
"""

from __future__ import annotations

from debates.formats.evidence.answers import Answer, asks_nothing, parse_answer, read_answer
from debates.formats.evidence.blind import Blind, Oracle
from debates.formats.evidence.common import EvidenceFormat
from debates.formats.evidence.consultancy import Consultancy
from debates.formats.evidence.debate import EvidenceDebate, judge_replay_options
from debates.formats.evidence.prompts import (
    LETTERS,
    MAX_ANSWER,
    MAX_PASSAGE,
    MAX_QUESTION,
    ROUNDS,
    SIMULTANEOUS,
    WORD_LIMIT,
)
from debates.formats.evidence.replay import EvidenceJudge

PROTOCOLS: dict[str, EvidenceFormat] = {f.name: f for f in (EvidenceDebate(), Consultancy(), Blind(), Oracle())}
REPLAY = EvidenceJudge()

__all__ = [
    "LETTERS",
    "MAX_ANSWER",
    "MAX_PASSAGE",
    "MAX_QUESTION",
    "PROTOCOLS",
    "REPLAY",
    "ROUNDS",
    "SIMULTANEOUS",
    "WORD_LIMIT",
    "Answer",
    "Blind",
    "Consultancy",
    "EvidenceDebate",
    "EvidenceFormat",
    "EvidenceJudge",
    "Oracle",
    "asks_nothing",
    "judge_replay_options",
    "parse_answer",
    "read_answer",
]
