"""Who sees a debate's private thinking and its prompts: one rule for the page, the live pushes, the share
page and both exports.

- The owner and staff, at the debate's own address, see everything: private PLAN and THINK events, the exact
  prompts, and the internal calls (a verdict's winner check, its JSON).
- Everyone else (another user on a public debate, anyone at the share link, the owner and staff included
  there, since a share link shows what it passes on) sees the private thinking only when the owner
  chose to show it (`Debate.show_thinking`), and never a prompt: a prompt may quote its seat's
  private notes (a structured opening embeds the preparation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chaoslm import sharing
from debates.models import Debate


@dataclass(frozen=True)
class Access:
    """What one viewer of a debate may read beyond its public events."""

    thinking: bool  # the private events: the debaters' plans and thoughts, the judge's notes (PLAN, THINK)
    prompts: bool  # every event's exact prompt, and the internal calls


EVERYTHING = Access(thinking=True, prompts=True)


def is_insider(user: Any, debate: Debate, *, via_share: bool = False) -> bool:
    """The owner or staff, at the debate's own address."""
    return not via_share and (sharing.is_owner(user, debate) or bool(user.is_staff))


def viewers_access(debate: Debate) -> Access:
    """What anyone but the owner and staff may read: the share link's page and export, `export --public`."""
    return Access(thinking=debate.show_thinking, prompts=False)


def access(user: Any, debate: Debate, *, via_share: bool = False) -> Access:
    """What `user` may read of `debate` at its own address, or at its share link (`via_share`)."""
    return EVERYTHING if is_insider(user, debate, via_share=via_share) else viewers_access(debate)
