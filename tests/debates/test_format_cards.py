"""Protocol cards on the Django side: the admin (the YAML is the source of truth, a bad card refused with every
problem), import and export as files, the new-debate form and the `debate` command offering cards, a card debate
run through the engine against the test server, and the card's page with its plan."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils.html import escape

from chaoslm.runner import inline
from debates import format_cards, services
from debates.models import Debate, Event, FormatCard
from personas.models import Persona, import_personas
from tests.debates import card_samples

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff(client):
    user = get_user_model().objects.create_user("stella", password="pw", is_staff=True, is_superuser=True)
    client.force_login(user)
    return client


@pytest.fixture
def personas():
    import_personas(
        [
            ("a.yaml", "name: Ann\nrole: debater\npersonality: Ann argues.\n"),
            ("b.yaml", "name: Ben\nrole: debater\npersonality: Ben argues.\n"),
            ("j.yaml", "name: Jo\nrole: judge\npersonality: Jo judges.\njudging_criteria: Logic.\n"),
        ]
    )
    return {p.name: p.pk for p in Persona.objects.all()}


def problems_in(html: str) -> list[str]:
    box = re.search(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", box.group(1), re.S) if box else []


# --- the admin ---------------------------------------------------------------------------------------------------


def test_the_admin_refuses_a_bad_card_with_every_problem_and_keeps_the_text(staff):
    url = reverse("admin:debates_formatcard_add")
    html = staff.post(url, {"yaml": card_samples.BROKEN, "public": "on"}).content.decode()
    found = problems_in(html)
    assert len(found) == len(card_samples.BROKEN_PROBLEMS), found
    for (line, field), shown in zip(card_samples.BROKEN_PROBLEMS, found, strict=True):
        assert shown.startswith(f"line {line}, ") and field in shown
    # The text stays in the box to be fixed, escaped.
    assert escape(card_samples.BROKEN) in html
    assert not FormatCard.objects.exists()


def test_the_admin_saves_a_good_card_reading_its_name_and_title_from_the_yaml(staff):
    staff.post(reverse("admin:debates_formatcard_add"), {"yaml": card_samples.valid()})
    card = FormatCard.objects.get()
    assert (card.name, card.title, card.yaml) == ("town-hall", "Town hall", card_samples.valid())
    url = reverse("admin:debates_formatcard_change", args=[card.pk])
    staff.post(url, {"yaml": card_samples.valid(name="town-hall-2", title="Town hall II")})
    card.refresh_from_db()
    assert (card.name, card.title) == ("town-hall-2", "Town hall II")


def test_a_card_may_not_take_a_built_in_format_s_name(staff):
    html = staff.post(reverse("admin:debates_formatcard_add"), {"yaml": card_samples.valid(name="duel")}).content
    assert problems_in(html.decode()) == [
        "line 1, name: &#x27;duel&#x27; is a built-in format&#x27;s name; choose another."
    ]


def test_admin_export_and_import_round_trip(staff):
    format_cards.save_card(card_samples.valid(), owner=None)
    card = FormatCard.objects.get()
    reply = staff.post(
        reverse("admin:debates_formatcard_changelist"), {"action": "export_yaml", "_selected_action": [card.pk]}
    )
    assert reply["Content-Disposition"] == 'attachment; filename="town-hall.yaml"'
    exported = reply.content.decode()
    assert exported == card_samples.valid()
    card.delete()
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("town-hall.yaml", exported.encode(), content_type="application/yaml")
    staff.post(reverse("admin:debates_formatcard_import"), {"files": [upload]})
    assert FormatCard.objects.get().yaml == card_samples.valid()


def test_admin_import_of_a_bad_file_lists_every_problem_and_imports_nothing(staff):
    from django.core.files.uploadedfile import SimpleUploadedFile

    files = [
        SimpleUploadedFile("good.yaml", card_samples.valid().encode()),
        SimpleUploadedFile("bad.yaml", card_samples.BROKEN.encode()),
    ]
    html = staff.post(reverse("admin:debates_formatcard_import"), {"files": files}).content.decode()
    found = problems_in(html)
    assert [p.split(":")[0] for p in found] == ["bad.yaml"] * len(card_samples.BROKEN_PROBLEMS)
    assert not FormatCard.objects.exists()


# --- the commands --------------------------------------------------------------------------------------------------


def test_import_and_export_formats_round_trip_through_files(tmp_path):
    source = tmp_path / "cards"
    source.mkdir()
    (source / "town-hall.yaml").write_text(card_samples.valid())
    (source / "forum.yaml").write_text(card_samples.valid(name="forum", title="Forum"))
    out = StringIO()
    call_command("import_formats", str(source), stdout=out)
    assert "Imported 2 card(s): forum, town-hall" in out.getvalue()
    call_command("export_formats", "--out", str(tmp_path / "out"), stdout=StringIO())
    for name in ("town-hall", "forum"):
        assert (tmp_path / "out" / f"{name}.yaml").read_text() == (source / f"{name}.yaml").read_text()
    # --missing keeps a card edited since (make run's import); --update replaces it.
    format_cards.save_card(
        card_samples.valid(title="Edited"), owner=None, card=FormatCard.objects.get(name="town-hall")
    )
    call_command("import_formats", str(source), "--missing", stdout=StringIO())
    assert FormatCard.objects.get(name="town-hall").title == "Edited"
    call_command("import_formats", str(source), "--update", stdout=StringIO())
    assert FormatCard.objects.get(name="town-hall").title == "Town hall"
    one = StringIO()
    call_command("export_formats", "forum", stdout=one)
    assert one.getvalue() == card_samples.valid(name="forum", title="Forum")


def test_import_formats_refuses_a_bad_folder_whole(tmp_path):
    (tmp_path / "a.yaml").write_text(card_samples.valid())
    (tmp_path / "b.yaml").write_text(card_samples.BROKEN)
    with pytest.raises(CommandError) as refused:
        call_command("import_formats", str(tmp_path), stdout=StringIO())
    lines = str(refused.value).splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == [str(tmp_path / "b.yaml")] * len(card_samples.BROKEN_PROBLEMS)
    assert lines[-1] == "(nothing was imported)"
    assert not FormatCard.objects.exists()


# --- the new-debate form, the engine, the command ------------------------------------------------------------------


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    return user


def test_the_form_offers_usable_cards_after_the_built_ins_and_not_a_stranger_s_private_one(client, owner):
    format_cards.save_card(card_samples.valid(), owner=None)
    stranger = get_user_model().objects.create_user("otto", password="pw")
    format_cards.save_card(card_samples.valid(name="secret", title="Secret protocol"), owner=stranger)
    html = client.get(reverse("debate_new")).content.decode()
    values = re.findall(r'name="format" value="([^"]+)"', html)
    assert values[-1] == "town-hall" and "duel" in values[:-1]
    assert "secret" not in values and "Secret protocol" not in html
    # The card's seats and options, as a built-in's.
    fields = client.get(reverse("debate_new") + "?format=town-hall", HTTP_HX_REQUEST="true").content.decode()
    assert 'name="seat_pro"' in fields and 'name="seat_con"' in fields and "Proponent" in fields


def test_a_refused_card_form_comes_back_with_the_card_chosen_its_disclosure_open_and_the_text_kept(client, owner):
    format_cards.save_card(card_samples.valid(), owner=None)
    closed = client.get(reverse("debate_new")).content.decode()
    assert '<details class="format-cards">' in closed  # a built-in chosen: the cards wait behind their summary
    data = {"format": "town-hall", "topic": "Tea or coffee?", "premise": "Tea wins", "visibility": "private"}
    html = client.post(reverse("debate_new"), data).content.decode()
    assert 'id="error-summary"' in html
    assert '<details class="format-cards" open>' in html
    chosen = re.search(r'<input type="radio" name="format" value="town-hall"[^>]*>', html).group(0)
    assert " checked" in chosen
    assert 'value="Tea or coffee?"' in html and 'value="Tea wins"' in html
    about = re.search(r'aria-describedby="([^"]+)"', chosen).group(1)
    assert re.search(rf'<p class="format-about muted" id="{about}">[^<]+</p>', html)


def test_a_card_debate_from_the_form_snapshots_the_card_and_runs_to_completion(client, owner, personas, llm_server):
    card = format_cards.save_card(card_samples.valid(), owner=owner)
    data = {
        "format": "town-hall",
        "topic": "Tea or coffee?",
        "premise": "",
        "visibility": "private",
        "seat_pro": personas["Ann"],
        "seat_con": personas["Ben"],
        "hold": 0,
    }
    reply = client.post(reverse("debate_new"), data)
    assert reply.status_code == 302, reply.content.decode()[:3000]
    inline.wait_idle()
    debate = Debate.objects.get()
    assert (debate.format, debate.card_source) == ("town-hall", card_samples.valid())
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    # Editing the card later changes nothing in a debate made from it.
    format_cards.save_card(card_samples.valid(title="Renamed"), owner=owner, card=card)
    debate.refresh_from_db()
    assert debate.fmt.title == "Town hall"
    first = Event.objects.filter(debate=debate).exclude(kind__in=["HEADER", "SYSTEM"]).order_by("ordinal").first()
    assert first.prompt == card_samples.first_prompt("Tea or coffee?")
    assert llm_server.requests[0].last_user == card_samples.first_prompt("Tea or coffee?")
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "Town hall" in page and escape(first.content) in page
    markdown = client.get(reverse("debate_export", args=[debate.pk, "md"])).content.decode()
    assert first.content in markdown
    exported = client.get(reverse("debate_export", args=[debate.pk, "json"])).json()
    assert next(e["prompt"] for e in exported["events"] if e["kind"] == "TURN") == first.prompt


def test_a_seat_a_person_may_take_offers_the_person_and_the_personas(client, owner, personas, llm_server):
    """Lincoln-Douglas's debaters may be people: each seat offers "You" and the debaters, on the page and the API."""
    path = Path(settings.BASE_DIR) / "cards" / "lincoln-douglas.yaml"
    format_cards.import_cards([(str(path), path.read_bytes())], owner=None)
    fields = client.get(reverse("debate_new") + "?format=lincoln-douglas", HTTP_HX_REQUEST="true").content.decode()
    aff = fields[fields.index('<select name="seat_aff"') :]
    assert re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', aff[: aff.index("</select>")]) == [
        ("", "— choose a persona —"),
        ("on", "You: take this seat yourself"),
        (str(personas["Ann"]), "Ann (debater)"),
        (str(personas["Ben"]), "Ben (debater)"),
    ]
    data = {"format": "lincoln-douglas", "topic": "Tea or coffee?", "premise": "", "visibility": "private", "hold": 0}
    data |= {"option_questions": 1, "option_word_limit": 0, "seat_judge": personas["Jo"]}
    reply = client.post(reverse("debate_new"), data | {"seat_aff": personas["Ann"], "seat_neg": personas["Ben"]})
    assert reply.status_code == 302, reply.content.decode()[:3000]
    inline.wait_idle()
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert [(s.key, s.name, s.is_human) for s in debate.seats.order_by("order")] == [
        ("aff", "Ann", False),
        ("neg", "Ben", False),
        ("judge", "Jo", False),
    ]
    # The person takes the affirmative: a human seat under their name, the negative a persona.
    reply = client.post(reverse("debate_new"), data | {"seat_aff": "on", "seat_neg": personas["Ben"]})
    assert reply.status_code == 302, reply.content.decode()[:3000]
    mine = Debate.objects.exclude(pk=debate.pk).get()
    assert [(s.key, s.name, s.is_human) for s in mine.seats.order_by("order")][:2] == [
        ("aff", "olive", True),
        ("neg", "Ben", False),
    ]
    services.delete_debate(mine)


