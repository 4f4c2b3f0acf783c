"""The room forms: a new room, and a room's auto-mode settings."""

from __future__ import annotations

from typing import Any

from django import forms

from chaoslm.http import IdChoices, parse_id
from personas.models import Persona
from rooms.models import MAX_MESSAGES, Room, RoomAgent, RoomTemplate


class NewRoomForm(forms.Form):
    title = forms.CharField(max_length=200, widget=forms.TextInput(attrs={"placeholder": "A chat about cities"}))
    template = forms.ModelChoiceField(
        queryset=RoomTemplate.objects.none(),
        required=False,
        empty_label="none: choose the personas below",
        help_text="A template brings its agents, their order and talkativeness, its turn order and settings.",
    )
    personas = IdChoices(
        queryset=Persona.objects.all(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="They answer in the order you tick them; you can add more later.",
    )
    # The persona ids in the order they were ticked, kept by static/js/rooms.js; without it, the list's order.
    order = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)
    visibility = forms.ChoiceField(choices=Room.Visibility.choices, initial=Room.Visibility.PRIVATE)

    def __init__(self, *args: Any, owner: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if owner is not None:
            self.fields["template"].queryset = RoomTemplate.objects.filter(owner=owner)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        personas = list(data.get("personas") or ())
        if not personas and not data.get("template"):
            self.add_error("personas", "Choose at least one persona, or a template.")
        parts = [part for part in data.get("order", "").split(",") if part]
        ticked = [parse_id(part) for part in parts]
        if None in ticked:
            unread = parts[ticked.index(None)][:20]
            self.add_error(
                "personas", f"The order they were ticked in could not be read ({unread!r} is no persona's id)."
            )
            return data
        rank = {persona_id: index for index, persona_id in enumerate(dict.fromkeys(ticked))}
        # Sorted is stable: personas the order does not name keep the list's order, after the named ones.
        data["personas"] = sorted(personas, key=lambda p: rank.get(p.pk, len(rank)))
        return data


class SettingsForm(forms.ModelForm):
    class Meta:
        model = Room
        fields = ["response_delay", "max_messages", "max_wait"]
        help_texts = {"max_messages": f"Auto mode stops after this many messages (0 to {MAX_MESSAGES}; 0: no limit)."}
        widgets = {"max_messages": forms.NumberInput(attrs={"min": 0, "max": MAX_MESSAGES})}


class TurnOrderForm(forms.ModelForm):
    candidates = IdChoices(
        queryset=RoomAgent.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="The selector may name",
    )

    class Meta:
        model = Room
        fields = ["turn_order", "selector", "selector_repeat"]
        labels = {"selector": "Selector model", "selector_repeat": "The same agent may speak twice in a row"}
        help_texts = {"selector_repeat": ""}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        agents = self.instance.agents.all()
        self.fields["candidates"].queryset = agents
        self.fields["candidates"].initial = [a.pk for a in agents if a.candidate]
        self.fields["selector"].empty_label = "the default model"


class MemoryForm(forms.ModelForm):
    class Meta:
        model = Room
        fields = ["memory", "summarizer"]
        labels = {"memory": "When the context fills up", "summarizer": "Summarizer model"}
        # Choices as radio buttons: their labels wrap in the narrow panel, where a select's would be cut off.
        widgets = {"memory": forms.RadioSelect}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["summarizer"].empty_label = "the default model"
