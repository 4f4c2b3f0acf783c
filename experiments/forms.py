"""The new-experiment form: a question set (an uploaded JSONL file or the sample set), protocols, personas, options."""

from __future__ import annotations

from typing import Any

from django import forms

from batches.forms import BatchForm, PersonaChoices
from debates.formats.evidence import ROUNDS, WORD_LIMIT
from experiments import design, services
from experiments.models import Experiment
from experiments.questions import MAX_BYTES, parse_file, sample
from personas.models import Persona

PROTOCOL_CHOICES = [
    (design.DEBATE, "Debate: two debaters who read the passage argue A and B"),
    (design.CONSULTANCY, "Consultancy: one consultant argues one answer; the judge asks questions"),
    (design.BLIND, "Blind: the judge answers from the question alone"),
    (design.ORACLE, "Oracle: the judge reads the passage (a ceiling)"),
]


class NewExperimentForm(BatchForm):
    name = forms.CharField(max_length=200, widget=forms.TextInput(attrs={"placeholder": "Does debate help?"}))
    questions_file = forms.FileField(
        required=False,
        label="Question set (JSONL)",
        help_text='One a line: {"passage": ..., "question": ..., "answers": [A, B], "correct": 0, 1 or null}. '
        "Passages up to 20,000 characters.",
    )
    use_sample = forms.BooleanField(
        required=False, label="Use the sample set (twelve short passages) instead of a file"
    )
    protocols = forms.MultipleChoiceField(
        choices=PROTOCOL_CHOICES,
        initial=[design.DEBATE, design.CONSULTANCY, design.BLIND],
        widget=forms.CheckboxSelectMultiple,
    )
    debaters = PersonaChoices(
        queryset=Persona.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Two or more for a debate; each is also a consultant.",
    )
    judges = PersonaChoices(queryset=Persona.objects.none(), widget=forms.CheckboxSelectMultiple)
    rounds = forms.IntegerField(min_value=ROUNDS.minimum, max_value=ROUNDS.maximum, initial=ROUNDS.default)
    word_limit = forms.IntegerField(
        min_value=WORD_LIMIT.minimum,
        max_value=WORD_LIMIT.maximum,
        initial=WORD_LIMIT.default,
        help_text=WORD_LIMIT.help,
    )
    simultaneous = forms.BooleanField(required=False, help_text="Debaters write each round at once.")
    arena = forms.BooleanField(
        required=False,
        label="Put its finished evidence debates in the arena",
        help_text="Anyone may then read them without names and pick an answer; the report sets people's accuracy "
        "beside the judges'.",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("questions_file")
        if upload and data.get("use_sample"):
            self.add_error("questions_file", "Upload a file or use the sample set, not both.")
        elif upload:
            self.parsed_questions = self.read_upload("questions_file", parse_file, MAX_BYTES)
        elif data.get("use_sample"):
            self.parsed_questions = sample()
        else:
            self.add_error("questions_file", "Upload a question set or use the sample set.")
        return data

    def options(self) -> dict[str, int]:
        data = self.cleaned_data
        return {
            "rounds": data["rounds"],
            "word_limit": data["word_limit"],
            "simultaneous": int(bool(data.get("simultaneous"))),
        }

    def create(self, owner: Any) -> Experiment:
        data = self.cleaned_data
        return services.create_experiment(
            **self.arguments(), protocols=data["protocols"], arena=data["arena"], owner=owner
        )

    def estimate(self) -> design.Estimate:
        """The size of the experiment as entered so far (the line the form shows before it starts)."""
        data = getattr(self, "cleaned_data", {})
        return design.estimate(
            len(self.parsed_questions),
            list(data.get("protocols") or []),
            len(data.get("debaters") or []),
            len(data.get("judges") or []),
            {"rounds": data.get("rounds") or ROUNDS.default},
        )
