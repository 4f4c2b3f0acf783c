"""A card's protocol as Markdown: its seats, sides, options, the sequence of every call at given options, and each
prompt as the card holds it. The shipped cards' pages in docs/protocols/ end with this text (a test checks that
each page holds its card's, so a page cannot fall behind its card)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from debates.formats.card.format import CardFormat
from debates.formats.card.layout import PlannedCall

KIND_WORDS = {
    "SYSTEM": "system line",
    "PLAN": "preparation",
    "THINK": "thinking",
    "TURN": "speech",
    "SCORE": "score (JSON)",
    "INTERNAL": "verdict step",
    "VERDICT": "verdict",
}


CHECK_WORDS = {"judge": "check: are the rounds done? (JSON)", "stop": "the rounds stop", "decision": "decision"}


def _what(call: PlannedCall) -> str:
    if call.check:
        return CHECK_WORDS[call.check]
    what = f"speech with an answer ({call.answer})" if call.answer else KIND_WORDS[call.kind]
    if call.word_limit:
        what += f", at most {call.word_limit} words"
    return f"{what}, {call.when}" if call.when else what


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ") if text not in (None, "") else "—"


def protocol_markdown(card: CardFormat, options: Mapping[str, Any] | None = None) -> str:
    options = dict(options or {})
    labels = {s.key: s.label for s in card.seat_specs}
    lines = [
        "## Seats",
        "",
        "| seat | role | side | label | required | a person may take it |",
        "|---|---|---|---|---|---|",
    ]
    for seat in card.seat_specs:
        lines.append(
            f"| `{seat.key}` | {seat.role} | {_cell(seat.side)} | {_cell(seat.label)} | "
            f"{'yes' if seat.required else 'no'} | {'yes' if seat.human_allowed else 'no'} |"
        )
    for group in card.spec.groups:
        option = next(o for o in card.option_specs if o.name == group.option)
        lines += [
            "",
            f"`{group.seats[0]}` to `{group.seats[-1]}` are the seat group `{group.key}`: a debate has as many of them "
            f"as its option `{option.name}` says ({option.minimum} to {option.maximum}, {option.default} by default), "
            f"each filled; `seat: {group.key}` names them all, in order.",
        ]
    if card.sides:
        # A side's verdict word ("Not guilty") is its win's name in the protocol's own words.
        verdicts = {side.key: side.verdict for side in card.spec.sides if side.verdict}
        head = "| side | label | stance | seats |" + (" its win is called |" if verdicts else "")
        lines += ["", "## Sides", "", head, "|---|---|---|---|" + ("---|" if verdicts else "")]
        for side in card.sides:
            seats = ", ".join(f"`{s}`" for s in side.seats)
            verdict = f" {_cell(verdicts.get(side.key))} |" if verdicts else ""
            lines.append(f"| `{side.key}` | {_cell(side.label)} | {_cell(side.stance)} | {seats} |{verdict}")
    if card.option_specs:
        lines += ["", "## Options", "", "| option | default | range | meaning |", "|---|---|---|---|"]
        for option in card.option_specs:
            lines.append(
                f"| `{option.name}` | {option.default} | {option.minimum} to {option.maximum} | "
                f"{_cell(option.help or option.label)} |"
            )
    judging = {
        "in_debate": "by its judge seat",
        "referees": "by its referees' decision, each naming a side",
        "replay": "by a judge replay afterwards",
        "none": "by no judge",
    }
    verdict = " (a ranking of the teams)" if card.ranks_teams() and card.judging == "in_debate" else ""
    lines += [
        "",
        "## The sequence",
        "",
        f"At the default options, with every seat filled: {_calls(card, options)} calls, "
        f"{card.statements(options)} public statements by the debaters; judged {judging[card.judging]}{verdict}; "
        f"audience vote: {card.poll or 'none'}.",
        *_rubrics(card),
        "",
        "| # | seat | what | step | public | sees | reads |",
        "|---|---|---|---|---|---|---|",
    ]
    plan = card.plan(options)
    for call in plan:
        if call.phase == "end":
            continue
        seat = labels.get(call.seat or "", "") if call.seat else ""
        lines.append(
            f"| {call.ordinal} | {_cell(seat)} | {_what(call)} | {_cell(call.label or call.step)} | "
            f"{'yes' if call.visibility == 'public' else 'no'} | {_cell(call.sees)} | {_cell(', '.join(call.reads))} |"
        )
    ending = [call for call in plan if call.phase == "end"]
    lines += ["", "**Ended early by its owner:** "]
    if ending:
        steps = ", then ".join(f"{_what(c)} by {labels.get(c.seat or '', '')}" for c in ending)
        lines[-1] += f"speeches whose instruction is out are still given; then {steps}."
    else:
        lines[-1] += "no further speech; a judge still scores what was said and gives its verdict."
    lines += [
        "",
        "## Prompts",
        "",
        "Each text as the card holds it; placeholders in braces are filled in (docs/cards.md).",
    ]
    seen: set[tuple[str, str]] = set()
    slots = card.layout(options).slots
    # A speech with both a moderator's line and a prompt has two texts under its step's name: say which is which.
    lines_before = {s.instruction for s in slots if s.instruction is not None and not s.prompt_is_instruction}
    # A prompt given seat by seat has a text for each seat under one step's name: say whose each one is.
    seats_of: dict[str, dict[str, set[str]]] = {}
    for slot in slots:
        seats_of.setdefault(slot.ref, {}).setdefault(slot.template.source, set()).add(slot.seat or "")
    for slot in slots:
        line = " (system line)" if slot.index in lines_before else ""
        by_seat = seats_of[slot.ref]
        if len({frozenset(seats) for seats in by_seat.values()}) > 1:
            line += " (" + ", ".join(labels[k] for k in labels if k in by_seat[slot.template.source]) + ")"
        for what, template in (
            (line, slot.template),
            (f"{line} (status line)" if line else " (status line)", slot.status),
        ):
            if not template.source or (slot.ref + what, template.source) in seen:
                continue
            seen.add((slot.ref + what, template.source))
            lines += ["", f"### {slot.ref}{what}", "", "```text", template.source.rstrip("\n"), "```"]
    notes = [c for c in plan if c.check in ("stop", "decision")]
    if notes:
        lines += ["", "## How it decides", ""]
        lines += list(dict.fromkeys(f"- {c.text}" for c in notes))
    return "\n".join(lines) + "\n"


def _rubrics(card: CardFormat) -> list[str]:
    """The judge's marks by criterion, where its card gives them: each speech's, and the verdict's."""
    judge = card.spec.judge
    if judge is None:
        return []
    lines = []
    for rubric, what in ((judge.score_rubric, "each speech it scores"), (judge.rubric, "each side in its verdict")):
        if rubric:
            marks = ", ".join(f"{c.label} (0 to {c.maximum})" for c in rubric)
            lines += ["", f"The judge marks {what} by: {marks}."]
    return lines


def _calls(card: CardFormat, options: Mapping[str, Any]) -> str:
    fewest, most = card.fewest_calls(options), card.calls(options)
    return f"{fewest} to {most}" if fewest < most else str(most)
