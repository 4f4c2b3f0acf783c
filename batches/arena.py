"""A batch's side of its arena (audience/arena.py holds every arena's rules): the owner's opt-in of its finished
debates, the warning that a batch others can read is not blind, and who its debaters were, what a redaction
removes and a reveal shows."""

from __future__ import annotations

from batches.models import BatchRecord, PersonaSnapshot
from chaoslm.sharing import Visibility
from debates.models import Seat


def set_arena(batch: BatchRecord, on: bool) -> None:
    """The owner puts the batch's finished debates in its arena, or takes them out (the votes stay)."""
    type(batch).objects.filter(pk=batch.pk).update(arena=on)
    batch.arena = on


def not_blind(batch: BatchRecord) -> str:
    """Why the batch's debates are not blind in an arena: its named transcripts can be read, word for word, by
    anyone (public) or anyone with its link (unlisted). "" for a private batch."""
    if batch.visibility == Visibility.PRIVATE:
        return ""
    return (
        f"This {batch._meta.verbose_name} is {batch.visibility}, so its debates can be read with the debaters' "
        "names, word for word: in the arena they are not blind. Make it private for a blind vote."
    )


def identity(snapshot: PersonaSnapshot, seats: list[Seat]) -> tuple[list[str], str]:
    """A debater's every name (the batch's snapshot's, its persona's, its seats' and their personas') and the model
    its seats ran on (the seat's, else its provider's default): what a redaction removes and a reveal shows."""
    names = [snapshot.name, str(snapshot.spec.get("name") or "")]
    if snapshot.persona is not None:
        names.append(snapshot.persona.name)
    model = ""
    for seat in seats:
        names.append(seat.name)
        if seat.persona is not None:
            names.append(seat.persona.name)
        provider = seat.persona.provider if seat.persona is not None else None
        model = seat.llm_settings.model or (provider.default_model if provider is not None else "")
    return names, model
