"""Quote verification (docs/protocols/evidence.md): which of a speaker's `<quote>` citations are in the passage.

Pure: `verify(passage, text)` reads the speech and returns it marked for the judge, with each quote
checked and the counts. A quote is verified when, after normalising both sides (`normalise`), it is a
non-empty run of the passage that starts and ends on word boundaries; anything else is unverified.

Speakers write `<quote>…</quote>`. The marks the judge reads, `<v_quote>` (verified) and `<u_quote>`
(unverified), are the format's alone: a speaker who writes them gets them read as a plain `<quote>`,
checked like any other, so no one can mark their own citation verified. Quotes do not nest: from a
`<quote>` the quote runs to the next `</quote>` (an inner `<quote>` is then part of its text, which
the passage does not hold); an unclosed `<quote>` runs to the end of the speech.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Every tag a speaker might write for a quote, the judge's marks included (see the module's docstring).
_OPEN = re.compile(r"<\s*(?:quote|v_quote|u_quote)\s*>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*(?:quote|v_quote|u_quote)\s*>", re.IGNORECASE)

# Typographic quote marks, folded to the two ASCII ones.
_QUOTE_MARKS = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "`": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
    }
)
_SPACE = re.compile(r"\s+")

VERIFIED_OPEN, VERIFIED_CLOSE = "<v_quote>", "</v_quote>"
UNVERIFIED_OPEN, UNVERIFIED_CLOSE = "<u_quote>", "</u_quote>"


def normalise(text: str) -> str:
    """Case folded, typographic quote marks made ASCII, every run of whitespace one space, no edge spaces."""
    return _SPACE.sub(" ", text.translate(_QUOTE_MARKS).casefold()).strip()


@dataclass(frozen=True)
class Quote:
    text: str  # as the speaker wrote it, between the tags
    verified: bool


@dataclass(frozen=True)
class Checked:
    """A speech with its quotes checked: `marked` is the speech as the judge reads it."""

    marked: str
    quotes: tuple[Quote, ...]

    @property
    def made(self) -> int:
        return len(self.quotes)

    @property
    def verified(self) -> int:
        return sum(1 for q in self.quotes if q.verified)

    @property
    def unverified(self) -> int:
        return self.made - self.verified

    def counts(self) -> dict[str, int]:
        return {"quotes": self.made, "verified": self.verified, "unverified": self.unverified}


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def in_passage(passage: str, quote: str) -> bool:
    """Whether `quote`, normalised, occurs in the normalised passage starting and ending on word boundaries.

    The boundaries keep a fragment of a word ("he" inside "the") from passing as a citation."""
    needle = normalise(quote)
    if not needle:
        return False
    haystack = normalise(passage)
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        before_ok = start == 0 or not (_is_word(haystack[start - 1]) and _is_word(needle[0]))
        after_ok = end == len(haystack) or not (_is_word(haystack[end]) and _is_word(needle[-1]))
        if before_ok and after_ok:
            return True
        start = haystack.find(needle, start + 1)
    return False


def verify(passage: str, text: str) -> Checked:
    """The speech with each quote marked `<v_quote>` or `<u_quote>`, and the quotes in the order written."""
    out: list[str] = []
    quotes: list[Quote] = []
    position = 0
    while (opening := _OPEN.search(text, position)) is not None:
        out.append(_CLOSE.sub("", text[position : opening.start()]))  # a stray closing tag marks nothing
        closing = _CLOSE.search(text, opening.end())
        body_end, position = (closing.start(), closing.end()) if closing else (len(text), len(text))
        body = text[opening.end() : body_end]
        quote = Quote(text=body, verified=in_passage(passage, body))
        quotes.append(quote)
        # The speaker's own marks inside a quote are dropped, so the judge sees only the format's.
        inner = _CLOSE.sub("", _OPEN.sub("", body))
        opening_mark, closing_mark = (
            (VERIFIED_OPEN, VERIFIED_CLOSE) if quote.verified else (UNVERIFIED_OPEN, UNVERIFIED_CLOSE)
        )
        out.append(f"{opening_mark}{inner}{closing_mark}")
    out.append(_CLOSE.sub("", text[position:]))
    return Checked(marked="".join(out), quotes=tuple(quotes))
