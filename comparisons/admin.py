"""Comparisons in the admin: to look into, not to rewrite (its rows are its state: batches/admin.py). Only the name
and the sharing are editable. Deleting one stops its run first."""

from __future__ import annotations

from django.contrib import admin

from batches.admin import BatchAdmin, ReadOnlyAdmin, inline
from comparisons import kind
from comparisons.models import Comparison, Question, Run


@admin.register(Comparison)
class ComparisonAdmin(BatchAdmin):
    inlines = [inline(Question, ["index", "ident", "kind", "question", "answer"])]
    settings = ("arms",)
    editable = ()
    parts = (Run, Question)
    kind = kind.COMPARISON


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ["comparison", "order", "question", "arm", "debate", "attempts"]
    list_filter = ["comparison"]
    list_select_related = ["comparison", "question", "debate"]
    search_fields = ["question__question"]
