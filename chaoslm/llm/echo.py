"""Two ways a small model's reply is not worth reading, told apart from one that is: it loops (says the same
words over and over), or it echoes its prompt (copies the instructions, or the example in them, back as its
answer: a judge whose reasoning is the prompt's "..." sentence).

Pure functions of text: no model, no Django. A caller treats an echo as an invalid reply (and asks again); the
benches count both.
"""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"[\w']+")
# A reply loops when one run of this many words makes up this share of it, at this many repeats or more.
LOOP_NGRAM = 4
LOOP_SHARE = 0.4
LOOP_REPEATS = 3
# A reply echoes its prompt when this share of its 6-word runs are the prompt's; a reply shorter than that when
# it is a run of the prompt's whole, from this many words on (a name the prompt offers to choose is not an echo).
ECHO_NGRAM = 6
ECHO_SHARE = 0.5
ECHO_MIN_WORDS = 4


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased: what the measures compare."""
    return _WORD.findall(text.lower())


def _ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def loop_share(text: str) -> float:
    """The share of the reply's words taken by its most repeated run of `LOOP_NGRAM` words (0 if none repeats
    `LOOP_REPEATS` times): "the cat sat on the mat" three times over is 1.0."""
    tokens = words(text)
    grams = _ngrams(tokens, LOOP_NGRAM)
    if not grams:
        return 0.0
    _, repeats = Counter(grams).most_common(1)[0]
    if repeats < LOOP_REPEATS:
        return 0.0
    return min(1.0, repeats * LOOP_NGRAM / len(tokens))


def is_loop(text: str) -> bool:
    """Whether the reply says the same few words over and over (a run of four words repeated three times or
    more, making up 40% of it or more)."""
    return loop_share(text) >= LOOP_SHARE


def echo_share(prompt: str, text: str) -> float:
    """The share of the reply's runs of `ECHO_NGRAM` words (of all its words, for a shorter reply) that are copied
    from `prompt`; 0.0 for a reply of fewer than `ECHO_MIN_WORDS` words, which may well be a choice the prompt
    offered ("Ada Sterling")."""
    reply = words(text)
    if len(reply) < ECHO_MIN_WORDS:
        return 0.0
    n = min(ECHO_NGRAM, len(reply))
    asked = set(_ngrams(words(prompt), n))
    grams = _ngrams(reply, n)
    return sum(1 for gram in grams if gram in asked) / len(grams)


def echoes(prompt: str, text: str) -> bool:
    """Whether the reply is mostly the prompt copied back: half of its runs of six words or more are the
    prompt's ("One sentence explaining the score." given as the judge's reasoning is wholly the prompt's). A
    reply that quotes a sentence of the prompt and goes on in its own words is not an echo."""
    return echo_share(prompt, text) >= ECHO_SHARE


def is_invalid(prompt: str, text: str) -> bool:
    """Whether the reply is not worth keeping: empty, a loop, or an echo of its prompt."""
    return not words(text) or is_loop(text) or echoes(prompt, text)
