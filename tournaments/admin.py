"""Tournaments in the admin: to look into, not to rewrite. A tournament's rows are its state (its matches and
judgments are made with it, its progress is derived from them), so everything that the run reads is read-only:
changing a match, an entrant's snapshot or the options mid-run would make its report mix two tournaments.
Only the name and the sharing are editable (batches/admin.py). Deleting one stops its run first (batches/kinds.py
`delete`)."""

from __future__ import annotations

from django.contrib import admin

from batches.admin import BatchAdmin, ReadOnlyAdmin, inline
from tournaments import services
from tournaments.models import Entrant, Judgment, Match, Question, Tournament


@admin.register(Tournament)
class TournamentAdmin(BatchAdmin):
    inlines = [inline(Entrant), inline(Question, ["index", "topic", "premise", "correct"])]
    settings = ("arena", "format", "options", "sides", "repeats")
    parts = (Match, Judgment, Entrant, Question)
    kind = services.TOURNAMENT
    editable = ("arena",)


@admin.register(Match)
class MatchAdmin(ReadOnlyAdmin):
    list_display = ["tournament", "order", "question", "debater_for", "debater_against", "debate", "attempts"]
    list_filter = ["tournament"]
    list_select_related = ["tournament", "question", "debater_for", "debater_against", "debate"]
    search_fields = ["question__topic", "debater_for__name", "debater_against__name"]


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["match", "judge", "repeat", "in_debate", "debate", "attempts"]
    list_filter = ["match__tournament", "in_debate"]
    list_select_related = ["match", "judge", "debate"]
