"""Money: what calls cost, added up; what work will cost, estimated as a range; what a user may spend in a month.

Every call's cost is stored with it as the gateway priced it (chaoslm/llm/prices.py): None where its price is
unknown. A total counts those calls apart, so it reads "$0.42 + unknown", never a made-up 0. The core imports no
app: each app that stores calls registers how to add up a user's spend since a date (`register_spend`, in its
`AppConfig.ready()`), the personas app registers where a user's own budget is kept (`register_budget`), and the
budget rules here read them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal
from typing import Any, Protocol

from django.conf import settings
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from chaoslm.llm import Endpoint, prices

ZERO = Decimal(0)
CENT = Decimal("0.01")


def money(amount: Decimal, *, down: bool = False) -> str:
    """Dollars for people: cents from a dollar up, four places below one (a call costs fractions of a cent).
    `down`: cut rather than round, for what is left of a budget (never more than there is)."""
    if amount == 0:
        return "$0"
    if abs(amount) >= 1 or amount == amount.quantize(CENT):
        return f"${amount.quantize(CENT, rounding=ROUND_DOWN if down else ROUND_HALF_EVEN):,}"
    # A few calls of a cheap model cost less than a cent: four places, trailing zeros dropped down to cents.
    places = amount.quantize(Decimal("0.0001"))
    if places == 0:
        return "under $0.0001"
    whole, _, fraction = f"{places:f}".partition(".")
    return f"${whole}.{fraction.rstrip('0').ljust(2, '0')}"


@dataclass(frozen=True)
class Total:
    """The cost of some calls: the sum of the known costs, and how many calls had an unknown price."""

    amount: Decimal = ZERO
    unknown: int = 0
    calls: int = 0

    def __add__(self, other: Total) -> Total:
        return Total(self.amount + other.amount, self.unknown + other.unknown, self.calls + other.calls)

    @property
    def known(self) -> bool:
        return self.unknown == 0

    def text(self) -> str:
        """ "$0.42", "$0.42 + unknown" (some calls at an unknown price), "unknown price" (all of them)."""
        if self.unknown and self.unknown == self.calls:
            return "unknown price"
        return money(self.amount) + (" + unknown" if self.unknown else "")

    def __str__(self) -> str:
        return self.text()

    def as_json(self) -> dict[str, Any]:
        """For exports and the API: the amount as a string (exact), and the calls whose price is unknown."""
        return {
            "usd": str(self.amount.quantize(prices.PLACES)),
            "unknown_price_calls": self.unknown,
            "text": self.text(),
        }


def total_of(calls: QuerySet[Any]) -> Total:
    """The Total of a queryset of stored calls (each row a call, with a nullable `cost`), in one query."""
    row = calls.aggregate(amount=Sum("cost"), unknown=Count("pk", filter=Q(cost__isnull=True)), calls=Count("pk"))
    return Total(row["amount"] or ZERO, row["unknown"], row["calls"])


def totals_by(calls: QuerySet[Any], *fields: str) -> list[tuple[tuple[Any, ...], Total, int, int, int]]:
    """Per group of `fields` (a persona's name, a model): its Total, tokens in, out and cached, in one query."""
    rows = (
        calls.values(*fields)
        .annotate(
            amount=Sum("cost"),
            unknown=Count("pk", filter=Q(cost__isnull=True)),
            n=Count("pk"),
            t_in=Sum("tokens_in"),
            t_out=Sum("tokens_out"),
            t_cached=Sum("tokens_cached"),
        )
        .order_by(*fields)
    )
    return [
        (
            tuple(r[f] for f in fields),
            Total(r["amount"] or ZERO, r["unknown"], r["n"]),
            r["t_in"] or 0,
            r["t_out"] or 0,
            r["t_cached"] or 0,
        )
        for r in rows
    ]


# -- a user's spend and budget -------------------------------------------------------------------
# (persona, model), Total, tokens in, out, cached: what `totals_by` gives grouped by a persona's name and a model.
SpendRow = tuple[tuple[Any, ...], Total, int, int, int]
SpendFn = Callable[[Any, datetime], list[SpendRow]]
_spenders: list[SpendFn] = []


class OwnBudget(Protocol):
    """A budget an admin set for one user: `monthly` dollars, or None for no budget whatever the default."""

    monthly: Decimal | None


# The user's own budget if an admin set one, else None (then the default setting applies).
BudgetFn = Callable[[Any], OwnBudget | None]
_own_budget: BudgetFn | None = None


def register_spend(spend: SpendFn) -> None:
    """`spend(user, since)`: the user's calls stored since then in one app's rows, per persona and model."""
    if spend not in _spenders:
        _spenders.append(spend)


def register_budget(own: BudgetFn) -> None:
    """`own(user)`: the budget an admin set for the user, or None where none was set (the personas app keeps
    them, `personas.models.Budget`, and registers this in its `AppConfig.ready()`)."""
    global _own_budget
    _own_budget = own


def spend_rows(user: Any, since: datetime) -> list[SpendRow]:
    """Every app's rows, those of the same persona and model added together, in name order."""
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for spend in _spenders:
        for key, total, t_in, t_out, t_cached in spend(user, since):
            row = merged.setdefault(key, [Total(), 0, 0, 0])
            row[0] += total
            row[1] += t_in
            row[2] += t_out
            row[3] += t_cached
    return [(key, *row) for key, row in sorted(merged.items(), key=lambda item: [str(k) for k in item[0]])]  # type: ignore[misc]


def month_start(now: datetime | None = None) -> datetime:
    """The start of the calendar month (UTC) a budget counts from."""
    now = now or timezone.now()
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def spent_this_month(user: Any) -> Total:
    return sum((row[1] for row in spend_rows(user, month_start())), Total())


def monthly_budget(user: Any) -> Decimal | None:
    """The user's own budget if the admin set one, else CHAOSLM_DEFAULT_MONTHLY_BUDGET; None: no budget."""
    if user is None or not getattr(user, "pk", None):
        return None
    own = _own_budget(user) if _own_budget is not None else None
    if own is not None:
        return own.monthly
    default = settings.CHAOSLM_DEFAULT_MONTHLY_BUDGET
    return Decimal(default) if default else None


@dataclass(frozen=True)
class Allowance:
    budget: Decimal | None
    spent: Total

    @property
    def left(self) -> Decimal | None:
        return None if self.budget is None else max(self.budget - self.spent.amount, ZERO)

    @property
    def reached(self) -> bool:
        return self.budget is not None and self.spent.amount >= self.budget

    def text(self) -> str:
        if self.budget is None:
            return f"{self.spent.text()} spent this month; no budget."
        left = money(self.left or ZERO, down=True)
        return f"{self.spent.text()} spent this month of a {money(self.budget)} budget; {left} left."


def allowance(user: Any) -> Allowance:
    """The user's budget and this month's spend (no spend query when there is no budget)."""
    budget = monthly_budget(user)
    return Allowance(budget, spent_this_month(user) if budget is not None else Total())


# -- estimates -------------------------------------------------------------------------------------
# The tokens a call plausibly reads and writes, low and high: a short opening with a short persona prompt, to a
# late turn that reads a long transcript and writes at length. An estimate is calls x these x the prices.
TOKENS_IN = (150, 6000)
TOKENS_OUT = (5, 1000)


@dataclass(frozen=True)
class CostRange:
    """What work will cost, low to high; `unknown`: some of its calls are at an unknown price (not counted)."""

    low: Decimal
    high: Decimal
    unknown: bool = False
    calls: int = 0

    def text(self) -> str:
        if self.unknown and self.high == 0:
            return "unknown price"
        span = money(self.low) if self.low == self.high else f"{money(self.low)} to {money(self.high)}"
        return span + (" + unknown" if self.unknown else "")

    @staticmethod
    def basis() -> str:
        """What the range assumes, for people."""
        (read_low, read_high), (write_low, write_high) = TOKENS_IN, TOKENS_OUT
        return f"{read_low:,} to {read_high:,} tokens read and {write_low:,} to {write_high:,} written a call"

    def as_json(self) -> dict[str, Any]:
        return {"low_usd": str(self.low), "high_usd": str(self.high), "unknown_price": self.unknown}


def endpoint_price(endpoint: Endpoint) -> prices.Price | None:
    return prices.price_of(endpoint.base_url, endpoint.model, endpoint.price)


def estimate(calls: int, endpoints: Iterable[Endpoint]) -> CostRange:
    """`calls` calls made by the models at `endpoints` (who makes which is not known before: the cheapest
    bounds the low end, the dearest the high)."""
    known: list[prices.Price] = []
    unknown = False
    for endpoint in endpoints:
        price = endpoint_price(endpoint)
        if price is None:
            unknown = True
        else:
            known.append(price)
    if not known or calls <= 0:
        return CostRange(ZERO, ZERO, unknown and calls > 0, calls)
    low = min(p.cost(TOKENS_IN[0], TOKENS_OUT[0]) for p in known) * calls
    high = max(p.cost(TOKENS_IN[1], TOKENS_OUT[1]) for p in known) * calls
    return CostRange(low.quantize(prices.PLACES), high.quantize(prices.PLACES), unknown, calls)


def refusal(user: Any, cost: CostRange | None = None) -> str | None:
    """Why the user may not start this work now, in one sentence, or None: their budget is spent, or the low end
    of the work's estimate would pass what is left."""
    budget = monthly_budget(user)
    if budget is None:
        return None
    spent = spent_this_month(user)
    left = max(budget - spent.amount, ZERO)
    if spent.amount >= budget:
        return f"Your monthly budget of {money(budget)} is spent ({spent.text()} this month); ask an admin to raise it."
    if cost is not None and cost.low > left:
        what_is_left = money(left, down=True)
        return (
            f"This would cost about {cost.text()}, more than the {what_is_left} left of your monthly budget of "
            f"{money(budget)}; make it smaller or ask an admin to raise the budget."
        )
    return None


class OverBudget(Exception):
    """Work refused by the user's budget; the message says the estimate and what is left. The API answers 402."""


def check(user: Any, cost: CostRange | None = None) -> None:
    """Raise OverBudget with `refusal`'s sentence, if there is one."""
    reason = refusal(user, cost)
    if reason is not None:
        raise OverBudget(reason)
