"""A comparison's scripted test server and an independent reading of its stored runs: agents whose answer to each
arithmetic question is right with a known probability, and the report's figures recomputed from the debates
without the report's code (its decisions read back from the transcript, graded by integer equality, Wilson's
formula written out, McNemar's exact p-value as scipy's binomial test)."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path

from django.core.management import call_command
from scipy.stats import binomtest

from comparisons.models import Comparison, Run
from debates import selectors as debate_selectors
from debates.models import Event

ROOT = Path(__file__).resolve().parents[2]
RIGHT = 0.7  # the chance an agent's answer is the gold one


def import_shipped_cards() -> None:
    call_command("import_formats", str(ROOT / "cards"), verbosity=0)


def answer_rules(questions, right: float = RIGHT) -> list[dict]:
    """Asked for an answer to a question (the prompt holds the question and the JSON answer format), reply with the
    gold answer with probability `right`, else with the gold answer plus one."""
    rules = []
    for q in questions:
        match = "(?s)" + re.escape(q.question) + '.*"answer"'
        good = json.dumps({"reasoning": "worked out", "answer": q.answer})
        bad = json.dumps({"reasoning": "slipped", "answer": str(int(q.answer) + 1)})
        rules += [{"match": match, "reply": good, "probability": right}, {"match": match, "reply": bad}]
    return rules


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def recompute(comparison: Comparison) -> dict:
    """Per arm: questions, correct, calls, Wilson's interval; per pair: b, c and the exact p; from the stored runs."""
    names = [a["name"] for a in comparison.arms]
    right: dict[str, dict[int, bool]] = defaultdict(dict)
    calls: dict[str, int] = defaultdict(int)
    for run in Run.objects.filter(comparison=comparison).select_related("debate", "question"):
        decided = debate_selectors.decision(run.debate)
        answer = None if decided is None else decided["answer"]
        try:
            ok = answer is not None and int(str(answer).strip()) == int(run.question.answer)
        except ValueError:
            ok = False
        right[names[run.arm]][run.question.index] = ok
        calls[names[run.arm]] += Event.objects.filter(debate=run.debate, tokens_in__gt=0).count()
    arms = {}
    for name in names:
        k, n = sum(right[name].values()), len(right[name])
        arms[name] = {"questions": n, "correct": k, "calls": calls[name], "wilson": wilson(k, n)}
    pairs = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            only_a = sum(right[a][q] and not right[b][q] for q in right[a])
            only_b = sum(right[b][q] and not right[a][q] for q in right[a])
            p = binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
            pairs[(a, b)] = {"b": only_a, "c": only_b, "p": p}
    return {"arms": arms, "pairs": pairs}
