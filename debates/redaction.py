"""Removing who debated from what a blind voter reads (the arena): pure, no Django.

`redact(texts, debaters, models)` replaces each debater's names by their label ("Debater 1") and each model's
name by "[a model]", in every text, and says whether it could do so safely. The rules:

- A name is matched whole-word and case-insensitively ("ANN", "ann"), with any run of spaces between its
  words, with or without its accents ("Zoe" for "Zoë"), and after NFKC normalization (full-width letters)
  with invisible format characters (zero-width spaces) removed. A possessive follows the name it belongs
  to: "Ann's" becomes "Debater 1's".
- A name of several words is also matched word by word ("Sterling" for "Ada Sterling"), except its
  particles ("the", "von", "Dr"...), which identify nobody on their own. A word two debaters' names share
  becomes "[a name]" (it would name both).
- A word that is shorter than three letters or a common English word (or debate vocabulary: "pro", "judge")
  cannot be removed safely: replacing it everywhere would rewrite ordinary sentences, and leaving it may
  name the debater. It is left as it is and the redaction is *incomplete*.
- After replacing, the texts are searched again, more loosely (accents stripped, a plural or a
  possessive's missing apostrophe: "Anns"); a name still found also makes the redaction incomplete.

An incomplete redaction is not hidden from the voter or refused: the arena still serves the match, and
keeps its votes apart from the figures (docs/audience.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

MODEL_LABEL = "[a model]"
SHARED_LABEL = "[a name]"
MIN_LETTERS = 3
# Words inside a name that identify nobody on their own: they are neither replaced alone nor a problem.
PARTICLES = frozenset(
    "the of and de da di du del della der den van von la le mr mrs ms dr prof sir st el al bin ibn".split()  # noqa: SIM905
)
# Words too common in a debate to replace wherever they occur: a name made of them cannot be removed safely.
COMMON = frozenset(
    """
    about above after again against all also and any are argue argued argument arguments because been before
    being best better between both but can case claim con could debate debater debaters did does doing down
    during each evidence fact few first for from further good had has have having her here hers him his how
    into its just judge last let like more most moderator must negative new not now off once one only other
    our out over own point pro proof rebuttal reason right same second see she should side some such than
    that the their them then there these they this those through too true truth under until very was way
    were what when where which while who why will with would yes you your affirmative opponent opening
    closing round team model bot assistant answer question motion premise reply statement speaker voice
    """.split()  # noqa: SIM905
)
_INVISIBLE = {"Cf"}  # format characters: zero-width spaces and joiners, soft hyphens, direction marks


@dataclass(frozen=True)
class Redacted:
    texts: tuple[str, ...]
    problems: tuple[str, ...]  # why the redaction is incomplete, in words a reader understands

    @property
    def complete(self) -> bool:
        return not self.problems


def _clean(text: str) -> str:
    """NFKC, without invisible format characters: what a reader sees, as plain characters."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) not in _INVISIBLE)


def _plain(text: str) -> str:
    """Accents stripped and case folded: how two spellings of a name are compared."""
    decomposed = unicodedata.normalize("NFKD", _clean(text))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _key(text: str) -> str:
    return " ".join(_plain(text).split())


def _words(name: str) -> list[str]:
    return [w.strip('.,;:!?"()') for w in name.split() if w.strip('.,;:!?"()')]


def _unaccented(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def _distinctive(word: str) -> bool:
    letters = sum(ch.isalnum() for ch in word)
    return letters >= MIN_LETTERS and _plain(word).strip(".") not in COMMON


def _pattern(term: str) -> str:
    """A term as a regex: whole words, any whitespace between them."""
    return r"\s+".join(re.escape(part) for part in term.split())


def redact(texts: Sequence[str], debaters: Sequence[tuple[str, Sequence[str]]], models: Sequence[str]) -> Redacted:
    """`texts` with every name of each debater (label, names) replaced by its label and each of `models` by
    MODEL_LABEL; `problems` lists what could not be removed safely or was still found afterwards."""
    problems: list[str] = []
    targets: dict[str, str] = {}  # a term's key (plain spelling) -> its replacement
    spellings: set[str] = set()  # every spelling the texts are searched for
    checks: dict[str, str] = {}  # a term's key -> the term, searched for again afterwards

    def add(term: str, label: str) -> None:
        term = " ".join(_clean(term).split())
        key = _key(term)
        if key in targets and targets[key] != label:
            # Two debaters' names share it (or a name is also a model's): it would name both.
            label = MODEL_LABEL if MODEL_LABEL in (label, targets[key]) else SHARED_LABEL
        targets[key] = label
        spellings.update({term, _unaccented(term)})
        checks[key] = term

    for label, names in debaters:
        for name in dict.fromkeys(" ".join(_clean(n).split()) for n in names if n and n.strip()):
            words = _words(name)
            identifying = [w for w in words if _plain(w).strip(".") not in PARTICLES]
            unsafe = [w for w in identifying if not _distinctive(w)] or ([] if identifying else [name])
            if unsafe and (len(words) == 1 or not any(_distinctive(w) for w in identifying)):
                problems.append(f"the name {name!r} is too short or too common to remove safely")
                continue
            if unsafe:
                problems.append(
                    f"part of the name {name!r} ({', '.join(repr(w) for w in unsafe)}) is too short or too common "
                    "to remove safely"
                )
            add(name, label)
            for word in identifying:
                if _distinctive(word) and len(words) > 1:
                    add(word, label)
    for model in dict.fromkeys(m.strip() for m in models if m and m.strip()):
        last = model.rsplit("/", 1)[-1]
        for term in dict.fromkeys((model, last, last.split(":", 1)[0])):
            if sum(ch.isalnum() for ch in term) < MIN_LETTERS or _plain(term) in COMMON:
                problems.append(f"the model name {term!r} is too short or too common to remove safely")
                continue
            add(term, MODEL_LABEL)

    out = [_clean(t) for t in texts]
    if targets:
        # One pass over each text, longest terms first, so a replacement is never matched again.
        ordered = sorted(spellings, key=len, reverse=True)
        regex = re.compile(r"(?<![\w])(?:" + "|".join(_pattern(t) for t in ordered) + r")(?![\w])", re.IGNORECASE)
        out = [regex.sub(lambda m: targets.get(_key(m.group(0)), SHARED_LABEL), t) for t in out]
    for key, name in checks.items():
        loose = re.compile(r"(?<![\w])" + _pattern(key) + "(?:s|es|'s|\u2019s)?" + r"(?![\w])")
        if any(loose.search(_plain(t)) for t in out):
            problems.append(f"the name {name!r} is still in the text after redaction")
    return Redacted(texts=tuple(out), problems=tuple(dict.fromkeys(problems)))
