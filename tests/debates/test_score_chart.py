"""The running-score chart reads as a chart: its axes numbered and named (turn, score), and a debate where each side
spoke once (one scored turn a side, no line to draw) shows each score as a bar with its number, not a lone dot."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from debates.models import Event
from tests.debates.test_pages import duel
from tests.debates.test_pages import owner as owner

pytestmark = pytest.mark.django_db


def chart_of(client, debate, seats, scores) -> str:
    for ordinal, key, turn, score in scores:
        Event.objects.create(
            debate=debate,
            ordinal=ordinal,
            seat=seats["judge"],
            kind="SCORE",
            data={"for": key, "turn": turn, "score": score},
        )
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    return html.split('id="score-chart"')[1].split("</section>")[0]


def texts(svg: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", text).strip() for text in re.findall(r"<text[^>]*>.*?</text>", svg)]


def test_the_axes_are_numbered_and_named(client, owner):
    debate, seats = duel(owner, status="running", options={"turns": 6})
    chart = chart_of(client, debate, seats, [(6, "a", 1, 7), (10, "b", 2, 8), (14, "a", 3, 6), (18, "b", 4, 5)])
    assert texts(chart) == ["0", "5", "10", "1", "2", "3", "4", "turn", "score"]
    assert chart.count("<polyline") == 2 and 'class="stem"' not in chart and 'class="value"' not in chart


def test_a_side_with_one_scored_turn_beside_anothers_line_has_its_score_written(client, owner):
    debate, seats = duel(owner, status="running", options={"turns": 6})
    chart = chart_of(client, debate, seats, [(6, "a", 1, 7), (10, "b", 2, 8), (14, "a", 3, 6)])
    assert 'class="stem"' not in chart
    assert texts(chart) == ["0", "5", "10", "1", "2", "3", "turn", "score", "8"]


def test_one_scored_turn_a_side_draws_each_score_as_a_bar_with_its_number(client, owner):
    debate, seats = duel(owner, status="completed", options={"turns": 2})
    chart = chart_of(client, debate, seats, [(6, "a", 1, 7), (10, "b", 2, 4)])
    assert "<polyline" not in chart
    stems = re.findall(
        r'<line x1="([\d.]+)" x2="[\d.]+" y1="([\d.]+)" y2="([\d.]+)" stroke="(#\w+)"[^>]*class="stem"', chart
    )
    # Ada's at turn 1, Bob's at turn 2, each from 0 up to its score.
    assert [(colour, float(top) < float(base)) for _, base, top, colour in stems] == [
        ("#1570ef", True),
        ("#d92d20", True),
    ]
    assert float(stems[0][0]) < float(stems[1][0])
    ada_height = float(stems[0][1]) - float(stems[0][2])
    bob_height = float(stems[1][1]) - float(stems[1][2])
    assert ada_height == pytest.approx(bob_height * 7 / 4)
    assert texts(chart) == ["0", "5", "10", "1", "2", "turn", "score", "7", "4"]
