from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from api import tokens
from api.models import ApiToken, Delivery, Webhook


class NewTokenForm(forms.ModelForm):
    class Meta:
        model = ApiToken
        fields = ["user", "name", "read_only"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "prefix", "read_only", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["read_only"]
    search_fields = ["name", "user__username", "prefix"]
    actions = ["revoke_selected"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = NewTokenForm
        return super().get_form(request, obj, change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # A token's owner, access and secret are fixed when it is made; it can be renamed or revoked.
        return ["user", "read_only", "prefix", "created_at", "last_used_at"] if obj else []

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        made, raw = tokens.create_token(obj.user, obj.name, read_only=obj.read_only)
        obj.pk = made.pk
        # The one time the secret is shown: copy it from this message.
        messages.warning(request, f"The new token (shown only now): {raw}")

    @admin.action(description="Revoke the selected tokens")
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            tokens.revoke(token)


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["url", "owner", "active", "created_at"]
    search_fields = ["url", "owner__username"]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["kind", "webhook", "status", "attempts", "last_status_code", "created_at"]
    list_filter = ["status", "kind"]
    readonly_fields = ["webhook", "kind", "key", "payload", "attempts", "last_status_code", "last_error"]
