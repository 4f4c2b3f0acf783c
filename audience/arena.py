"""What every arena shares (tournaments/arena.py's matches, experiments/arena.py's evidence debates): which of its
debates a voter is served, the refusal of one that is not in it, and one final vote per voter and debate (who its
debaters were, the names a redaction removes, is batches/arena.py's `identity`).

An arena is an `Arena` whose kind says what is voted on (`items`: the finished debates of the batches whose owners
opted in), how a voter sees it (`seen`, redacted by debates/redaction.py: its `complete` says whether a name may
remain) and what a vote holds (its `vote_model`, an `ArenaVoteBase`). The rules are the same for each:

- a voter is served, at random, a debate they have not voted on: two indexed queries (a count and an offset), not
  ORDER BY random() over every debate;
- one vote per debate and voter, and it is final: the vote reveals who was who (and in the evidence arena the
  right answer), so a voter who has seen that cannot change it (the browser's back button and a second post are
  refused, 409, and nothing changes). The first vote is one INSERT ... ON CONFLICT DO NOTHING under the unique
  constraint, so the same vote posted twenty times at once counts once (and a new visitor's voter id is their
  form's ballot's, audience/poll_views.py, so their double click is one voter too);
- a vote on a transcript whose redaction was incomplete is kept, marked `excluded`, and counted in no figure;
- a debate not in the arena, or a choice that is not one, is refused (404, 400) and nothing is counted.

Who votes, the signed cookie and the per-address limit are the Oxford poll's (audience/poll_views.py).
"""

from __future__ import annotations

import random
from typing import Any, Generic, Protocol, TypeVar

from django.db.models import Model, QuerySet

from audience.models import ArenaVoteBase
from audience.votes import PollError

Item = TypeVar("Item", bound=Model)


class Seen(Protocol):
    """What a blind voter reads of a debate: its kind adds the texts, who was who and the answer."""

    @property
    def complete(self) -> bool: ...


class Arena(Generic[Item]):
    """One kind's arena; the kind fills in the class attributes and `items` and `seen`."""

    vote_model: type[ArenaVoteBase]
    item: str  # the vote's foreign key to what is voted on ("match", "run")
    related: tuple[str, ...] = ()  # what `seen` reads of an item, fetched with it
    not_in_arena: str  # the 404's message
    bad_choice: str  # the 400's message
    final: str  # the 409's message: a second vote by who has seen the reveal
    vote_noun: str = "vote"  # what the page calls a vote ("answer" where the voter answers a question)
    opted_in: str  # the owner's message once the batch's debates are in the arena
    opted_out: str  # and once they left it

    def items(self) -> QuerySet[Item]:
        """Every debate in the arena: finished, of a batch whose owner opted in."""
        raise NotImplementedError

    def seen(self, item: Item) -> Seen:
        raise NotImplementedError

    def pick(self, voter: str | None) -> Item | None:
        """A random debate in the arena that `voter` has not voted on (None: none left)."""
        left = self.items()
        if voter:
            left = left.exclude(pk__in=self.vote_model.objects.filter(voter=voter).values(f"{self.item}_id"))
        count = left.count()
        if not count:
            return None
        return left.order_by("pk").select_related(*self.related)[random.randrange(count)]

    def in_arena(self, item_id: int | None) -> Item:
        """The item, if it is in the arena; PollError (404) otherwise."""
        found = self.items().filter(pk=item_id).select_related(*self.related).first() if item_id else None
        if found is None:
            raise PollError(self.not_in_arena, 404)
        return found

    def cast(self, item: Item, voter: str, choice: str) -> Any:
        """Count `voter`'s vote on the item, once: PollError (400) for a choice that is not one, (409) for a voter
        who voted on it already, and so has seen who was who, and now says otherwise; the same vote again is the
        vote already counted. The vote is `excluded` when the transcript it was cast on still names someone."""
        choices = self.vote_model._meta.get_field("choice").choices or ()
        if choice not in {value for value, _ in choices}:
            raise PollError(self.bad_choice, 400)
        row = self.vote_model(**{self.item: item}, voter=voter, choice=choice, excluded=not self.seen(item).complete)
        # Under the unique constraint: of concurrent first votes one row is stored, the others change nothing.
        self.vote_model.objects.bulk_create([row], ignore_conflicts=True)
        counted = self.vote_of(item, voter)
        if counted.choice != choice:
            raise PollError(self.final, 409)
        return counted

    def vote_of(self, item: Item, voter: str | None) -> Any:
        """The voter's own vote on the item, if any (to reveal who was who to them, and only them)."""
        return self.vote_model.objects.filter(**{self.item: item}, voter=voter).first() if voter else None
