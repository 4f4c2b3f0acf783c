"""The new-experiment form: a question set (an uploaded JSONL file or the sample set), protocols, personas, options."""

from __future__ import annotations

from typing import Any

from django import forms

from batches.forms import PersonaChoices
from chaoslm.personas.models import Persona
from chaoslm.sharing import Visibility
from debates.formats.evidence import ROUNDS, WORD_LIMIT
from experiments import design
from experiments.questions import MAX_BYTES, EvidenceQuestion, QuestionsError, parse_file, sample

PROTOCOL_CHOICES = [
    (design.DEBATE, "Debate: two debaters who read the passage argue A and B"),
    (design.CONSULTANCY, "Consultancy: one consultant argues one answer; the judge asks questions"),
    (design.BLIND, "Blind: the judge answers from the question alone"),
    (design.ORACLE, "Oracle: the judge reads the passage (a ceiling)"),
]


class NewExperimentForm(forms.Form):
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
    concurrency = forms.IntegerField(min_value=1, max_value=100, initial=8, help_text="Debates at once.")
    visibility = forms.ChoiceField(choices=Visibility.choices, initial=Visibility.PRIVATE)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["debaters"].queryset = Persona.objects.filter(role="debater")
        self.fields["judges"].queryset = Persona.objects.filter(role="judge")
        self.parsed_questions: list[EvidenceQuestion] = []

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("questions_file")
        if upload and data.get("use_sample"):
            self.add_error("questions_file", "Upload a file or use the sample set, not both.")
        elif upload:
            if upload.size > MAX_BYTES:
                self.add_error("questions_file", f"{upload.name} is larger than {MAX_BYTES // (1024 * 1024)} MB.")
            else:
                try:
                    self.parsed_questions = parse_file(upload.name, upload.read())
                except QuestionsError as error:
                    self.add_error("questions_file", error.problems)
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
