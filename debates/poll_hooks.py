"""A debate's audience poll as the debate's own page, pushes, socket and exports show it. The poll's rules are the
audience app's (audience/votes.py, audience/poll_views.py), which builds on debates: it registers them here from its
`AppConfig.ready()`, as each kind of batch registers itself with batches/kinds.py, so this app calls it without
importing it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debates.models import Debate


@dataclass(frozen=True)
class Poll:
    """What debates asks of the poll: audience/votes.py's functions of those names, `box_context`
    audience/poll_views.py's, and `waiting_ping` the push `poll_ping(WAITING)`."""

    box_context: Callable[..., dict[str, Any] | None]  # (request, debate, *, via_share): the page's box, or None
    current_ping: Callable[[Debate], str]  # the push that makes a page fetch its box ("" without a poll)
    has_poll: Callable[[Debate], bool]
    waiting_ping: Callable[[], str]  # the push once the vote before has closed
    phase_of_message: Callable[[str, int], str | None]  # the vote whose tally a socket's ticket lets it watch
    export: Callable[[Debate], dict[str, Any] | None]  # counts only, for the transcript exports
    export_markdown: Callable[[Mapping[str, Any] | None], list[str]]


_poll: Poll | None = None


def register(poll: Poll) -> None:
    """The audience app's poll (audience/apps.py)."""
    global _poll
    _poll = poll


def poll() -> Poll:
    """The registered poll: every debate page, push, socket and export reads it when used."""
    if _poll is None:
        raise RuntimeError("No audience poll is registered: the audience app is not in INSTALLED_APPS.")
    return _poll
