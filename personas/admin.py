from __future__ import annotations

import dataclasses
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from chaoslm import costs
from chaoslm.llm import prices
from personas.models import Budget, Persona, Provider, import_personas
from personas.yaml_io import ROLES, PersonaYAMLError, dump_personas, parse_personas


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ["name", "base_url", "default_model", "json_mode", "context_window", "api_key_env", "price_shown"]
    search_fields = ["name", "base_url", "default_model"]
    fieldsets = [
        (None, {"fields": ["name", "base_url", "api_key_env", "default_model", "context_window", "json_mode"]}),
        (
            "Prices (dollars per million tokens)",
            {
                "fields": ["input_price", "output_price", "cached_input_price"],
                "description": "Leave empty to use the price genai-prices knows for each model by its name; "
                "a model it does not know shows its cost as unknown.",
            },
        ),
    ]
    # A base URL typed without a scheme is most often a local server (llama.cpp, Ollama), which speaks http;
    # said here, it stays so when Django's default turns to https. "localhost:11434/v1" reads as a scheme of
    # its own, so the refusal says what to write.
    formfield_overrides = {
        models.URLField: {
            "assume_scheme": "http",
            "error_messages": {
                "invalid": "Write the whole URL, with http:// or https://, e.g. http://localhost:11434/v1."
            },
        }
    }

    @admin.display(description="price")
    def price_shown(self, provider: Provider) -> str:
        price = prices.price_of(provider.base_url, provider.default_model, provider.price)
        return price.text() if price else "unknown price"


@admin.register(Budget)
class BudgetAdmin(admin.ModelAdmin):
    """A person's monthly budget (docs/costs.md); those with none have CHAOSLM_DEFAULT_MONTHLY_BUDGET."""

    list_display = ["user", "monthly", "spent_shown"]
    search_fields = ["user__username"]
    autocomplete_fields = ["user"]

    @admin.display(description="spent this month")
    def spent_shown(self, budget: Budget) -> str:
        return costs.spent_this_month(budget.user).text()


YAML_HELP = (
    "The persona as YAML, the source of truth. Its fields: name, role ({roles}) and personality (required); "
    "position, instructions, judging_criteria, model, provider, temperature (0 to 2), max_tokens (1 to 32768), "
    "formats (the formats whose seats offer it; else every format's). "
    "The read-only fields below are read from it when you save."
)


class PersonaForm(forms.ModelForm):
    class Meta:
        model = Persona
        fields = ["yaml"]
        help_texts = {"yaml": YAML_HELP.format(roles=", ".join(ROLES))}
        widgets = {
            "yaml": forms.Textarea(
                attrs={
                    "rows": 24,
                    "cols": 100,
                    "class": "vLargeTextField",
                    "spellcheck": "false",
                    "style": "font-family: ui-monospace, monospace; width: 95%",
                }
            )
        }

    def clean_yaml(self) -> str:
        text = self.cleaned_data["yaml"]
        try:
            specs = parse_personas(text, "YAML")
        except PersonaYAMLError as error:
            raise forms.ValidationError([str(e) for e in error.errors]) from None
        if len(specs) != 1:
            raise forms.ValidationError("This box holds one persona; use Import for several.")
        spec = specs[0]
        clash = Persona.objects.filter(name=spec.name).exclude(pk=self.instance.pk)
        if clash.exists():
            raise forms.ValidationError(f"YAML: name: a persona named {spec.name!r} already exists")
        try:
            self.instance.apply_spec(spec, "YAML")
        except PersonaYAMLError as error:
            raise forms.ValidationError(str(error)) from None
        return self.instance.yaml


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".yaml,.yml,text/yaml"}))
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class ImportForm(forms.Form):
    files = MultipleFileField(label="YAML files")
    update = forms.BooleanField(required=False, label="Replace personas that have the same name", initial=False)


@admin.register(Persona)
class PersonaAdmin(admin.ModelAdmin):
    form = PersonaForm
    list_display = ["name", "role", "model_label", "updated_at"]
    list_filter = ["role", "provider"]
    search_fields = ["name", "personality", "position", "instructions", "judging_criteria"]
    # What the YAML says, as saved: the help text above the box points here.
    readonly_fields = ["name", "role", "model_label", "temperature", "max_tokens", "formats", "system_prompt_preview"]
    fields = ["yaml", *readonly_fields]
    actions = ["export_yaml", "duplicate"]
    change_list_template = "admin/personas/persona/change_list.html"

    class Media:
        # The prompt preview's look, from a file: the site's content security policy allows no inline style.
        css = {"all": ("css/admin.css",)}

    @admin.display(description="model")
    def model_label(self, obj: Persona) -> str:
        provider = obj.provider.name if obj.provider else "default provider"
        return f"{obj.model or 'default model'} @ {provider}"

    @admin.display(description="System prompt it will get")
    def system_prompt_preview(self, obj: Persona) -> str:
        if not obj.pk:
            return "Save to see the exact system prompt."
        spec = obj.spec()
        return format_html(
            "<p>In a {} seat:</p><pre class='prompt-preview'>{}</pre>",
            spec.role,
            spec.system_prompt(),
        )

    @admin.action(description="Export selected personas as YAML")
    def export_yaml(self, request: HttpRequest, queryset: QuerySet[Persona]) -> HttpResponse:
        personas = list(queryset.select_related("provider"))
        response = HttpResponse(dump_personas([p.spec() for p in personas]), content_type="application/yaml")
        filename = f"{personas[0].name}.yaml" if len(personas) == 1 else "personas.yaml"
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in filename)
        response["Content-Disposition"] = f'attachment; filename="{safe}"'
        return response

    @admin.action(description="Duplicate selected personas")
    def duplicate(self, request: HttpRequest, queryset: QuerySet[Persona]) -> None:
        taken = set(Persona.objects.values_list("name", flat=True))
        for persona in queryset.select_related("provider"):
            name = f"{persona.name} (copy)"
            number = 2
            while name in taken:
                name = f"{persona.name} (copy {number})"
                number += 1
            taken.add(name)
            copy = Persona()
            copy.apply_spec(dataclasses.replace(persona.spec(), name=name))
            copy.save()
        self.message_user(request, f"Duplicated {queryset.count()} persona(s).", messages.SUCCESS)

    def get_urls(self) -> list[Any]:
        urls = [path("import/", self.admin_site.admin_view(self.import_view), name="personas_persona_import")]
        return urls + super().get_urls()

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            return HttpResponse(status=403)
        form = ImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            try:
                files = [(f.name, f.read(self._read_limit() + 1)) for f in form.cleaned_data["files"]]
                saved = import_personas(files, update=form.cleaned_data["update"])
            except PersonaYAMLError as error:
                form.add_error("files", [str(e) for e in error.errors])
            else:
                self.message_user(
                    request,
                    f"Imported {len(saved)} persona(s): {', '.join(p.name for p in saved)}.",
                    messages.SUCCESS,
                )
                return redirect(reverse("admin:personas_persona_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": "Import personas from YAML",
        }
        return TemplateResponse(request, "admin/personas/persona/import.html", context)

    @staticmethod
    def _read_limit() -> int:
        from django.conf import settings

        return settings.CHAOSLM_PERSONA_MAX_BYTES