def test_the_debate_command_runs_a_card_by_name(personas, llm_server):
    format_cards.save_card(card_samples.valid(), owner=None)
    out = StringIO()
    call_command(
        "debate", "town-hall", "--topic", "Tea or coffee?", "--seat", "pro=Ann", "--seat", "con=Ben", stdout=out
    )
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert debate.card_source == card_samples.valid()
    assert f"debate {debate.pk} completed" in out.getvalue()


def test_an_edited_card_s_next_debate_runs_the_edit_and_the_one_before_keeps_its_own(personas, llm_server):
    """A card's parsed format is kept per process by its text (debates.formats.card.card_format): an edit is a new
    text, so the next debate, here or in any other process, reads the edit, never the card as it was."""
    card = format_cards.save_card(card_samples.valid(), owner=None)
    parsed = format_cards.card_format_of(card)
    assert format_cards.card_format_of(FormatCard.objects.get(pk=card.pk)) is parsed  # parsed once

    def run(topic: str) -> Debate:
        call_command(
            "debate", "town-hall", "--topic", topic, "--seat", "pro=Ann", "--seat", "con=Ben", stdout=StringIO()
        )
        debate = Debate.objects.get(topic=topic)
        assert debate.status == Debate.Status.COMPLETED, debate.error_text
        return debate

    before = run("Tea or coffee?")
    edited = card_samples.valid(title="Town hall, edited").replace("Open the case on", "Make the case for")
    format_cards.save_card(edited, owner=None, card=FormatCard.objects.get(pk=card.pk))
    assert format_cards.card_format_of(FormatCard.objects.get(pk=card.pk)).title == "Town hall, edited"
    after = run("Rain or shine?")
    assert (before.card_source, after.card_source) == (card_samples.valid(), edited)
    assert (before.fmt.title, after.fmt.title) == ("Town hall", "Town hall, edited")
    firsts = [r.last_user for r in llm_server.requests]
    assert firsts[0] == "Open the case on Tea or coffee?." and "Make the case for Rain or shine?." in firsts
    assert "Open the case on Rain or shine?." not in firsts


