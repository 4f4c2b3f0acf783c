"""Experiments in the admin: to look into, not to rewrite (as tournaments/admin.py, for the same reason: its rows
are its state, so changing a run, a participant's snapshot or the options mid-run would make its report mix two
experiments). Only the name is editable. Deleting one stops its run first (experiments/services.py `delete`)."""

from __future__ import annotations

from django.contrib import admin

from experiments import services
from experiments.models import Experiment, Participant, Question, Run
from tournaments.admin import BatchAdmin, ReadOnlyAdmin, ReadOnlyInline, SnapshotInline


class ParticipantInline(SnapshotInline):
    model = Participant


class QuestionInline(ReadOnlyInline):
    model = Question
    fields = ["index", "question", "answers", "correct"]  # the passages are long: each on its runs' debates
    readonly_fields = fields


@admin.register(Experiment)
class ExperimentAdmin(BatchAdmin):
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

    parts = (Run, Participant, Question)

    def delete_batch(self, batch: Experiment) -> None:
        services.delete(batch)


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ["experiment", "order", "question", "protocol", "swapped", "judge", "debate", "attempts"]
    list_filter = ["experiment", "protocol"]
    list_select_related = ["experiment", "question", "judge", "debate"]
    search_fields = ["question__question", "judge__name"]
