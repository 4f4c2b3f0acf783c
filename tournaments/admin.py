"""Tournaments in the admin: to look into, not to rewrite. A tournament's rows are its state (its matches and
judgments are made with it, its progress is derived from them), so everything that the run reads is read-only:
changing a match, an entrant's snapshot or the options mid-run would make its report mix two tournaments.
Only the name is editable. Deleting one stops its run first (tournaments/services.py `delete`)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments import services
from tournaments.models import Entrant, Judgment, Match, Question, Tournament


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SnapshotInline(ReadOnlyInline):
    """A batch's debaters and judges (PersonaSnapshot)."""

    fields = ["role", "order", "name", "persona"]
    readonly_fields = fields


class EntrantInline(SnapshotInline):
    model = Entrant


class QuestionInline(ReadOnlyInline):
    model = Question
    fields = ["index", "topic", "premise", "correct"]
    readonly_fields = fields


class BatchAdmin(admin.ModelAdmin):
    """A batch of debates (a tournament, an experiment): made only by its form or command, which check it; deleted
    with its `parts` (rows made with it, whose own admins refuse to delete them one by one) through its service's
    `delete`, which stops its run first."""

    list_display = ["id", "name", "owner", "status", "visibility", "created_at", "finished_at"]
    list_filter = ["status", "visibility"]
    search_fields = ["name"]
    list_select_related = ["owner"]
    parts: tuple[type[models.Model], ...] = ()

    def delete_batch(self, batch: Any) -> None:
        raise NotImplementedError

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, set[str], Any]:
        # Its parts go with it, so deleting it needs no permission on them.
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(perms_needed) - {model._meta.verbose_name for model in self.parts}, protected

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.delete_batch(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for batch in queryset:
            self.delete_batch(batch)


@admin.register(Tournament)
class TournamentAdmin(BatchAdmin):
    inlines = [EntrantInline, QuestionInline]
    fields = [
        "name",
        "owner",
        "status",
        "visibility",
        "format",
        "options",
        "sides",
        "repeats",
        "concurrency",
        "share_token",
        "created_at",
        "finished_at",
    ]
    readonly_fields = fields[1:]
    parts = (Match, Judgment, Entrant, Question)

    def delete_batch(self, batch: Tournament) -> None:
        services.delete(batch)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Match)
class MatchAdmin(ReadOnlyAdmin):
    list_display = ["tournament", "order", "question", "debater_for", "debater_against", "debate", "attempts"]
    list_filter = ["tournament"]
    list_select_related = ["tournament", "question", "debater_for", "debater_against", "debate"]
    search_fields = ["question__topic", "debater_for__name", "debater_against__name"]


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["match", "judge", "repeat", "in_duel", "debate", "attempts"]
    list_filter = ["match__tournament", "in_duel"]
    list_select_related = ["match", "judge", "debate"]
