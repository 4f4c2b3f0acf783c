"""Experiments in the admin: to look into, not to rewrite (as batches/admin.py says: its rows
are its state, so changing a run, a participant's snapshot or the options mid-run would make its report mix two
experiments). Only the name and the sharing are editable (batches/admin.py). Deleting one stops its run first."""

from __future__ import annotations

from django.contrib import admin

from batches.admin import BatchAdmin, ReadOnlyAdmin, inline
from experiments import work
from experiments.models import Experiment, Participant, Question, Run


@admin.register(Experiment)
class ExperimentAdmin(BatchAdmin):
    # The passages are long: each is shown on its runs' debates.
    inlines = [inline(Participant), inline(Question, ["index", "question", "answers", "correct"])]
    settings = ("arena", "protocols", "options")
    editable = ("arena",)
    parts = (Run, Participant, Question)
    kind = work.EXPERIMENT


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ["experiment", "order", "question", "protocol", "swapped", "judge", "debate", "attempts"]
    list_filter = ["experiment", "protocol"]
    list_select_related = ["experiment", "question", "judge", "debate"]
    search_fields = ["question__question", "judge__name"]
