"""Protocol cards as people keep them: who may use, see and change a card, and saving, importing and exporting
cards checked by the card language (the package debates/formats/card/). The admin, the pages, the API and the commands
all come here, so a rule lives once.

A card is usable by everyone when it is shipped (no owner) or public, and by its owner; staff see every card
and change any (as they delete any debate). A card is saved only when the whole of it parses under the caps
of the person it is saved for, so a debate made from it cannot fail for a reason the save could have found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet

from debates.formats import FORMATS, LISTED, Format, FormatError
from debates.formats.card import CardCaps, CardError, CardFormat, CardProblem, card_format, parse_card
from debates.models import FormatCard

NAME_LINE = re.compile(r"^name\s*:", re.MULTILINE)


class CardNotFound(LookupError):
    """No card of that name that the person may see (the same answer whether or not it exists)."""


def caps_for(user: Any) -> CardCaps:
    """The limits a card saved for `user` must keep: the site's call cap per debate (CHAOSLM_CARD_MAX_CALLS, at
    most the card language's own default, which a debate's snapshot is read back under), and no built-in's name."""
    default = CardCaps()
    return CardCaps(max_calls=min(settings.CHAOSLM_CARD_MAX_CALLS, default.max_calls), reserved=frozenset(FORMATS))


def usable(user: Any) -> QuerySet[FormatCard]:
    """The cards `user` may run debates with and read: shipped, public, or their own."""
    shared = Q(owner__isnull=True) | Q(public=True)
    if user is not None and user.is_authenticated:
        shared |= Q(owner=user)
    return FormatCard.objects.filter(shared).select_related("owner")


def visible(user: Any) -> QuerySet[FormatCard]:
    """The cards `user` may open: those they may use, and for staff every card."""
    if user is not None and getattr(user, "is_staff", False):
        return FormatCard.objects.select_related("owner")
    return usable(user)


def can_edit(user: Any, card: FormatCard) -> bool:
    """Its owner may change or delete a card; staff any card (a shipped one has no owner)."""
    if user is None or not user.is_authenticated:
        return False
    return card.owner_id == user.pk or bool(user.is_staff)


def find_card(user: Any, name: str) -> FormatCard:
    found = visible(user).filter(name=name).first()
    if found is None:
        raise CardNotFound(f"There is no card called {name!r} that you may see.")
    return found


def card_format_of(card: FormatCard) -> CardFormat:
    """The card as a format (parsed once per text: the engine's cache). A card saved here parsed cleanly, so
    this does not raise for it."""
    return card_format(card.yaml)


def formats_for(user: Any) -> list[Format]:
    """What a person may start a debate with: the built-ins first, then the cards they may use, by name."""
    return [*LISTED.values(), *(card_format_of(c) for c in usable(user))]


@dataclass(frozen=True)
class Resolved:
    """A format chosen by name, and the card text a debate made with it snapshots ("" for a built-in)."""

    fmt: Format
    card_source: str = ""


def resolve(user: Any, name: str) -> Resolved:
    """The built-in or usable card called `name`; FormatError naming what exists otherwise."""
    if name in LISTED:
        return Resolved(LISTED[name])
    card = usable(user).filter(name=name).first()
    if card is None:
        names = [*LISTED, *usable(user).values_list("name", flat=True)]
        raise FormatError(f"There is no format or card called {name!r}; you may use {', '.join(names)}.")
    return Resolved(card_format_of(card), card.yaml)


def _name_line(text: str) -> int:
    match = NAME_LINE.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def check(text: str, *, owner: Any, card: FormatCard | None = None) -> CardFormat:
    """The card `text` holds, checked whole under `owner`'s caps and against the names already taken.

    Raises CardError listing every problem, each with its line and field."""
    limit = settings.CHAOSLM_CARD_MAX_BYTES
    size = len(text.encode())
    if size > limit:
        raise CardError([CardProblem(1, "", f"the card is {size:,} bytes; a card may be at most {limit:,} bytes")])
    fmt = parse_card(text, caps_for(owner))
    problems: list[CardProblem] = []
    clash = FormatCard.objects.filter(name=fmt.name)
    if card is not None and card.pk is not None:
        clash = clash.exclude(pk=card.pk)
    if clash.exists():
        problems.append(CardProblem(_name_line(text), "name", f"a card named {fmt.name!r} already exists"))
    if problems:
        raise CardError(problems)
    return fmt


