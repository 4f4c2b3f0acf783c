"""The card language: protocol cards, debate formats written as YAML (docs/cards.md).

`spec` reads and checks a card's YAML, `template` its prompts, `format` lays a checked card out and runs it as a
Format, `doc` writes its protocol as Markdown. What the rest of ChaosLM needs is named here.
"""

from debates.formats.card.format import CardCaps, CardError, CardFormat, card_format, parse_card
from debates.formats.card.spec import CardProblem

__all__ = ["CardCaps", "CardError", "CardFormat", "CardProblem", "card_format", "parse_card"]