def test_the_debate_command_names_what_exists_for_an_unknown_format(personas):
    with pytest.raises(CommandError, match="There is no format or card called 'nope'; you may use duel"):
        call_command("debate", "nope", "--topic", "T", stdout=StringIO())


# --- the card's page -----------------------------------------------------------------------------------------------


def test_the_card_page_shows_its_plan_and_its_yaml_escaped(client):
    text = card_samples.valid(description="Two speakers <script>alert(1)</script>")
    format_cards.save_card(text, owner=None)
    html = client.get(reverse("format_detail", args=["town-hall"])).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert escape("Two speakers <script>alert(1)</script>") in html
    assert escape(text) in html
    timeline = re.search(r'<ol class="timeline"[^>]*>(.*?)</ol>', html, re.S).group(1)
    items = re.findall(r'<li class="timeline-call (\w+)[^"]*">(.*?)</li>', timeline, re.S)
    rows = [
        (
            visibility,
            re.search(r'<strong class="who">(.*?)</strong>', item).group(1),
            re.search(r'<span class="label">(.*?)</span>', item).group(1),
            " ".join(re.sub(r"<[^>]+>", " ", re.search(r'<div class="sees">(.*?)</div>', item, re.S).group(1)).split()),
        )
        for visibility, item in items
    ]
    assert rows == [
        ("public", "Proponent", "opening", "Sees: its own earlier calls only"),
        ("public", "Opponent", "reply", "Sees: its own earlier calls only; quotes opening (Proponent)"),
    ]
    assert "exactly 2 LLM calls" in html
    assert re.search(r'href="/formats/"', html)


