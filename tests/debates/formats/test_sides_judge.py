"""The judge replay of a two-sided debate (classic, structured) checks its options with the duel replay's one check
(Judge.validate): the same rules, its own words where a duel's replay differs (its source format, its statements
in the source's own order)."""

import pytest

from debates.formats import DebateConfig, FormatError, Record, SeatInfo, get_format
from debates.formats.sides_judge import sides_replay_options

SIDES_JUDGE = get_format("sides_judge")
J = SeatInfo("judge", "judge", "Judy", "", "Judy's system prompt")
CLASSIC = DebateConfig(
    format="classic",
    topic="Cars in cities",
    seats=(
        SeatInfo("moderator", "moderator", "Mo"),
        SeatInfo("for", "debater", "Ada", "for"),
        SeatInfo("against", "debater", "Bob", "against"),
    ),
)
# Bob speaks twice in a row: a classic debate's order is its own, not A and B alternating.
SPOKEN = [
    Record(1, "TURN", "moderator", content="Welcome."),
    Record(2, "TURN", "for", content="Ban them."),
    Record(3, "TURN", "against", content="Keep them."),
    Record(4, "TURN", "against", content="Really."),
]


def config(options):
    return DebateConfig(format="sides_judge", topic="Cars in cities", options=options, seats=(J,))


def test_the_options_a_replay_is_built_with_pass():
    options = sides_replay_options(CLASSIC, SPOKEN, source_debate=7)
    assert [(s["seat"], s["text"]) for s in options["statements"]] == [
        ("a", "Ban them."),
        ("b", "Keep them."),
        ("b", "Really."),
    ]
    SIDES_JUDGE.validate(config(options))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o.update(extra=1), "Judge replay of a two-sided debate has no option called 'extra'"),
        (lambda o: o.pop("source_format"), "names its format: use sides_replay_options"),
        (lambda o: o.pop("statements"), "needs the debate's statements: use sides_replay_options"),
        (lambda o: o.pop("debaters"), "needs the debate's debaters: use sides_replay_options"),
        (lambda o: o.update(source_debate=True), "must be a debate's id"),
        (lambda o: o.update(turns=0), "Turns must be from 1 to 60"),
        (lambda o: o["debaters"]["b"].update(name="Ada"), "different names"),
        (lambda o: o["debaters"]["a"].update(side="against"), "Debater 'a' argues FOR"),
        (lambda o: o.update(turns=2), "a list of at most 2"),
        (lambda o: o["statements"][1].update(seat="c"), "Statement 2 must be turn 2, by debater 'a' or 'b'"),
        (lambda o: o["statements"].pop(0), "Statement 1 must be turn 1"),
        (lambda o: o["statements"][0].update(text=None), "Statement 1 must be text"),
    ],
)
def test_bad_options_are_refused_with_a_message(change, message):
    options = sides_replay_options(CLASSIC, SPOKEN, source_debate=7)
    change(options)
    with pytest.raises(FormatError, match=message):
        SIDES_JUDGE.validate(config(options))


def test_its_sides_judging_and_poll():
    # What it chose; tests/debates/formats/test_interface.py checks they agree with each other.
    fmt = get_format("sides_judge")
    assert (fmt.sides, fmt.judging, fmt.judge_seat, fmt.poll) == ((), "in_debate", "judge", "")
