"""The new-debate form: built for one format from its seat and option specs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.forms.models import ModelChoiceIterator
from django.urls import reverse

from chaoslm.http import parse_id
from chaoslm.llm import local_model
from debates import estimates, format_cards, hold
from debates.formats import DEFAULT_FORMAT, LISTED, Format, FormatError
from debates.formats.base import OptionSpec, SeatSpec
from debates.models import Debate
from debates.setup import clean_material, material_refusal, repeated_names
from personas.models import Persona
from personas.yaml_io import ROLES


def option_field(spec: OptionSpec) -> forms.IntegerField:
    """The form field for one of a format's options (a new debate's, a tournament's duels')."""
    return forms.IntegerField(
        label=spec.label, min_value=spec.minimum, max_value=spec.maximum, initial=spec.default, help_text=spec.help
    )


class FormatOptions(forms.Form):
    """A form with a format's options, each an `option_<name>` field."""

    def add_options(self, specs: Iterable[OptionSpec]) -> None:
        for spec in specs:
            self.fields[f"option_{spec.name}"] = option_field(spec)

    def option_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if name.startswith("option_")]

    def options(self) -> dict[str, int]:
        """The options chosen, by name (once the form is valid)."""
        return {
            name.removeprefix("option_"): value
            for name, value in self.cleaned_data.items()
            if name.startswith("option_")
        }


def no_such_option(format_name: str, name: str) -> str:
    """The refusal of an option a format has not (the API's new debate, a plan's options)."""
    return f"The {format_name} format has no option {name!r}."


@dataclass(frozen=True)
class GivenOptions:
    """A format's options as a GET form gives some or all of them (the format page's plan, the API's): those given
    over the format's defaults, a bad one at its default, and every problem at once, each with its field
    (`option_<name>`)."""

    form: FormatOptions
    options: dict[str, int]
    problems: list[tuple[str, str]]


def given_options(fmt: Format, data: Mapping[str, Any] | None) -> GivenOptions:
    """The options `data` gives (`option_<name>` keys; others are not its to read), checked by the new-debate form's
    own fields: an option left out is at its default; one out of its bounds, not a whole number, or one the format
    has not is a problem, in the form's words."""
    specs = fmt.option_specs
    given = {key: data.get(key) for key in data or () if key.startswith("option_")}
    if not given:
        form = FormatOptions()
        form.add_options(specs)
        return GivenOptions(form, {o.name: o.default for o in specs}, [])
    known = {f"option_{o.name}" for o in specs}
    merged = {f"option_{o.name}": str(o.default) for o in specs} | {k: v for k, v in given.items() if k in known}
    form = FormatOptions(merged)
    form.add_options(specs)
    form.is_valid()
    problems = [(name, str(message)) for name, messages in form.errors.items() for message in messages]
    for key in given:
        if key not in known:
            message = no_such_option(fmt.name, key.removeprefix("option_"))
            form.add_error(None, message)
            problems.append((key, message))
    options = {o.name: form.cleaned_data.get(f"option_{o.name}", o.default) for o in specs}
    return GivenOptions(form, options, problems)


# While the embedded model serves (a small model on this machine's CPU, a call every few seconds), a new debate
# starts short: a first debate's verdict comes in minutes, not half an hour. The person may lengthen it. Each
# field says that it is the embedded model's default.
SHORT_WITH_EMBEDDED = {"turns": 2, "free_turns": 1, "max_rounds": 1, "word_limit": 60}
EMBEDDED_DEFAULT = "{value}: the embedded model's default, for a first debate in about three minutes."


