"""The card language: protocol cards, debate formats written as YAML (docs/cards.md).

`fields` reads a card's YAML and its fields, `spec` checks the card, `template` its prompts, `layout` lays a
checked card out at given options, `format` runs it as a Format, `doc` writes its protocol as Markdown. What the
rest of ChaosLM needs is named here.
"""

from debates.formats.card.fields import CardProblem
from debates.formats.card.format import CardCaps, CardError, CardFormat, card_format, parse_card

__all__ = ["CardCaps", "CardError", "CardFormat", "CardProblem", "card_format", "parse_card"]
