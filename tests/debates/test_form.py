"""The new-debate form: inline errors, nothing created on bad input, a debate started on good input."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils.html import escape

from chaoslm.runner import inline
from debates.models import Debate
from personas.models import Persona, import_personas

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    return client


@pytest.fixture
def personas():
    import_personas(
        [
            ("a.yaml", "name: Ann\nrole: debater\npersonality: Ann <b>argues</b>.\nposition: For.\n"),
            ("b.yaml", "name: Ben\nrole: debater\npersonality: Ben argues.\n"),
            ("j.yaml", "name: Jo\nrole: judge\npersonality: Jo judges.\njudging_criteria: Logic.\n"),
        ]
    )
    return {p.name: p.pk for p in Persona.objects.all()}


def duel(personas, **changes):
    data = {
        "format": "duel",
        "topic": "Tea or coffee?",
        "premise": "",
        "visibility": "private",
        "seat_a": personas["Ann"],
        "seat_b": personas["Ben"],
        "seat_judge": personas["Jo"],
        "option_turns": 2,
        "option_word_limit": 0,
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"topic": "   "}, "The topic must have at least one non-whitespace character."),
        ({"seat_b": ""}, "Choose a persona, as Judged duel needs 2 debaters played by personas."),
        ({"option_turns": 99}, "Ensure this value is less than or equal to 40."),
        ({"option_turns": 0}, "Ensure this value is greater than or equal to 1."),
        ({"seat_judge": "Nobody"}, "There is no persona 'Nobody': seat 'judge' takes a persona's id."),
    ],
)
def test_bad_input_is_shown_inline_and_nothing_is_created(owner, personas, changes, message):
    data = duel(personas, **{k: (personas.get(v, v)) for k, v in changes.items()})
    response = owner.post(reverse("debate_new"), data)
    assert response.status_code == 200
    assert escape(message) in response.content.decode()
    assert not Debate.objects.exists()


def test_a_persona_in_a_seat_of_another_role_is_refused_naming_the_rule(owner, personas):
    response = owner.post(reverse("debate_new"), duel(personas, seat_judge=personas["Ann"]))
    message = f"Persona {personas['Ann']} (Ann) is a debater; seat 'judge' takes a judge."
    assert response.status_code == 200 and escape(message) in response.content.decode()
    assert not Debate.objects.exists()


def test_the_same_persona_twice_is_refused(owner, personas):
    response = owner.post(reverse("debate_new"), duel(personas, seat_b=personas["Ann"]))
    assert "Choose another persona, as Ann already sits in Debater A (for)" in response.content.decode()
    assert not Debate.objects.exists()


def test_a_good_form_starts_the_debate_and_opens_its_page(owner, personas, llm_server):
    response = owner.post(reverse("debate_new"), duel(personas))
    debate = Debate.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("debate_detail", args=[debate.pk])
    inline.wait_idle()
    debate.refresh_from_db()
    assert debate.status == Debate.Status.COMPLETED and debate.winner in ("Ann", "Ben")
    page = owner.get(response["Location"]).content.decode()
    assert "Verdict" in page and "Running scores" in page


def test_switching_format_returns_only_that_formats_fields(owner, personas):
    response = owner.get(reverse("debate_new"), {"format": "standard"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html
    assert 'name="seat_moderator"' in html and 'name="seat_human"' in html and 'name="option_max_turns"' in html
    assert 'name="seat_judge"' not in html


def test_pickers_offer_personas_of_the_seats_role_and_preview_the_prompt(owner, personas):
    html = owner.get(reverse("debate_new")).content.decode()
    judge_picker = html.split('name="seat_judge"')[1].split("</select>")[0]
    assert "Jo (judge)" in judge_picker and "Ann (debater)" not in judge_picker
    preview = owner.get(reverse("persona_prompt"), {"seat_a": personas["Ann"], "role": "debater"}).content.decode()
    assert "<p>Ann &lt;b&gt;argues&lt;/b&gt;.</p><p>For.</p>" in preview


def test_a_persona_meant_for_some_formats_is_offered_only_in_their_seats(owner):
    import_personas(
        [
            ("r.yaml", "name: Reyes\nrole: moderator\npersonality: Moderates debates.\n"),
            ("m.yaml", "name: Panel Mod\nrole: moderator\npersonality: Moderates panels.\nformats: [panel]\n"),
        ]
    )
    standard = owner.get(reverse("debate_new"), {"format": "standard"}).content.decode()
    picker = standard.split('name="seat_moderator"')[1].split("</select>")[0]
    assert "Reyes (moderator)" in picker and "Panel Mod" not in picker
    panel = owner.get(reverse("debate_new"), {"format": "panel"}).content.decode()
    picker = panel.split('name="seat_moderator"')[1].split("</select>")[0]
    assert "Reyes (moderator)" in picker and "Panel Mod (moderator)" in picker


def test_the_judge_starts_chosen_and_no_judge_is_an_explicit_choice(owner, personas):
    html = owner.get(reverse("debate_new")).content.decode()
    judge_picker = html.split('name="seat_judge"')[1].split("</select>")[0]
    assert f'<option value="{personas["Jo"]}" selected>Jo (judge)</option>' in judge_picker
    assert '<option value="">— no judge —</option>' in judge_picker
    # The chosen judge's prompt is shown as the page loads; the debaters, not chosen yet, show none.
    judge_preview = html.split('id="preview-judge"')[1].split("</div>")[0]
    assert "Jo judges." in judge_preview and "Logic." in judge_preview
    assert '<div class="prompt-preview" id="preview-a"></div>' in html
    # The debaters still start unchosen: the form makes no choice for them.
    debater_picker = html.split('name="seat_a"')[1].split("</select>")[0]
    assert '<option value="" selected>— choose a persona —</option>' in debater_picker
    # Choosing "no judge" starts a duel without one.
    response = owner.post(reverse("debate_new"), duel(personas, seat_judge=""))
    assert response.status_code == 302
    assert not Debate.objects.get().seats.filter(key="judge").exists()


def test_the_topic_has_focus_and_a_refused_form_keeps_what_was_typed_and_the_previews(owner, personas):
    html = owner.get(reverse("debate_new")).content.decode()
    assert 'name="topic"' in html and "autofocus" in html.split('name="topic"')[1].split(">")[0]
    response = owner.post(reverse("debate_new"), duel(personas, premise="Tea wins", seat_b=personas["Ann"]))
    html = response.content.decode()
    assert "Choose another persona, as Ann already sits in Debater A (for)" in html
    assert 'value="Tea or coffee?"' in html and 'value="Tea wins"' in html
    for key, text in (
        ("a", "<p>Ann &lt;b&gt;argues&lt;/b&gt;.</p><p>For.</p>"),
        ("b", "Ann &lt;b&gt;argues&lt;/b&gt;."),
        ("judge", "Jo judges."),
    ):
        preview = html.split(f'id="preview-{key}"')[1].split("</div>")[0]
        assert '<div class="prompt">' in preview and text in preview, key
    # A chosen persona of the other role (tampered) or a bad id shows no preview and no error page.
    response = owner.post(reverse("debate_new"), duel(personas, seat_a="x", seat_judge=personas["Ann"]))
    assert response.status_code == 200
    assert '<div class="prompt-preview" id="preview-a"></div>' in response.content.decode()


def test_the_prompt_preview_reflows_the_yamls_hard_line_breaks(owner):
    from personas.models import import_personas

    yaml = (
        "name: Wes\nrole: debater\npersonality: |-\n  You argue plainly and\n  never shout.\n\n"
        "  - short sentences\n  - one claim each\n"
    )
    (wes,) = import_personas([("w.yaml", yaml)])
    preview = owner.get(reverse("persona_prompt"), {"seat_a": wes.pk, "role": "debater"}).content.decode()
    assert "<p>You argue plainly and never shout.</p><p>- short sentences<br>- one claim each</p>" in preview


def test_checkboxes_come_before_their_labels_on_one_line(owner, personas):
    html = owner.get(reverse("debate_new")).content.decode()
    assert '<div class="field check"><input type="checkbox" name="show_thinking"' in html
    fields = owner.get(reverse("debate_new"), {"format": "standard"}, HTTP_HX_REQUEST="true").content.decode()
    human = fields.split('<div class="field seat-field check">')[1].split("</div>")[0]
    assert human.strip().startswith('<input type="checkbox" name="seat_human"') and "<label" in human


def test_while_the_embedded_model_serves_a_new_debate_starts_short_and_every_form_says_its_calls_and_time(
    owner, personas, settings
):
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""  # no endpoint: the embedded model serves
    page = owner.get(reverse("debate_new")).content.decode()
    # A judged duel of 2 turns: 4 calls a turn and the verdict's 6; the embedded model's guessed pace, 8 s a call.
    assert 'name="option_turns" value="2"' in page
    assert '<p class="muted" id="estimate">14 calls, about 2 minutes at the options shown.</p>' in page
    # Sized for the embedded model, and saying so: the word limit too.
    assert 'name="option_word_limit" value="60"' in page
    assert "2: the embedded model&#x27;s default, for a first debate in about three minutes." in page
    assert "60: the embedded model&#x27;s default, for a first debate in about three minutes." in page
    classic = owner.get(reverse("debate_new") + "?format=classic").content.decode()
    assert 'name="option_free_turns" value="1"' in classic and 'id="estimate">' in classic
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = "http://127.0.0.1:9/v1", "k"  # a configured endpoint
    page = owner.get(reverse("debate_new")).content.decode()
    assert 'name="option_turns" value="6"' in page
    assert "the embedded model&#x27;s default" not in page
    assert 'id="estimate">30 calls, about 2 minutes at the options shown.</p>' in page  # 4 s a call, hosted


def test_a_checkbox_label_has_no_stray_colon(owner, personas):
    page = owner.get(reverse("debate_new")).content.decode()
    assert '<label for="id_show_thinking">Viewers see the private thinking</label>' in page
    assert 'for="id_audience_poll">' in page and "Viewers see the private thinking:</label>" not in page
    standard = owner.get(reverse("debate_new") + "?format=standard").content.decode()
    assert ": take this seat yourself</label>" in standard and "yourself:</label>" not in standard


def test_a_debate_whose_estimate_passes_the_budget_is_refused_keeping_the_text(owner, personas, llm_server):
    from decimal import Decimal

    from personas.models import Budget, Provider

    paid = Provider.objects.create(
        name="paid", base_url=llm_server.url, default_model="m", input_price=Decimal(100), output_price=Decimal(200)
    )
    Persona.objects.update(provider=paid)
    Budget.objects.create(user=get_user_model().objects.get(username="olive"), monthly=Decimal("0.10"))
    response = owner.post(reverse("debate_new"), duel(personas))
    html = response.content.decode()
    # A duel of two turns makes 14 calls: at least 14 x (150 x $100 + 5 x $200) per million tokens.
    assert "This would cost about $0.224 to $11.20" in html
    assert "more than the $0.10 left of your monthly budget of $0.10" in html
    assert 'value="Tea or coffee?"' in html
    assert not Debate.objects.exists()


def summary_of(html: str) -> str:
    assert html.count('class="error-summary"') == 1
    return html.split('<div class="error-summary"')[1].split("</div>")[0]


def test_every_problem_is_shown_at_once_in_a_summary_that_takes_focus_and_links_each_field(owner, personas):
    data = duel(personas, topic="", premise="Tea wins", seat_b=personas["Ann"], option_turns=99)
    html = owner.post(reverse("debate_new"), data).content.decode()
    summary = summary_of(html)
    # One submit: the blank topic, the persona seated twice and the option out of range, all together.
    assert 'role="alert" tabindex="-1" autofocus aria-labelledby="error-summary-title"' in summary
    assert '<h2 id="error-summary-title">What to fix</h2>' in summary
    assert '<a href="#id_topic">Topic: Write the topic the debate is about.</a>' in summary
    assert (
        '<a href="#id_seat_b">Debater B (against): Choose another persona, as Ann already sits in Debater A (for) '
        "and the transcript tells speakers apart by name.</a>"
    ) in summary
    assert '<a href="#id_option_turns">Turns: Ensure this value is less than or equal to 40.</a>' in summary
    # Each message also stands by its field, which says it is invalid and points to it.
    assert 'aria-invalid="true" aria-describedby="id_topic_error" id="id_topic"' in html
    assert '<ul class="errorlist" id="id_seat_b_error"><li>Choose another persona, as Ann already sits' in html
    # The summary, first in the form, is what takes focus: the topic no longer asks for it.
    assert "autofocus" not in html.split('name="topic"')[1].split(">")[0]
    # Nothing typed is lost.
    assert 'name="premise" value="Tea wins"' in html and f'<option value="{personas["Ann"]}" selected>' in html
    assert not Debate.objects.exists()
    # A correct form shows no summary.
    assert "error-summary" not in owner.get(reverse("debate_new")).content.decode()


def test_a_human_seat_beside_one_participant_says_why_a_second_persona_is_needed(owner, personas):
    data = {
        "format": "standard",
        "topic": "Tea or coffee?",
        "visibility": "private",
        "seat_p1": personas["Ann"],
        "seat_human": "on",
        "option_max_turns": 4,
        "option_word_limit": 0,
    }
    html = owner.post(reverse("debate_new"), data).content.decode()
    why = (
        "Choose a persona, as Standard needs at least 2 debaters played by personas, and the seat you take yourself "
        "comes on top of them, not in place of one."
    )
    assert f'<a href="#id_seat_p2">Participant 2: {why}</a>' in summary_of(html)
    assert "This field is required." not in html
    assert '<input type="checkbox" name="seat_human" id="id_seat_human" checked>' in html
    assert not Debate.objects.exists()
