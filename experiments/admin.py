"""Experiments in the admin: to look into, not to rewrite (as tournaments/admin.py, for the same reason: its rows
are its state, so changing a run, a participant's snapshot or the options mid-run would make its report mix two
experiments). Only the name is editable. Deleting one stops its run first (experiments/services.py `delete`)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from experiments import services
from experiments.models import Experiment, Participant, Question, Run
from tournaments.admin import ReadOnlyAdmin, ReadOnlyInline


class ParticipantInline(ReadOnlyInline):
    model = Participant
    fields = ["role", "order", "name", "persona"]
    readonly_fields = fields


class QuestionInline(ReadOnlyInline):
    model = Question
    fields = ["index", "question", "answers", "correct"]  # the passages are long: each on its runs' debates
    readonly_fields = fields


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "owner", "status", "visibility", "created_at", "finished_at"]
    list_filter = ["status", "visibility"]
    search_fields = ["name"]
    list_select_related = ["owner"]
    inlines = [ParticipantInline, QuestionInline]
    fields = [
        "name",
        "owner",
        "status",
        "visibility",
        "protocols",
        "options",
        "concurrency",
        "share_token",
        "created_at",
        "finished_at",
    ]
    readonly_fields = fields[1:]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # an experiment is made by its form or `manage.py experiment`, which check it

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, set[str], Any]:
        # Its runs, participants and questions go with it: part of the experiment, not deleted one by one
        # (the run admin refuses that), so deleting it needs no permission on them.
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        parts = {model._meta.verbose_name for model in (Run, Participant, Question)}
        return deleted, counts, set(perms_needed) - parts, protected

    def delete_model(self, request: HttpRequest, obj: Experiment) -> None:
        services.delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Experiment]) -> None:
        for experiment in queryset:
            services.delete(experiment)


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ["experiment", "order", "question", "protocol", "swapped", "judge", "debate", "attempts"]
    list_filter = ["experiment", "protocol"]
    list_select_related = ["experiment", "question", "judge", "debate"]
    search_fields = ["question__question", "judge__name"]
