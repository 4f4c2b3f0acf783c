"""The room forms: a new room, and a room's auto-mode settings."""

from __future__ import annotations

from django import forms

from chaoslm.personas.models import Persona
from rooms.models import MAX_MESSAGES, Room


class NewRoomForm(forms.Form):
    title = forms.CharField(max_length=200, widget=forms.TextInput(attrs={"placeholder": "A chat about cities"}))
    personas = forms.ModelMultipleChoiceField(
        queryset=Persona.objects.all(),
        widget=forms.CheckboxSelectMultiple,
        help_text="They answer in this order; you can add more later.",
    )
    visibility = forms.ChoiceField(choices=Room.Visibility.choices, initial=Room.Visibility.PRIVATE)


class SettingsForm(forms.ModelForm):
    class Meta:
        model = Room
        fields = ["response_delay", "max_messages", "max_wait"]
        help_texts = {"max_messages": f"Auto mode stops after this many messages (0 to {MAX_MESSAGES}; 0: no limit)."}
        widgets = {"max_messages": forms.NumberInput(attrs={"min": 0, "max": MAX_MESSAGES})}