def _a(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


class PersonaChoice(forms.ModelChoiceField):
    """A seat's persona. A choice it does not offer is refused naming the rule it breaks (the persona's role, or
    its formats), in the page's and the API's words alike, not Django's bare "Select a valid choice"."""

    def __init__(self, *args: Any, role: str, seat: str, format_name: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.role, self.seat, self.format_name = role, seat, format_name

    def label_from_instance(self, obj: Persona) -> str:
        return f"{obj.name} ({obj.role})"

    def to_python(self, value: Any) -> Any:
        try:
            return super().to_python(value)
        except forms.ValidationError as error:
            if error.code != "invalid_choice":
                raise
            raise forms.ValidationError(self.why_not(value), code="invalid_choice") from None

    def why_not(self, value: Any) -> str:
        pk = parse_id(str(value))
        persona = Persona.objects.filter(pk=pk).first() if pk is not None else None
        if persona is None:
            shown = str(pk) if pk is not None else repr(str(value)[:20])
            return f"There is no persona {shown}: seat '{self.seat}' takes a persona's id."
        named = f"Persona {persona.pk} ({persona.name})"
        if persona.role != self.role:
            return f"{named} is {_a(persona.role)}; seat '{self.seat}' takes {_a(self.role)}."
        return f"{named} is not offered in the {self.format_name} format (its persona file lists its formats)."


# A seat a person may take and a persona may fill offers the person as its first choice; the API's `true` for a
# seat is the same value.
YOU = "on"


class _PersonasAndYou(ModelChoiceIterator):
    def __iter__(self) -> Iterator[Any]:
        choices = super().__iter__()
        if self.field.empty_label is not None:
            yield next(choices)
        yield (YOU, "You: take this seat yourself")
        yield from choices

    def __len__(self) -> int:
        return super().__len__() + 1


class PersonaOrYou(PersonaChoice):
    """A seat a person may take, in a format whose personas may fill it too (a card's debater seat): the person
    (`YOU`) or a persona."""

    iterator = _PersonasAndYou

    def to_python(self, value: Any) -> Any:
        return YOU if value == YOU else super().to_python(value)

    def validate(self, value: Any) -> None:
        if value != YOU:
            super().validate(value)


def seat_needed(fmt: Format, spec: SeatSpec) -> str:
    """Why an empty required seat needs a persona, in the format's own terms: how many of its role the format
    seats, and, where a person may take a seat, that theirs comes on top of these, not in place of one."""
    same = [s for s in fmt.seat_specs if s.role == spec.role and not s.human_allowed]
    required = [s for s in same if s.required]
    person = any(s.human_allowed for s in fmt.seat_specs)
    if len(required) > 1:
        at_least = "at least " if len(same) > len(required) else ""
        why = f"{fmt.title} needs {at_least}{len(required)} {spec.role}s played by personas"
        if person:
            why += ", and the seat you take yourself comes on top of them, not in place of one"
    else:
        why = f"{fmt.title} needs a persona as its {spec.label.lower()}"
        if person:
            why += ", a seat a person cannot take"
    return f"Choose a persona, as {why}."


# The files the form reads material from: text, read as UTF-8.
MATERIAL_FILE_TYPES = (".txt", ".md")


def material_from_file(upload: UploadedFile) -> str:
    """An uploaded file's text, for a debate's material. Raises ValidationError naming the file when it is not a .txt
    or .md file, or not UTF-8 text."""
    name = upload.name or "the file"
    if not name.lower().endswith(MATERIAL_FILE_TYPES):
        raise forms.ValidationError(f"Choose a .txt or .md file: {name} is neither.")
    try:
        return upload.read().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise forms.ValidationError(
            f"{name} is not UTF-8 text (byte {error.start + 1} is not UTF-8): save it as UTF-8 and choose it again."
        ) from None


class NewDebateForm(FormatOptions):
    format = forms.ChoiceField(initial=DEFAULT_FORMAT)
    topic = forms.CharField(
        max_length=500,
        strip=False,
        error_messages={"required": "Write the topic the debate is about."},
        widget=forms.TextInput(attrs={"placeholder": "Should cities ban cars?", "autofocus": True}),
    )
    premise = forms.CharField(
        max_length=500, required=False, help_text="Optional: the claim the first side argues for."
    )
    material = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=(
            f"Optional: what the debate carries beyond its topic (a passage, a question with its candidate answers, a "
            f"case file), up to {settings.CHAOSLM_MAX_MATERIAL:,} characters. A protocol card's prompts can quote it."
        ),
    )
    material_file = forms.FileField(
        label="Or the material from a file",
        required=False,
        widget=forms.FileInput(attrs={"accept": ",".join(MATERIAL_FILE_TYPES)}),
        help_text="A .txt or .md file, in UTF-8.",
    )
    visibility = forms.ChoiceField(choices=Debate.Visibility.choices, initial=Debate.Visibility.PRIVATE)
    show_thinking = forms.BooleanField(
        label="Viewers see the private thinking",
        required=False,
        initial=True,
        help_text=(
            "The debaters' plans and thoughts and the judge's notes (PLAN, THINK). "
            "You and staff always see them; prompts stay yours."
        ),
    )

    audience_poll = forms.BooleanField(
        label="The audience votes before and after",
        required=False,
        initial=True,
        help_text=(
            "Once the debate is public or unlisted. Two-sided formats (duel, classic, structured): viewers vote for "
            "a side before the first statement and after the end; the side that gains more wins the room. "
            "Many-speaker formats: after the end, viewers vote for who argued best."
        ),
    )

    hold = forms.TypedChoiceField(
        label="Hold the start",
        coerce=int,
        empty_value=0,
        required=False,
        initial=0,
        help_text="Wait this long before the debate starts, so an audience can gather and vote before it; its page "
        "counts down, and you can start it sooner.",
    )

    def __init__(self, *args: Any, format_name: str = DEFAULT_FORMAT, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["hold"].choices = hold.choices()
        # The built-ins, then the protocol cards the person may use (shipped, public, their own).
        self.formats: list[Format] = format_cards.formats_for(user)
        self.fields["format"].choices = [(f.name, f.title) for f in self.formats]
        try:
            chosen = format_cards.resolve(user, format_name)
        except FormatError:
            chosen = format_cards.Resolved(LISTED[DEFAULT_FORMAT])
        self.fmt: Format = chosen.fmt
        # A debate made from a card keeps the card's text as it is now (Debate.card_source).
        self.card_source = chosen.card_source
        self.fields["format"].initial = self.fmt.name
        personas = [p for p in Persona.objects.all() if p.offered_in(self.fmt.name)]
        self.personas = {p.pk: p for p in personas}
        self.seat_roles: dict[str, str] = {}
        for spec in self.fmt.seat_specs:
            # A seat only a person takes (a built-in's extra seat, of a role no persona has) is a checkbox.
            if spec.human_allowed and spec.role not in ROLES:
                self.fields[f"seat_{spec.key}"] = forms.BooleanField(
                    label=f"{spec.label}: take this seat yourself", required=False
                )
                continue
            same_role = [p.pk for p in personas if p.role == spec.role]
            matching = same_role or [p.pk for p in personas]
            field = (PersonaOrYou if spec.human_allowed else PersonaChoice)(
                role=spec.role,
                seat=spec.key,
                format_name=self.fmt.name,
                queryset=Persona.objects.filter(pk__in=matching),
                required=spec.required,
                label=spec.label,
                empty_label=f"— no {spec.label.lower()} —" if not spec.required else "— choose a persona —",
                # An optional judge starts filled with the first judge persona: leaving it out is a choice the
                # person makes ("— no judge —"), not one the form makes for them. Optional participants and
                # moderators change what the debate is, so they stay empty until chosen.
                initial=same_role[0] if same_role and spec.role == "judge" else None,
                error_messages={"required": seat_needed(self.fmt, spec)},
            )
            self.seat_roles[f"seat_{spec.key}"] = spec.role
            # Choosing a persona shows the exact system prompt it will get in this seat.
            field.widget.attrs.update(
                {
                    "hx-get": reverse("persona_prompt"),
                    "hx-trigger": "change",
                    "hx-target": f"#preview-{spec.key}",
                    "hx-vals": json.dumps({"role": spec.role}),
                }
            )
            self.fields[f"seat_{spec.key}"] = field
        self.add_options(self.fmt.option_specs)
        if self.is_bound:
            # A bound form on a page is a refused one: its error summary takes the focus, not the topic.
            self.fields["topic"].widget.attrs.pop("autofocus", None)
        for field in self.fields.values():
            if isinstance(field, forms.BooleanField):
                field.label_suffix = ""  # a checkbox's label follows it: "Take this seat yourself", no colon
        if local_model.in_use():
            for name, value in SHORT_WITH_EMBEDDED.items():
                field = self.fields.get(f"option_{name}")
                if field is not None:
                    field.initial = max(value, field.min_value or 0)
                    field.help_text = f"{field.help_text} {EMBEDDED_DEFAULT.format(value=field.initial)}".strip()

    def estimate(self) -> str:
        """How long the debate will take at the options shown: "14 calls, about 2 minutes"."""
        options: dict[str, int] = {}
        for bound in self.option_fields():
            try:
                options[bound.name.removeprefix("option_")] = int(bound.value())
            except (TypeError, ValueError):
                continue  # a value being typed: the option's default counts
        return estimates.describe(self.fmt.calls(options), self.fmt.fewest_calls(options))

    def clean_topic(self) -> str:
        topic = self.cleaned_data["topic"].strip()
        if not topic:
            raise forms.ValidationError("The topic must have at least one non-whitespace character.")
        return topic

    def clean_material(self) -> str:
        material = clean_material(self.cleaned_data["material"])
        if refusal := material_refusal(material):
            raise forms.ValidationError(refusal)
        return material

    def clean(self) -> dict[str, Any]:
        """The rules across seats, checked with every field's own in one pass: a refused form shows every problem
        at once. The same persona in two seats is marked on the later seat, naming the earlier. Material from a file
        takes the place of the box's, which must then be empty."""
        data = super().clean()
        upload = data.get("material_file")
        if upload and data.get("material"):
            self.add_error("material_file", "Give the material in the box or as a file, not both.")
        elif upload:
            try:
                material = clean_material(material_from_file(upload))
            except forms.ValidationError as error:
                self.add_error("material_file", error)
            else:
                if refusal := material_refusal(material):
                    self.add_error("material_file", refusal)
                else:
                    data["material"] = material
        chosen = {name: data[name] for name in self.seat_roles if isinstance(data.get(name), Persona)}
        for name, first in repeated_names((name, persona.name) for name, persona in chosen.items()).items():
            self.add_error(
                name,
                f"Choose another persona, as {chosen[name].name} already sits in {self.fields[first].label} and the "
                "transcript tells speakers apart by name.",
            )
        return data

    def seat_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if name.startswith("seat_")]

    def seat_rows(self) -> list[tuple[forms.BoundField, str]]:
        """Each seat's field and the system prompt its chosen persona gets there ("" if none is chosen).

        The page shows the prompt under the picker as it first loads and after a refused submission, not
        only after the person changes the choice.
        """
        return [(field, self.prompt_for(field)) for field in self.seat_fields()]

    def prompt_for(self, field: forms.BoundField) -> str:
        role = self.seat_roles.get(field.name)
        value = field.value()
        # The initial choice is a persona (its id, an int); a submitted one is text from the request.
        persona = self.personas.get(parse_id(str(value))) if role else None
        return persona.spec().system_prompt(role) if persona and role else ""
