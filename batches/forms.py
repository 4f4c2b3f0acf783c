"""What every kind of batch's new-batch form has alike: its people ticked from the personas of their role, how many
debates at once, who may see it, a question set read from an upload, and the arguments every kind's create
function takes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms

from batches.checks import Contestant, cost_estimate
from batches.questions import QuestionsError, size_text
from chaoslm import costs
from chaoslm.http import IdChoices
from chaoslm.sharing import Visibility
from debates import estimates
from personas.models import Persona

# A form's people fields, each ticked from the personas of one role.
ROLES = {"debaters": "debater", "judges": "judge", "moderator": "moderator"}


class PersonaChoices(IdChoices):
    """Debaters or judges to tick, each by its persona's name."""

    def label_from_instance(self, obj: Persona) -> str:
        return obj.name


class BatchForm(forms.Form):
    """A kind's form adds its own fields (`name`, `debaters`, `judges` among them) and says how large its batch
    would be (`estimate`, the line shown as it is filled in) and how it is made (`create`)."""

    concurrency = forms.IntegerField(min_value=1, max_value=100, initial=8, help_text="Debates at once.")
    visibility = forms.ChoiceField(choices=Visibility.choices, initial=Visibility.PRIVATE)

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user  # whom it is filled in for: what they may use (a tournament's protocol cards)
        for name, role in ROLES.items():
            if name in self.fields:
                self.fields[name].queryset = Persona.objects.filter(role=role)
        for field in self.fields.values():
            if isinstance(field, forms.BooleanField):
                field.label_suffix = ""  # a checkbox's label follows it: no colon
        self.parsed_questions: list[Any] = []

    def estimate(self) -> Any:
        raise NotImplementedError

    def time_estimate(self) -> estimates.Duration | None:
        """How long the batch as entered so far takes, as its command and API estimate say (None before it has a
        debate)."""
        size = self.estimate()
        if not size.calls:
            return None
        concurrency = getattr(self, "cleaned_data", {}).get("concurrency") or self.fields["concurrency"].initial
        return estimates.duration(size.calls, size.calls, size.debates, concurrency)

    def cost_estimate(self) -> costs.CostRange | None:
        """What the batch as entered so far would cost, low to high (None before anyone is chosen)."""
        data = getattr(self, "cleaned_data", {})
        people = [*(data.get("debaters") or []), *(data.get("judges") or [])]
        if data.get("moderator"):
            people.append(data["moderator"])
        if not people:
            return None
        return cost_estimate(self.estimate().calls, [Contestant.of(p) for p in people])

    def create(self, owner: Any) -> Any:
        """The batch, checked by its kind (BatchError says what is wrong); the form is valid."""
        raise NotImplementedError

    def options(self) -> dict[str, int]:
        raise NotImplementedError

    def read_upload(self, field: str, parse: Callable[[str, bytes], list[Any]], max_bytes: int) -> list[Any]:
        """The questions in the file uploaded in `field`, or none with its problems on the field, each naming the
        file (a file too large is refused before it is read)."""
        upload = self.cleaned_data[field]
        if upload.size > max_bytes:
            self.add_error(field, f"{upload.name} is larger than {size_text(max_bytes)}.")
            return []
        try:
            return parse(upload.name, upload.read())
        except QuestionsError as error:
            self.add_error(field, [p if p.startswith(upload.name) else f"{upload.name}: {p}" for p in error.problems])
            return []

    def arguments(self) -> dict[str, Any]:
        """The arguments of the kind's create function that every kind has, as the form has them."""
        data = self.cleaned_data
        return {
            "name": data["name"],
            "questions": self.parsed_questions,
            "debaters": [Contestant.of(p) for p in data["debaters"]],
            "judges": [Contestant.of(p) for p in data["judges"]],
            "options": self.options(),
            "concurrency": data["concurrency"],
            "visibility": data["visibility"],
        }
