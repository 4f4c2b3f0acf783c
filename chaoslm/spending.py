"""A person's spend this month: the account page `/account/usage/` and its JSON (the API's `GET /usage`)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chaoslm import costs


def month(user: Any) -> dict[str, Any]:
    """This month's calls of `user`'s debates, batches and rooms per persona and model, their total and the budget."""
    since = costs.month_start()
    rows = [
        {"persona": name, "model": model or "", "tokens_in": t_in, "tokens_out": t_out, "cost": total}
        for (name, model), total, t_in, t_out, _ in costs.spend_rows(user, since)
    ]
    total = sum((row["cost"] for row in rows), costs.Total())
    return {
        "since": since,
        "rows": rows,
        "total": total,
        "allowance": costs.Allowance(costs.monthly_budget(user), total),
    }


def as_json(user: Any) -> dict[str, Any]:
    found = month(user)
    allowance = found["allowance"]
    return {
        "since": found["since"].isoformat(),
        **found["total"].as_json(),
        "budget_usd": None if allowance.budget is None else str(allowance.budget),
        "left_usd": None if allowance.left is None else str(allowance.left),
        "by_persona": [
            {**{k: v for k, v in row.items() if k != "cost"}, "calls": row["cost"].calls, **row["cost"].as_json()}
            for row in found["rows"]
        ],
    }


@login_required
def month_page(request: HttpRequest) -> HttpResponse:
    return render(request, "account/usage.html", month(request.user))
