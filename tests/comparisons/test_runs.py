"""A comparison's run reads its question as a card does: the question its topic, its material and lettered choices
its {material}; a multiple-choice answer is graded by its letter or its choice's text; a run that gives no answer
counts as wrong."""

from __future__ import annotations

import json
import time

import pytest

from batches.checks import Contestant
from chaoslm.runner import inline
from comparisons import selectors, services
from comparisons.arms import ArmRequest
from comparisons.kind import COMPARISON
from comparisons.question_sets import sample
from tests.batches.helpers import debater
from tests.comparisons.helpers import import_shipped_cards

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_multiple_choice_run_reads_its_material_and_lettered_choices_and_is_graded_by_letter_or_text(llm_server):
    import_shipped_cards()
    questions = [q for q in sample() if q.id in ("mc-01", "mc-02", "mc-27")]
    gold, hexagon, table = questions
    reply = {"reasoning": "read it", "answer": ""}
    llm_server.configure(
        rules=[
            {"match": "chemical symbol for gold", "reply": json.dumps({**reply, "answer": "B"})},
            {"match": "most rain in March", "reply": json.dumps({**reply, "answer": "Brackwell"})},
            {"match": "hexagon", "reply": json.dumps({**reply, "answer": "seven"})},
        ]
    )
    comparison = services.create_comparison(
        name="Letters",
        questions=questions,
        arms=[ArmRequest("single-agent", Contestant.of(debater("Ada")))],
        concurrency=3,
    )
    COMPARISON.start(comparison)
    deadline = time.monotonic() + 120
    while not COMPARISON.is_settled(comparison.pk):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    inline.wait_idle()

    prompts = {q.id: next(r.last_user for r in llm_server.requests if q.question in r.last_user) for q in questions}
    assert "A. Ag\nB. Au\nC. Gd\nD. Go" in prompts["mc-01"]
    assert table.material + "\n\nA. Alderby\nB. Corran\nC. Dunmere\nD. Brackwell" in prompts["mc-27"]
    runs = {f.question: f for f in selectors.finished(comparison)}
    assert {q: (f.decided, f.stats.correct) for q, f in runs.items()} == {
        "mc-01": ("B", True),  # by its letter
        "mc-02": ("seven", False),  # no choice's letter or text: wrong
        "mc-27": ("Brackwell", True),  # by the text of choice D
    }
    assert hexagon.answer == "A" and gold.answer == "B"
