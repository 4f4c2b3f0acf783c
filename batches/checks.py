"""A batch's people and settings as asked for: its debaters and judges (`Contestant`), stored as snapshots, and the
one check of a batch's panel, options and run settings that every kind makes before it stores anything."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batches.models import PersonaSnapshot
from chaoslm import costs
from chaoslm.llm import Endpoint
from chaoslm.sharing import Visibility
from debates.formats.base import OptionSpec
from personas.calls import LLMSettings, UnknownProvider
from personas.models import Persona
from personas.yaml_io import PersonaSpec

MAX_CONCURRENCY = 100


@dataclass(frozen=True)
class Problem:
    """One reason a batch cannot be made: its message, and the keys of the spec it is about (the first is the field
    the API names; a problem about a key the spec's reading already refused is not told again, batches/spec.py)."""

    message: str
    keys: tuple[str, ...] = ("body",)


class BatchError(ValueError):
    """A batch that cannot be made as asked; the message is for the user. Each kind has its own subclass. Its
    `problems` are every reason at once (a kind's checks go on past the first); the message is them all."""

    def __init__(self, message: str = "", *, problems: Sequence[Problem] = ()) -> None:
        self.problems = list(problems) or [Problem(message)]
        super().__init__(message or " ".join(p.message for p in self.problems))


class Checks:
    """A kind's checks of a batch, each problem kept and the checks going on, so that all are told at once."""

    def __init__(self, error: type[BatchError]) -> None:
        self.error = error
        self.found: list[Problem] = []

    def fail(self, message: str, *keys: str) -> None:
        self.found.append(Problem(message, keys or ("body",)))

    def done(self) -> None:
        """Raise the kind's error with every problem found, if there is one."""
        if self.found:
            raise self.error(problems=self.found)


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


def cost_sentence(cost: costs.CostRange) -> str:
    """The cost line the new-batch form shows (batches/cost_line.html), for the command line and the API."""
    if cost.unknown and not cost.high:
        return "Its cost is unknown: none of its models has a known price."
    unknown = "; some of its models have no known price" if cost.unknown else ""
    return f"It will cost about {cost.text()} (at {cost.basis()}{unknown})."


def check_budget(owner: Any, cost: costs.CostRange) -> None:
    """Raise OverBudget when the owner's budget is spent, or the batch's estimate would pass what is left."""
    if costs.monthly_budget(owner) is None:
        return
    try:
        costs.check(owner, cost)
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
    error: type[BatchError] = BatchError  # what its checks raise: the kind's own (TournamentError, ExperimentError)


def named(found: Checks, rules: Rules, name: str) -> str:
    """A batch's name as it is stored: stripped, at most 200 characters (a problem for `found` if nothing is
    left)."""
    name = name.strip()
    if not name:
        found.fail(f"The {rules.noun.split(' ', 1)[1]} needs a name.", "name")
    return name[:200]


def given(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options asked for, without those left unset (None: the format's own default)."""
    return {k: v for k, v in (options or {}).items() if v is not None}


def check(
    found: Checks,
    rules: Rules,
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    options: Mapping[str, Any],
    known: Mapping[str, OptionSpec],
    concurrency: int,
    visibility: str,
) -> None:
    """Every problem with the panel, the options (each a whole number within its bounds, and not a boolean, as a
    format's own check says), the concurrency and the visibility, told to `found`."""
    if len(debaters) < rules.min_debaters:
        found.fail(f"{rules.noun} needs at least {_count(rules.min_debaters)} debaters.", "debaters")
    if len(debaters) > rules.max_debaters:
        found.fail(f"{rules.noun} takes at most {rules.max_debaters} debaters.", "debaters")
    if not judges:
        found.fail(f"{rules.noun} needs at least one judge.", "judges")
    if len(judges) > rules.max_judges:
        found.fail(f"{rules.noun} takes at most {rules.max_judges} judges.", "judges")
    for group, key, label in ((debaters, "debaters", "debater"), (judges, "judges", "judge")):
        names = [c.spec.name for c in group]
        if len(set(names)) != len(names):
            found.fail(f"Each {label} must be a different persona.", key)
    clash = names_clash([c.spec.name for c in debaters], [c.spec.name for c in judges])
    if clash:
        found.fail(f"{', '.join(clash)} cannot both {rules.debaters_do} and judge.", "judges", "debaters")
    for name, value in options.items():
        spec = known.get(name)
        if spec is None:
            # The options known are the formats' (a tournament's): about the formats as much as the options.
            found.fail(f"There is no option {name!r}; the options are {', '.join(known)}.", "options", "format")
        elif isinstance(value, bool) or not isinstance(value, int) or not spec.minimum <= value <= spec.maximum:
            found.fail(
                f"{spec.label} must be a whole number from {spec.minimum} to {spec.maximum}.", "options", "format"
            )
    if not 1 <= concurrency <= rules.max_concurrency:
        found.fail(f"Concurrency must be between 1 and {rules.max_concurrency}.", "concurrency")
    if visibility not in Visibility.values:
        found.fail("Visibility must be private, unlisted or public.", "visibility")


def names_clash(debaters: Sequence[str], judges: Sequence[str]) -> list[str]:
    """Names that sit on both sides of the table (a debate needs each seat held by a different persona)."""
    return sorted(set(debaters) & set(judges))


def _count(n: int) -> str:
    return {1: "one", 2: "two"}.get(n, str(n))
