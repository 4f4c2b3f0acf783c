"""The new-tournament form: its formats (the built-ins and protocol cards its owner's tournament may run), their
options, debaters, judges, questions (typed or a CSV/JSONL file)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from django import forms

from batches.checks import Contestant, names_clash
from batches.forms import BatchForm, PersonaChoices
from debates.format_cards import Resolved
from debates.formats import Format
from debates.formats.base import OptionSpec
from debates.forms import FormatOptions
from personas.models import Persona
from tournaments import design, services
from tournaments.models import Tournament
from tournaments.questions import MAX_BYTES, QuestionsError, parse_file, parse_lines


def format_choices(offered: Mapping[str, Resolved]) -> list[tuple[str, str]]:
    """Every format a tournament runs (`services.offered_formats`), each with how its judges judge it."""
    choices = []
    for name, resolved in offered.items():
        fmt = resolved.fmt
        notes = ["led by the moderator"] if services.needs_moderator(fmt) else []
        if fmt.ranks_teams():
            notes.append(f"{len(fmt.sides)} teams, one debater each, ranked by the one judge inside it")
        elif fmt.judging == "referees":
            notes.append(f"decided inside it by {len(fmt.referee_seats)} referees, the judges, as one verdict")
        elif fmt.judging == "in_debate":
            notes.append("the first judge judges inside it")
        else:
            notes.append("its judges read the transcript")
        choices.append((name, f"{fmt.title}: {fmt.description} ({'; '.join(notes)})"))
    return choices


NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


class NewTournamentForm(FormatOptions, BatchForm):
    name = forms.CharField(max_length=200, widget=forms.TextInput(attrs={"placeholder": "Spring debate league"}))
    debaters = PersonaChoices(
        queryset=Persona.objects.none(), widget=forms.CheckboxSelectMultiple, help_text="Two or more."
    )
    judges = PersonaChoices(
        queryset=Persona.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text=(
            "One or more: the first judges inside each debate of a format with a judge's seat; the others (and "
            "repeats) judge the finished transcript."
        ),
    )
    questions = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 5, "placeholder": "Should cities ban cars? | Cities should ban private cars | for"}
        ),
        help_text="One question a line: topic | premise (optional) | correct side: for or against (optional).",
    )
    questions_file = forms.FileField(
        required=False,
        label="Or upload questions",
        help_text='CSV with a header row (topic, premise, correct) or JSONL ({"topic": ...} a line).',
    )
    formats = forms.MultipleChoiceField(
        initial=[design.DEFAULT],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=(
            "Each pairing debates once in each format ticked (none ticked: the first); the report compares them. "
            "Your protocol cards and the shared ones are listed after the built-ins."
        ),
    )
    moderator = forms.ModelChoiceField(
        queryset=Persona.objects.none(),
        required=False,
        empty_label="— no moderator —",
        help_text="Leads each debate of a format with a moderator (only then).",
    )
    sides = forms.ChoiceField(choices=Tournament.Sides.choices, initial=Tournament.Sides.BOTH)
    repeats = forms.IntegerField(
        min_value=1, max_value=10, initial=1, help_text="How many times each judge judges each transcript."
    )
    arena = forms.BooleanField(
        required=False,
        label="Put its finished matches in the arena",
        help_text="Anyone may then read them without names and vote blind; the report adds their votes.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # What this person's tournament may run: the same list, by the same rule, as the spec file and the API take.
        self.offered = services.offered_formats(self.user)
        self.fields["formats"].choices = format_choices(self.offered)
        # Every format's options, each once (a word limit is everyone's) within the widest of their bounds: the
        # tournament's creation checks a value against each chosen format's own.
        offered = [r.fmt for r in self.offered.values()]
        specs: dict[str, OptionSpec] = {}
        defaults: dict[str, set[int]] = {}
        for option in (o for f in offered for o in f.option_specs):
            first = specs.setdefault(option.name, option)
            specs[option.name] = replace(
                first, minimum=min(first.minimum, option.minimum), maximum=max(first.maximum, option.maximum)
            )
            defaults.setdefault(option.name, set()).add(option.default)
        self.add_options(specs.values())
        # On the fields, not through option_fields(): a bound field made now would keep its help text as it is now,
        # before the note below is added to it.
        for name in self.fields:
            if name.startswith("option_"):
                self.fields[name].required = False  # left empty: the format's default
        for name, values in defaults.items():
            if len(values) > 1:  # formats differ (a card's word limit): empty, each keeps its own unless one is typed
                field = self.fields[f"option_{name}"]
                field.initial = None
                field.help_text = f"{field.help_text} Left empty: each format's own default.".strip()
        for name, spec in specs.items():
            # The least value at which every side of every format with this option speaks.
            having = [f for f in offered if any(o.name == name for o in f.option_specs)]
            least = next(
                (v for v in range(spec.minimum, spec.maximum + 1) if not any(f.silent_side({name: v}) for f in having)),
                spec.minimum,
            )
            if least > spec.minimum:
                self.fields[f"option_{name}"].widget.attrs["min"] = least

    def clean_formats(self) -> list[str]:
        return self.cleaned_data["formats"] or [design.DEFAULT]

    def clean_debaters(self) -> Any:
        chosen = self.cleaned_data["debaters"]
        if len(chosen) < 2:
            raise forms.ValidationError("Choose at least two debaters.")
        return chosen

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        text = data.get("questions", "")
        upload = data.get("questions_file")
        if text.strip() and upload:
            self.add_error("questions_file", "Type the questions or upload a file, not both.")
        elif upload:
            self.parsed_questions = self.read_upload("questions_file", parse_file, MAX_BYTES)
        elif text.strip():
            try:
                self.parsed_questions = parse_lines(text)
            except QuestionsError as error:
                self.add_error("questions", error.problems)
        else:
            self.add_error("questions", "Type at least one question or upload a file.")
        formats = self.chosen()
        moderated = [f.title for f in formats if services.needs_moderator(f)]
        if moderated and not data.get("moderator"):
            self.add_error("moderator", f"A {' or '.join(moderated)} debate needs a moderator.")
        chosen = {k.removeprefix("option_"): v for k, v in data.items() if k.startswith("option_") and v is not None}
        for fmt in formats:
            silent = design.silent_side(fmt, chosen)
            if silent:
                self.add_error(None, silent)
        debaters, judges = data.get("debaters") or [], data.get("judges") or []
        clash = names_clash([p.name for p in debaters], [p.name for p in judges])
        if clash:
            self.add_error("judges", f"{', '.join(clash)} cannot both debate and judge.")
        return data

    def chosen(self) -> list[Format]:
        """The formats ticked so far (none: the first offered), as formats (a card's as its YAML says)."""
        names = getattr(self, "cleaned_data", {}).get("formats") or [design.DEFAULT]
        return [self.offered[name].fmt for name in names if name in self.offered]

    def options(self) -> dict[str, int]:
        """The options of the formats chosen."""
        known = {o.name for f in self.chosen() for o in f.option_specs}
        return {name: value for name, value in super().options().items() if name in known and value is not None}

    def create(self, owner: Any) -> Tournament:
        data = self.cleaned_data
        return services.create_tournament(
            **self.arguments(),
            sides=data["sides"],
            repeats=data["repeats"],
            formats=data["formats"],
            moderator=Contestant.of(data["moderator"]) if data["moderator"] else None,
            arena=data["arena"],
            owner=owner,
        )

    def estimate(self) -> design.Estimate:
        """The size of the tournament as entered so far (for the line shown before it starts)."""
        data = getattr(self, "cleaned_data", {})
        options = {k.removeprefix("option_"): v for k, v in data.items() if k.startswith("option_") and v is not None}
        return design.estimate(
            len(self.parsed_questions),
            len(data.get("debaters") or []),
            len(data.get("judges") or []),
            data.get("sides") or "both",
            data.get("repeats") or 1,
            options,
            tuple(self.chosen()),
        )

    def debaters_needed(self) -> str:
        """How many debaters the formats ticked so far seat at least (one a team), in words, for the line that asks
        for them: "two", "four"."""
        needed = max([2, *(len(f.sides) for f in self.chosen())])
        return NUMBERS.get(needed, str(needed))
