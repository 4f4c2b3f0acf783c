"""What every page's template knows of the kinds of batch: the navigation's links to their lists, read from the
registry (batches/kinds.py), so a kind registered with pages is in the navigation with no template changed."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from batches.kinds import KINDS


def nav_links() -> list[tuple[str, str]]:
    """(address, label) of each kind's list page (`<model>_list`), in the order the kinds registered; a kind with no
    pages is left out."""
    links = []
    for kind in KINDS.values():
        meta = kind.model._meta
        try:
            address = reverse(f"{meta.model_name}_list")
        except NoReverseMatch:
            continue
        links.append((address, str(meta.verbose_name_plural).capitalize()))
    return links


def batch_kinds(request: HttpRequest) -> dict[str, Any]:
    # The function, not its list: a template calls it only where it shows the links (a signed-in person's page).
    return {"batch_nav": nav_links}
