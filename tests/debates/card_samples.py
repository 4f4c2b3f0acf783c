"""Protocol cards for the Django side's tests (the card language's own tests are in tests/debates/formats/)."""

from __future__ import annotations


def valid(name: str = "town-hall", title: str = "Town hall", description: str = "Two speakers, one reply each.") -> str:
    return f"""name: {name}
title: {title}
description: {description}
sides:
  - {{key: for, label: For, stance: for}}
  - {{key: against, label: Against, stance: against}}
seats:
  - {{key: pro, role: debater, label: Proponent, side: for}}
  - {{key: con, role: debater, label: Opponent, side: against}}
stages:
  - speech: opening
    seat: pro
    prompt: "Open the case on {{topic}}."
  - speech: reply
    seat: con
    prompt: "Answer {{previous}} on {{topic}}."
"""


# Two problems at once: a seat nobody defined (line 12), and a placeholder the language does not have (line 16).
BROKEN = valid().replace("seat: pro", "seat: ghost").replace("Answer {previous}", "Answer {bogus}")
BROKEN_PROBLEMS = [(12, "seat"), (16, "prompt")]


def first_prompt(topic: str) -> str:
    """The exact prompt of the card's first call, for `topic`."""
    return f"Open the case on {topic}."


# A card with an option: each side plans in private, then they alternate speeches, as many as chosen.
SPEECHES = """name: speeches
title: Speeches <in turn>
description: Each side plans in private, then the sides alternate public speeches, as many as you choose.
options:
  speeches: {label: Speeches, default: 2, min: 1, max: 9, help: "Public speeches in all, the proponent first."}
sides:
  - {key: for, label: For, stance: for}
  - {key: against, label: Against, stance: against}
seats:
  - {key: pro, role: debater, label: Proponent, side: for}
  - {key: con, role: debater, label: Opponent, side: against}
stages:
  - plan: plan
    seat: [pro, con]
    prompt: "Plan your case on {topic} privately."
  - repeat: speeches
    stages:
      - speech: argue
        seat: [pro, con]
        prompt: "Argue on {topic}; {opponent} answers next."
"""
