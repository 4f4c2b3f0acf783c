"""A person's spend this month: what the account page `/account/usage/` shows (accounts/views.py: usage) and its
JSON (the API's `GET /usage`)."""

from __future__ import annotations

from typing import Any

from chaoslm import costs
from chaoslm.llm import prices


def month(user: Any) -> dict[str, Any]:
    """This month's calls of `user`'s debates, batches and rooms per persona and model, their total and the budget."""
    since = costs.month_start()
    rows = [
        {"persona": name, "model": model or "", "tokens_in": t_in, "tokens_out": t_out, "cost": total}
        for (name, model), total, t_in, t_out, _ in costs.spend_rows(user, since)
    ]
    total = sum((row["cost"] for row in rows), costs.Total())
    allowance = costs.Allowance(costs.monthly_budget(user), total)
    amounts = {"budget": allowance.budget, "left": allowance.left}
    shown = {
        name: None if value is None else costs.money(value, down=name == "left") for name, value in amounts.items()
    }
    return {"since": since, "rows": rows, "total": total, "allowance": allowance, "shown": shown}


def as_json(user: Any) -> dict[str, Any]:
    found = month(user)
    allowance = found["allowance"]
    return {
        "since": found["since"].isoformat(),
        **found["total"].as_json(),
        "budget_usd": None if allowance.budget is None else str(allowance.budget),
        "left_usd": None if allowance.left is None else str(allowance.left.quantize(prices.PLACES)),
        "by_persona": [
            {**{k: v for k, v in row.items() if k != "cost"}, "calls": row["cost"].calls, **row["cost"].as_json()}
            for row in found["rows"]
        ],
    }
