"""A batch's people and settings as asked for: its debaters and judges (`Contestant`), stored as snapshots, and the
one check of a batch's panel, options and run settings that every kind makes before it stores anything."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batches.models import PersonaSnapshot
from chaoslm import costs
from chaoslm.llm import Endpoint
from chaoslm.personas.calls import LLMSettings, UnknownProvider
from chaoslm.personas.models import Persona
from chaoslm.personas.yaml_io import PersonaSpec
from chaoslm.sharing import Visibility
from debates.formats.base import OptionSpec

MAX_CONCURRENCY = 100


class BatchError(ValueError):
    """A batch that cannot be made as asked; the message is for the user. Each kind has its own subclass."""


class OverBudget(BatchError, costs.OverBudget):
    """A batch its owner's monthly budget refuses (chaoslm/costs.py): the message gives the estimate and what is
    left; the API answers it with a 402."""


@dataclass(frozen=True)
class Contestant:
    """A debater or judge: a stored persona, or a persona read from a YAML file."""

    spec: PersonaSpec
    persona: Persona | None = None

    @classmethod
    def of(cls, persona: Persona) -> Contestant:
        return cls(spec=persona.spec(), persona=persona)

    def endpoint(self) -> Endpoint | None:
        """The endpoint its calls go to (None: its provider is gone, which the batch's own checks report)."""
        try:
            provider_id = self.persona.provider_id if self.persona is not None else None
            return LLMSettings.of_spec(self.spec, provider_id=provider_id).endpoint()
        except UnknownProvider:
            return None


def cost_estimate(calls: int, people: Sequence[Contestant]) -> costs.CostRange:
    """What `calls` calls by `people` will cost, low to high (chaoslm/costs.py: estimate)."""
    return costs.estimate(calls, [e for e in (c.endpoint() for c in people) if e is not None])


def check_budget(owner: Any, calls: int, people: Sequence[Contestant]) -> None:
    """Raise OverBudget when the owner's budget is spent, or the batch's estimate would pass what is left."""
    if costs.monthly_budget(owner) is None:
        return
    try:
        costs.check(owner, cost_estimate(calls, people))
    except costs.OverBudget as error:
        raise OverBudget(str(error)) from None


def save_snapshots(
    model: type[PersonaSnapshot],
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    moderators: Sequence[Contestant] = (),
    **link: Any,
) -> dict[str, list[Any]]:
    """A batch's debaters, judges (and moderators) stored as `model` rows (Entrant, Participant), by role, in order;
    `link` names the batch (`tournament=...`)."""
    Role = PersonaSnapshot.Role
    return {
        role: model.objects.bulk_create(
            [
                model(role=role, order=i, name=c.spec.name, persona=c.persona, spec=c.spec.to_dict(), **link)
                for i, c in enumerate(group)
            ]
        )
        for role, group in ((Role.DEBATER, debaters), (Role.JUDGE, judges), (Role.MODERATOR, moderators))
    }


@dataclass(frozen=True)
class Rules:
    """What a kind of batch allows: `noun` with its article ("A tournament"), its bounds, and what its debaters do
    ("debate", "argue") for the message about a persona on both sides."""

    noun: str
    max_debaters: int
    max_judges: int
    min_debaters: int = 0
    debaters_do: str = "debate"
    max_concurrency: int = MAX_CONCURRENCY
    error: type[BatchError] = BatchError  # what `check` raises: the kind's own (TournamentError, ExperimentError)


def named(rules: Rules, name: str) -> str:
    """A batch's name as it is stored: stripped, at most 200 characters (`rules.error` if nothing is left)."""
    name = name.strip()
    if not name:
        raise rules.error(f"The {rules.noun.split(' ', 1)[1]} needs a name.")
    return name[:200]


def given(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options asked for, without those left unset (None: the format's own default)."""
    return {k: v for k, v in (options or {}).items() if v is not None}


def check(
    rules: Rules,
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    options: Mapping[str, Any],
    known: Mapping[str, OptionSpec],
    concurrency: int,
    visibility: str,
) -> None:
    """`rules.error` naming the first problem with the panel, the options (each a whole number within its bounds, and
    not a boolean, as a format's own check says), the concurrency or the visibility."""
    if len(debaters) < rules.min_debaters:
        raise rules.error(f"{rules.noun} needs at least {_count(rules.min_debaters)} debaters.")
    if len(debaters) > rules.max_debaters:
        raise rules.error(f"{rules.noun} takes at most {rules.max_debaters} debaters.")
    if not judges:
        raise rules.error(f"{rules.noun} needs at least one judge.")
    if len(judges) > rules.max_judges:
        raise rules.error(f"{rules.noun} takes at most {rules.max_judges} judges.")
    for group, label in ((debaters, "debater"), (judges, "judge")):
        names = [c.spec.name for c in group]
        if len(set(names)) != len(names):
            raise rules.error(f"Each {label} must be a different persona.")
    clash = names_clash([c.spec.name for c in debaters], [c.spec.name for c in judges])
    if clash:
        raise rules.error(f"{', '.join(clash)} cannot both {rules.debaters_do} and judge.")
    for name, value in options.items():
        spec = known.get(name)
        if spec is None:
            raise rules.error(f"There is no option {name!r}; the options are {', '.join(known)}.")
        if isinstance(value, bool) or not isinstance(value, int) or not spec.minimum <= value <= spec.maximum:
            raise rules.error(f"{spec.label} must be a whole number from {spec.minimum} to {spec.maximum}.")
    if not 1 <= concurrency <= rules.max_concurrency:
        raise rules.error(f"Concurrency must be between 1 and {rules.max_concurrency}.")
    if visibility not in Visibility.values:
        raise rules.error("Visibility must be private, unlisted or public.")


def names_clash(debaters: Sequence[str], judges: Sequence[str]) -> list[str]:
    """Names that sit on both sides of the table (a debate needs each seat held by a different persona)."""
    return sorted(set(debaters) & set(judges))


def _count(n: int) -> str:
    return {1: "one", 2: "two"}.get(n, str(n))
