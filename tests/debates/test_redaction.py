"""The arena's redaction (debates/redaction.py): what a blind voter reads has no debater's or model's name left,
and a name that cannot be removed safely, or that is still found, makes the redaction incomplete."""

from __future__ import annotations

from debates.redaction import MODEL_LABEL, SHARED_LABEL, redact

ANN_BOB = [("Debater 1", ["Ann Lee"]), ("Debater 2", ["Bob Stone"])]


def one(text: str, debaters=ANN_BOB, models=()) -> tuple[str, tuple[str, ...]]:
    result = redact([text], debaters, models)
    assert result.complete == (not result.problems)
    return result.texts[0], result.problems


def test_debaters_naming_themselves_and_each_other():
    text, problems = one("I am Ann Lee. Bob Stone is wrong, and Bob knows it; Lee has shown it.")
    assert text == "I am Debater 1. Debater 2 is wrong, and Debater 2 knows it; Debater 1 has shown it."
    assert problems == ()


def test_possessives_keep_their_ending_with_either_apostrophe():
    text, problems = one("Ann's case beats Bob\u2019s, and Stone's reply is weak.")
    assert text == "Debater 1's case beats Debater 2\u2019s, and Debater 2's reply is weak."
    assert problems == ()


def test_case_changes():
    text, problems = one("ANN LEE! ann said so. BOB's point. bob stone and Bob STONE.")
    assert text == "Debater 1! Debater 1 said so. Debater 2's point. Debater 2 and Debater 2."
    assert problems == ()


def test_a_name_is_whole_words_only():
    text, problems = one("Annual leeway: Bobby and Anne leave Leeds.")
    assert text == "Annual leeway: Bobby and Anne leave Leeds."
    assert problems == ()


def test_line_breaks_and_runs_of_spaces_inside_a_name():
    text, _ = one("Says Ann\n  Lee, then Bob\tStone.")
    assert text == "Says Debater 1, then Debater 2."


def test_accents_full_width_letters_and_invisible_characters():
    debaters = [("Debater 1", ["Zoë Müller"]), ("Debater 2", ["Bob Stone"])]
    text, problems = one("Zoe Muller, ZOË, \uff42\uff4f\uff42 and B\u200bob all spoke. Müller agrees.", debaters)
    assert text == "Debater 1, Debater 1, Debater 2 and Debater 2 all spoke. Debater 1 agrees."
    assert problems == ()


def test_every_text_is_redacted_the_topic_too():
    result = redact(["Is Ann Lee right?", "", "Bob Stone opens."], ANN_BOB, [])
    assert result.texts == ("Is Debater 1 right?", "", "Debater 2 opens.")


def test_several_names_per_debater_persona_and_seat():
    debaters = [("Debater 1", ["Ann Lee", "Professor Ann"]), ("Debater 2", ["Bob Stone", "Bobster"])]
    text, problems = one("Professor Ann meets the Bobster.", debaters)
    assert text == "Debater 1 meets the Debater 2."
    assert problems == ()


def test_model_names_with_their_provider_prefix_and_tag():
    text, problems = one(
        "As gpt-4o-mini (openai/gpt-4o-mini) I disagree with llama3.2 and LLAMA3.2:1B.",
        models=["openai/gpt-4o-mini", "llama3.2:1b"],
    )
    assert text == f"As {MODEL_LABEL} ({MODEL_LABEL}) I disagree with {MODEL_LABEL} and {MODEL_LABEL}."
    assert problems == ()


def test_a_word_two_names_share_names_neither():
    debaters = [("Debater 1", ["Ann Smith"]), ("Debater 2", ["Bob Smith"])]
    text, problems = one("Smith versus Smith: Ann Smith and Bob Smith.", debaters)
    assert text == f"{SHARED_LABEL} versus {SHARED_LABEL}: Debater 1 and Debater 2."
    assert problems == ()


def test_particles_are_not_replaced_alone():
    debaters = [("Debater 1", ["The Skeptic"]), ("Debater 2", ["Ludwig von Mises"])]
    text, problems = one("The Skeptic and the skeptic differ from von Mises and Ludwig.", debaters)
    assert text == "Debater 1 and Debater 1 differ from von Debater 2 and Debater 2."
    assert problems == ()


def test_a_name_too_short_is_left_and_makes_it_incomplete():
    debaters = [("Debater 1", ["Al"]), ("Debater 2", ["Bob Stone"])]
    text, problems = one("Al agrees with Bob.", debaters)
    assert text == "Al agrees with Debater 2."
    assert problems == ("the name 'Al' is too short or too common to remove safely",)


def test_a_name_that_is_a_common_word_is_left_and_makes_it_incomplete():
    debaters = [("Debater 1", ["Pro"]), ("Debater 2", ["The Judge"])]
    text, problems = one("The pro side is right, the judge will see.", debaters)
    assert text == "The pro side is right, the judge will see."
    assert problems == (
        "the name 'Pro' is too short or too common to remove safely",
        "the name 'The Judge' is too short or too common to remove safely",
    )


def test_a_name_with_a_common_word_in_it_is_replaced_whole_but_incomplete():
    debaters = [("Debater 1", ["Doctor No"]), ("Debater 2", ["Bob Stone"])]
    text, problems = one("Doctor No says no. Doctor agrees.", debaters)
    assert text == "Debater 1 says no. Debater 1 agrees."
    assert problems == ("part of the name 'Doctor No' ('No') is too short or too common to remove safely",)


def test_a_name_still_found_after_redaction_makes_it_incomplete():
    text, problems = one("The Anns of this world, and Bobs too.")
    assert text == "The Anns of this world, and Bobs too."
    assert problems == (
        "the name 'Ann' is still in the text after redaction",
        "the name 'Bob' is still in the text after redaction",
    )


def test_a_short_model_name_makes_it_incomplete():
    _, problems = one("Hello.", models=["o1"])
    assert problems == ("the model name 'o1' is too short or too common to remove safely",)


def test_a_replacement_is_never_matched_again():
    debaters = [("Debater 1", ["Debater Two"]), ("Debater 2", ["Bob Stone"])]
    text, problems = one("Debater Two meets Bob.", debaters)
    assert text == "Debater 1 meets Debater 2."
    assert problems == ("part of the name 'Debater Two' ('Debater') is too short or too common to remove safely",)


def test_no_names_nothing_changes():
    result = redact(["Plain text."], [], [])
    assert result.texts == ("Plain text.",) and result.complete
