"""The arithmetic question set, generated: every gold answer exact (computed with integers), any size drawn from a
seed, the same questions for the same seed (and a larger draw begins with a smaller one's questions).

Difficulties (docs/experiments.md):
1. `a+b`, each number 0-9;
2. `a+b*c-d`, each number 0-29;
3. `a+b*c+d-e*f`, each number 0-29: Du et al. 2023's arithmetic task ("What is the result of ...?").

Questions may repeat within a draw (each is drawn independently, as in Du et al.), and each has its own id, its
position in the draw. Pure: no Django.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from comparisons.question_sets import MAX_QUESTIONS, NUMERIC, GoldQuestion


@dataclass(frozen=True)
class Level:
    pattern: str  # the expression, one letter a number
    largest: int  # each number is drawn from 0 to this, inclusive


LEVELS = {
    1: Level("a+b", 9),
    2: Level("a+b*c-d", 29),
    3: Level("a+b*c+d-e*f", 29),
}
QUESTION = "What is the result of {}?"


def _value(pattern: str, numbers: list[int]) -> int:
    """The expression's value, products before sums, worked term by term over the integers."""
    total, sign, product = 0, 1, 1
    numbers_left = iter(numbers)
    for symbol in pattern:
        if symbol == "*":
            continue
        if symbol in "+-":
            total += sign * product
            sign, product = (1 if symbol == "+" else -1), 1
        else:
            product *= next(numbers_left)
    return total + sign * product


def _expression(pattern: str, numbers: list[int]) -> str:
    numbers_left = iter(numbers)
    return "".join(str(next(numbers_left)) if symbol.isalpha() else symbol for symbol in pattern)


def generate(count: int, difficulty: int = 3, seed: int = 0) -> list[GoldQuestion]:
    """`count` questions (1 to MAX_QUESTIONS) of `difficulty` (1, 2 or 3), drawn with `seed`."""
    if difficulty not in LEVELS:
        raise ValueError(f"There is no difficulty {difficulty}; the difficulties are 1, 2 and 3.")
    if not 1 <= count <= MAX_QUESTIONS:
        raise ValueError(f"An arithmetic set has 1 to {MAX_QUESTIONS:,} questions, not {count}.")
    level = LEVELS[difficulty]
    terms = sum(symbol.isalpha() for symbol in level.pattern)
    rng = random.Random(seed)
    out = []
    for index in range(1, count + 1):
        numbers = [rng.randint(0, level.largest) for _ in range(terms)]
        value = _value(level.pattern, numbers)
        out.append(
            GoldQuestion(
                id=str(index),
                question=QUESTION.format(_expression(level.pattern, numbers)),
                kind=NUMERIC,
                answer=str(value),
                value=Fraction(value),
            )
        )
    return out
