"""The admin of every kind of batch: to look into, not to rewrite. A batch's rows are its state (its jobs are made
with it, its progress is derived from them), so everything that its run reads is read-only: changing a job, a
snapshot of a debater or the options mid-run would make its report mix two batches. Only the name is editable,
and its sharing: who may see it (through its kind, so its debates follow) and its share link. Deleting one stops
its run first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from batches.kinds import BatchKind
from chaoslm import sharing
from chaoslm.sharing import Visibility


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return list(self.fields or ())

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def inline(model: type[models.Model], fields: Sequence[str] = ("role", "order", "name", "persona")) -> type:
    """A read-only table of a batch's rows in its page: by default its debaters and judges (PersonaSnapshot)."""
    return type(f"{model.__name__}Inline", (ReadOnlyInline,), {"model": model, "fields": list(fields)})


class BatchAdmin(admin.ModelAdmin):
    """A batch of debates (a tournament, an experiment): made only by its form or command, which check it; deleted
    with its `parts` (rows made with it, whose own admins refuse to delete them one by one) through its kind's
    `delete`, which stops its run first."""

    list_display = ["id", "name", "owner", "status", "visibility", "created_at", "finished_at"]
    list_filter = ["status", "visibility"]
    search_fields = ["name"]
    list_select_related = ["owner"]
    parts: tuple[type[models.Model], ...] = ()
    kind: BatchKind
    # The kind's own settings, shown after who may see it.
    settings: tuple[str, ...] = ()
    # Those of its settings that are the owner's choice at any time, as its sharing is (putting it in the arena).
    editable: tuple[str, ...] = ()
    actions = ["new_share_link"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Staff manage its sharing here (who may see it, its share link); the rest is its run's state.
        editable = ("name", "visibility", *self.editable)
        return [f for f in self.get_fields(request, obj) if f not in editable] + ["share_link"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        fields = ["name", "owner", "status", "visibility", *self.settings, "concurrency", "share_token"]
        return [*fields, "created_at", "finished_at", *(["share_link"] if obj else [])]

    @admin.display(description="Share link")
    def share_link(self, batch: Any) -> str:
        if batch.visibility == Visibility.PRIVATE:
            return "none while it is private"
        return f"{settings.CHAOSLM_SITE_URL}{reverse(f'{batch._meta.model_name}_share', args=[batch.share_token])}"

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        visibility = obj.visibility
        if change and "visibility" in form.changed_data:
            # Through its kind: its debates follow, and the sockets that lose the right close.
            obj.visibility = form.initial["visibility"]
            self.kind.set_visibility(obj, visibility)
        super().save_model(request, obj, form, change)

    @admin.action(description="Give them new share links (the old ones stop working)")
    def new_share_link(self, request: HttpRequest, queryset: QuerySet) -> None:
        for batch in queryset:
            sharing.reset_share_link(batch)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, set[str], Any]:
        # Its parts go with it, so deleting it needs no permission on them.
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(perms_needed) - {model._meta.verbose_name for model in self.parts}, protected

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.kind.delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for batch in queryset:
            self.kind.delete(batch)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