def test_a_stranger_s_private_card_page_is_a_404(client):
    stranger = get_user_model().objects.create_user("otto", password="pw")
    format_cards.save_card(card_samples.valid(), owner=stranger)
    assert client.get(reverse("format_detail", args=["town-hall"])).status_code == 404
    client.force_login(stranger)
    assert client.get(reverse("format_detail", args=["town-hall"])).status_code == 200


SHIPPED = sorted((Path(__file__).resolve().parents[2] / "cards").glob("*.yaml"))
CALL_KINDS = ["PLAN", "THINK", "TURN", "SCORE", "VERDICT", "INTERNAL"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_each_shipped_card_runs_from_the_command_line_making_the_calls_its_page_counts(path, llm_server):
    call_command("import_formats", str(path.parent), "--missing", stdout=StringIO())
    card = FormatCard.objects.get(name=path.stem)
    fmt = format_cards.card_format_of(card)
    options = {o.name: o.default for o in fmt.option_specs}
    # A persona of the seat's role in every seat a debate at the page's (default) options has, each its own (the
    # transcript tells speakers apart by name); a seat group's seats past its option's default are not among them.
    sitting = fmt.seats_for(options)
    import_personas(
        [
            (f"{s.key}.yaml", f"name: Speaker {s.key}\nrole: {s.role}\npersonality: Speaker {s.key} speaks.\n")
            for s in sitting
        ]
    )
    seats = [arg for s in sitting for arg in ("--seat", f"{s.key}=Speaker {s.key}")]
    out = StringIO()
    call_command("debate", card.name, "--topic", "Should cities ban private cars?", *seats, stdout=out)
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert debate.card_source == path.read_text()
    made = debate.events.filter(kind__in=CALL_KINDS).count()
    assert made == len(llm_server.requests)
    if fmt.fewest_calls(options) == fmt.calls(options):
        assert made == fmt.calls(options)
    else:  # a repeat that may stop early (MAD, when the test server's check says done): fewer calls, and a line
        assert fmt.fewest_calls(options) <= made <= fmt.calls(options)
        assert debate.events.filter(step="stop").exists() == (made < fmt.calls(options))