def apply(card: FormatCard, fmt: CardFormat, text: str) -> None:
    """Copy what the checked card says onto its row: the YAML as written, its name and title."""
    card.yaml = text
    card.name = fmt.name
    card.title = str(fmt.title)[:200]


def save_card(text: str, *, owner: Any, card: FormatCard | None = None, public: bool | None = None) -> FormatCard:
    """Create a card for `owner`, or replace `card`'s text; CardError with every problem, nothing saved."""
    card = card if card is not None else FormatCard(owner=owner)
    fmt = check(text, owner=card.owner if card.pk else owner, card=card)
    apply(card, fmt, text)
    if public is not None:
        card.public = public
    card.save()
    return card


def delete_card(card: FormatCard) -> None:
    """Debates made from it keep their snapshot of its text (Debate.card_source) and run on."""
    card.delete()


@dataclass(frozen=True)
class FileProblem:
    """A problem in one of the files of an import."""

    source: str
    problem: CardProblem

    def __str__(self) -> str:
        where = f"line {self.problem.line}" + (f", {self.problem.field}" if self.problem.field else "")
        return f"{self.source}: {where}: {self.problem.message}"


class CardImportError(ValueError):
    """Every problem of an import, in every file; nothing was imported."""

    def __init__(self, problems: list[FileProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def _text(source: str, raw: str | bytes) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CardError([CardProblem(1, "", "the file is not UTF-8 text")]) from None


def import_cards(
    files: Iterable[tuple[str, str | bytes]], *, owner: Any = None, update: bool = False, missing_only: bool = False
) -> list[FormatCard]:
    """Import cards from (source name, text) pairs, one card a file, all or nothing; return those written.

    Every file is checked first, with every problem of every file reported at once. With `update` a card whose
    name exists is replaced; with `missing_only` it is kept as it is (an edit made in the admin stays); with
    neither, that is a problem."""
    parsed: list[tuple[str, str, CardFormat]] = []
    problems: list[FileProblem] = []
    for source, raw in files:
        try:
            text = _text(source, raw)
            limit = settings.CHAOSLM_CARD_MAX_BYTES
            if len(text.encode()) > limit:
                raise CardError([CardProblem(1, "", f"the card is larger than {limit:,} bytes")])
            parsed.append((source, text, parse_card(text, caps_for(owner))))
        except CardError as error:
            problems.extend(FileProblem(source, p) for p in error.problems)
    seen: dict[str, str] = {}
    for source, text, fmt in parsed:
        if fmt.name in seen:
            problem = CardProblem(_name_line(text), "name", f"{fmt.name!r} is also the name of {seen[fmt.name]}")
            problems.append(FileProblem(source, problem))
        seen.setdefault(fmt.name, source)
    existing = {c.name: c for c in FormatCard.objects.filter(name__in=seen)}
    if missing_only:
        parsed = [item for item in parsed if item[2].name not in existing]
    elif not update:
        for source, text, fmt in parsed:
            if fmt.name in existing:
                problem = CardProblem(_name_line(text), "name", f"a card named {fmt.name!r} already exists")
                problems.append(FileProblem(source, problem))
    if problems:
        raise CardImportError(problems)
    saved: list[FormatCard] = []
    with transaction.atomic():
        for _source, text, fmt in parsed:
            card = existing.get(fmt.name) or FormatCard(owner=owner)
            apply(card, fmt, text)
            card.save()
            saved.append(card)
    return saved


def file_name(card: FormatCard) -> str:
    """The file a card exports to: its name (a slug) and .yaml."""
    return f"{card.name}.yaml"


def problems_of(error: CardError) -> list[dict[str, Any]]:
    """The problems as the API lists them."""
    return [{"line": p.line, "field": p.field or "yaml", "message": p.message} for p in error.problems]
