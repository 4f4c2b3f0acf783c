"""The new-comparison form: a question set (an uploaded JSONL or CSV file, or a shipped sample), the arms (a row each:
its format, from the same selector the spec file and the API read, and its own name, agents and rounds), the one
persona in every seat."""

from __future__ import annotations

from typing import Any

from django import forms

from batches.checks import Checks, Contestant
from batches.forms import BatchForm
from chaoslm import costs
from comparisons import arithmetic, question_sets, services
from comparisons.arms import MAX_ARM_NAME, MAX_ARMS, Arm, ArmRequest, answering_formats, resolve
from comparisons.models import Comparison
from debates import estimates
from personas.models import Persona

ROWS = range(1, MAX_ARMS + 1)
# The rows shown open; the rest fold under "More arms".
OPEN_ROWS = 4
# The baselines are the first two rows as the form opens.
INITIAL = [(1, "single-agent"), (2, "self-consistency")]

SAMPLE_CHOICES = [
    ("", "No sample: upload a file"),
    ("arithmetic", "Arithmetic (generated: count, difficulty, seed)"),
    ("multiple-choice", "Multiple choice (28 general-knowledge questions)"),
]


class NewComparisonForm(BatchForm):
    name = forms.CharField(
        max_length=200, widget=forms.TextInput(attrs={"placeholder": "Du et al. against a majority vote"})
    )
    questions_file = forms.FileField(
        required=False,
        label="Question set (JSONL or CSV)",
        help_text="question, choices, answer, material (docs/experiments.md).",
    )
    sample = forms.ChoiceField(choices=SAMPLE_CHOICES, required=False, label="Or a sample")
    count = forms.IntegerField(min_value=1, max_value=question_sets.MAX_QUESTIONS, initial=50, required=False)
    difficulty = forms.IntegerField(min_value=1, max_value=3, initial=3, required=False)
    seed = forms.IntegerField(min_value=0, initial=0, required=False)
    persona = forms.ModelChoiceField(
        queryset=Persona.objects.order_by("name"), help_text="In every seat of every arm: a comparison of protocols."
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.formats = answering_formats(self.user)
        choices = [("", "No arm"), *((f.name, f"{f.title} ({f.name})") for f in self.formats)]
        for row in ROWS:
            self.fields[f"arm_{row}_format"] = forms.ChoiceField(
                choices=choices, required=False, label=f"Arm {row}'s format", initial=dict(INITIAL).get(row, "")
            )
            self.fields[f"arm_{row}_name"] = forms.CharField(
                max_length=MAX_ARM_NAME, required=False, label=f"Arm {row}'s name"
            )
            self.fields[f"arm_{row}_agents"] = forms.IntegerField(
                min_value=1, max_value=10, required=False, label=f"Arm {row}'s agents"
            )
            self.fields[f"arm_{row}_rounds"] = forms.IntegerField(
                min_value=1, max_value=10, required=False, label=f"Arm {row}'s rounds"
            )
        self.arm_requests: list[ArmRequest] = []
        self.arms: list[Arm] = []
        self.arm_problems: list[str] = []

    def arm_rows(self) -> list[dict[str, Any]]:
        """The arms' rows as the template lays them out: each its number and its four fields."""
        return [
            {"number": row, **{part: self[f"arm_{row}_{part}"] for part in ("format", "name", "agents", "rounds")}}
            for row in ROWS
        ]

    def open_rows(self) -> list[dict[str, Any]]:
        return self.arm_rows()[:OPEN_ROWS]

    def folded_rows(self) -> list[dict[str, Any]]:
        """The rows past the first few, folded under "More arms" (open when one of them is filled in or wrong)."""
        return self.arm_rows()[OPEN_ROWS:]

    def folded_in_use(self) -> bool:
        return any(
            self[f"arm_{row}_{part}"].value() not in (None, "") or self[f"arm_{row}_{part}"].errors
            for row in ROWS[OPEN_ROWS:]
            for part in ("format", "name", "agents", "rounds")
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload, which = data.get("questions_file"), data.get("sample")
        if upload and which:
            self.add_error("questions_file", "Upload a file or use a sample, not both.")
        elif upload:
            self.parsed_questions = self.read_upload("questions_file", question_sets.read_file, question_sets.MAX_BYTES)
        elif which == "multiple-choice":
            self.parsed_questions = question_sets.sample()
        elif which == "arithmetic":
            self.parsed_questions = arithmetic.generate(
                data.get("count") or 50, data.get("difficulty") or 3, data.get("seed") or 0
            )
        else:
            self.add_error("questions_file", "Upload a question set or choose a sample.")
        self._clean_arms(data)
        return data

    def _clean_arms(self, data: dict[str, Any]) -> None:
        """Each row with a format is an arm with its own name, agents and rounds, checked as the spec's arms are
        (`arms.resolve`), each problem naming its row."""
        numbers, requests = [], []
        persona = data.get("persona")
        for row in ROWS:
            fmt = data.get(f"arm_{row}_format")
            name, agents, rounds = (data.get(f"arm_{row}_{part}") for part in ("name", "agents", "rounds"))
            if not fmt:
                if name or agents is not None or rounds is not None:
                    self.add_error(f"arm_{row}_format", "Choose its format, or clear its name, agents and rounds.")
                continue
            options = {} if rounds is None else {"rounds": rounds}
            numbers.append(row)
            requests.append(
                ArmRequest(fmt, Contestant.of(persona) if persona else None, name or "", agents, options=options)
            )
        self.arm_requests = requests
        if not requests:
            self.add_error("arm_1_format", "Choose at least one arm's format.")
            return
        if persona is None:
            return  # its field says it is missing: every arm's seats would say it again
        found = Checks(services.ComparisonError)
        self.arms = resolve(self.user, requests, found, numbers)
        self.arm_problems = [problem.message for problem in found.found]
        if self.arm_problems:
            self.add_error(None, self.arm_problems)

    def options(self) -> dict[str, int]:
        return {}

    def estimate(self) -> services.Estimate | None:
        """The size of the comparison as entered so far; None until its questions and arms are known."""
        if not self.arms or self.arm_problems or not self.parsed_questions:
            return None
        concurrency = getattr(self, "cleaned_data", {}).get("concurrency") or 1
        return services.estimate(len(self.parsed_questions), self.arms, concurrency)

    def cost_estimate(self) -> costs.CostRange | None:
        found = self.estimate()
        return None if found is None else found.cost

    def time_estimate(self) -> estimates.Duration | None:
        found = self.estimate()
        return None if found is None else found.time

    def create(self, owner: Any) -> Comparison:
        data = self.cleaned_data
        return services.create_comparison(
            name=data["name"],
            questions=self.parsed_questions,
            arms=self.arm_requests,
            concurrency=data["concurrency"],
            visibility=data["visibility"],
            owner=owner,
        )
