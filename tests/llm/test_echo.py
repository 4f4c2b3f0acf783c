"""The loop and echo detector (chaoslm/llm/echo.py) on replies SmolLM2-135M wrote, and on good ones."""

import pytest

from chaoslm.llm import echo

SCORE_PROMPT = """Give Ada Sterling an initial score out of 10 based on this first impression.
Respond with a JSON object in exactly this format:
{"score": 7, "reasoning": "One sentence explaining the score."}
The score must be a whole number between 0 and 10 inclusive."""

TURN_PROMPT = """You are Marcus Vale. Argue against the premise: Cities should ban private cars.
Keep it under 60 words. Respond directly to your opponent's last point."""


def test_a_sentence_said_over_and_over_is_a_loop():
    looped = "Ban the cars now. " * 5  # a run of four words, all of it
    assert echo.is_loop(looped) and echo.loop_share(looped) == 1.0
    # A good start that falls into a loop: the loop is still most of it.
    assert echo.is_loop("I disagree with my opponent. " + "We need more buses and trains. " * 4)


@pytest.mark.parametrize(
    "text",
    [
        "Banning cars would strand the people who cannot walk far, and buses do not reach every street.",
        # A phrase used twice for emphasis is not a loop.
        "We need safer streets. We need safer streets for children, and cleaner air for everyone who lives here.",
        "",
        "No.",
    ],
)
def test_an_argument_that_repeats_itself_once_is_not_a_loop(text):
    assert not echo.is_loop(text)


def test_the_prompts_example_given_back_as_the_judges_reasoning_is_an_echo():
    assert echo.echoes(SCORE_PROMPT, "One sentence explaining the score.")
    assert echo.echoes(SCORE_PROMPT, 'Respond with a JSON object in exactly this format: {"score": 7}')
    assert echo.echoes(TURN_PROMPT, "You are Marcus Vale. Argue against the premise: cities should ban private cars.")


@pytest.mark.parametrize(
    ("prompt", "text"),
    [
        (SCORE_PROMPT, "Her evidence on traffic deaths was specific, but she never answered the cost of buses."),
        # Quoting the premise and going on in its own words is an answer, not an echo.
        (
            TURN_PROMPT,
            "Cities should ban private cars, my opponent says; yet a nurse on a night shift has no bus home.",
        ),
        # A name the prompt offered to choose from.
        ("Who won? Reply with exactly one of these names: 'Ada Sterling' or 'Marcus Vale'.", "Ada Sterling"),
    ],
)
def test_an_answer_in_its_own_words_is_not_an_echo(prompt, text):
    assert not echo.echoes(prompt, text)


def test_an_empty_reply_a_loop_or_an_echo_is_invalid_and_an_answer_is_not():
    assert echo.is_invalid(SCORE_PROMPT, "   ")
    assert echo.is_invalid(SCORE_PROMPT, "The score is seven. " * 4)
    assert echo.is_invalid(SCORE_PROMPT, "One sentence explaining the score.")
    assert not echo.is_invalid(SCORE_PROMPT, "A clear case, though the numbers on buses were never sourced.")
