"""What every kind of batch's form has alike."""

from __future__ import annotations

from django import forms

from chaoslm.personas.models import Persona


class PersonaChoices(forms.ModelMultipleChoiceField):
    """Debaters or judges to tick, each by its persona's name."""

    def label_from_instance(self, obj: Persona) -> str:
        return obj.name
