"""Personas: YAML parsing with field-level errors, the admin's import/export/duplicate/preview, the command."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from personas.models import Persona, Provider, import_personas
from personas.yaml_io import PersonaYAMLError, parse_personas

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "personas" / "samples"

GOOD = """name: Tess
role: debater
personality: A careful thinker.
position: For the motion.
instructions: Be brief.
temperature: 0.5
max_tokens: 200
"""

OTHER = GOOD.replace("Tess", "Gail")

BOMB = """a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
name: Bomb
"""

BAD_CASES = {
    "syntax": ("name: [unclosed\nrole: debater\n", "bad.yaml: is not valid YAML (line"),
    "wrong_type_temperature": (GOOD.replace("0.5", "hot"), "bad.yaml: temperature: must be a number from 0 to 2"),
    "wrong_type_name": (GOOD.replace("name: Tess", "name: [1, 2]"), "bad.yaml: name: must be text, not list"),
    "max_tokens_float": (GOOD.replace("200", "2.5"), "bad.yaml: max_tokens: must be a whole number"),
    "unknown_key": (GOOD + "mood: grumpy\n", "bad.yaml: mood: unknown field"),
    "formats_not_a_list": (GOOD + "formats: panel\n", "bad.yaml: formats: must be a list of at most 20 format names"),
    "formats_not_a_name": (GOOD + "formats: [Panel!]\n", "bad.yaml: formats: must name formats"),
    "missing_personality": ("name: Tess\nrole: debater\n", "bad.yaml: personality: is required"),
    "missing_role": ("name: Tess\npersonality: x\n", "bad.yaml: role: is required"),
    "bad_role": (GOOD.replace("role: debater", "role: jester"), "bad.yaml: role: must be one of"),
    "not_a_mapping": ("- just\n- a list\n", "a persona must be a mapping"),
    "bomb": (BOMB, "anchors and aliases are not allowed"),
    "huge": ("name: x\nrole: debater\npersonality: " + "a" * (10 * 1024 * 1024) + "\n", "persona files may be at most"),
    "unknown_provider": (GOOD + "provider: Nowhere\n", "bad.yaml: provider: no provider is named 'Nowhere'"),
}


@pytest.fixture
def staff(client, django_user_model):
    user = django_user_model.objects.create_superuser("boss", password="pw-boss-123")
    client.force_login(user)
    return client


def test_parse_keeps_every_field():
    (spec,) = parse_personas(GOOD, "good.yaml")
    assert (spec.name, spec.role, spec.temperature, spec.max_tokens) == ("Tess", "debater", 0.5, 200)
    assert spec.system_prompt() == "A careful thinker.\n\nFor the motion.\n\nBe brief."


def test_formats_are_kept_through_import_and_export():
    (persona,) = import_personas([("m.yaml", "name: M\nrole: moderator\npersonality: Moderates.\nformats: [panel]\n")])
    assert persona.formats == ["panel"] and persona.spec().formats == ("panel",)
    assert "formats:\n- panel\n" in persona.yaml
    assert persona.offered_in("panel") and not persona.offered_in("standard")


def test_judge_prompt_is_personality_and_criteria():
    (spec,) = parse_personas("name: J\nrole: judge\npersonality: Fair.\njudging_criteria: Logic first.\n", "j.yaml")
    assert spec.system_prompt() == "Fair.\n\nLogic first."
    assert spec.system_prompt("debater") == "Fair."


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_yaml_is_refused_with_a_message_naming_file_and_field(case):
    text, message = BAD_CASES[case]
    with pytest.raises(PersonaYAMLError) as caught:
        import_personas([("good.yaml", OTHER), ("bad.yaml", text)])
    assert message in str(caught.value)
    assert not Persona.objects.exists()  # the good file was not imported either


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_admin_upload_shows_the_error_and_imports_nothing(staff, case):
    text, message = BAD_CASES[case]
    files = [SimpleUploadedFile("good.yaml", OTHER.encode()), SimpleUploadedFile("bad.yaml", text.encode())]
    response = staff.post(reverse("admin:personas_persona_import"), {"files": files})
    assert response.status_code == 200
    html = response.content.decode()
    assert "errorlist" in html
    from django.utils.html import escape

    assert escape(message) in html
    assert not Persona.objects.exists()


def test_admin_imports_several_files_at_once(staff):
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(SAMPLES.glob("*.yaml"))]
    response = staff.post(reverse("admin:personas_persona_import"), {"files": files}, follow=True)
    assert response.status_code == 200
    assert Persona.objects.count() == len(files) >= 6
    assert "Imported" in response.content.decode()
    roles = set(Persona.objects.values_list("role", flat=True))
    assert {"debater", "judge", "moderator", "analyzer", "solver"} <= roles


def test_export_then_import_gives_identical_personas(staff):
    Provider.objects.create(name="Local", base_url="http://localhost:11434/v1", default_model="llama3")
    call_command("import_personas", str(SAMPLES))
    extra = GOOD.replace("Tess", 'Quote "Q" Tess') + "provider: Local\nmodel: llama3\n"
    multiline = "|\n  Line one: with a colon.\n\n  Line three, after a blank line."
    import_personas([("extra.yaml", extra.replace("A careful thinker.", multiline))])
    before = [p.spec() for p in Persona.objects.order_by("name")]
    ids = list(Persona.objects.values_list("pk", flat=True))
    response = staff.post(
        reverse("admin:personas_persona_changelist"), {"action": "export_yaml", "_selected_action": ids}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/yaml"
    exported = response.content
    Persona.objects.all().delete()
    import_personas([("personas.yaml", exported)])
    assert [p.spec() for p in Persona.objects.order_by("name")] == before


def test_import_refuses_existing_names_unless_updating():
    import_personas([("a.yaml", GOOD)])
    with pytest.raises(PersonaYAMLError, match="a persona named 'Tess' already exists"):
        import_personas([("a.yaml", GOOD.replace("Be brief.", "Be long."))])
    import_personas([("a.yaml", GOOD.replace("Be brief.", "Be long."))], update=True)
    assert Persona.objects.get().instructions == "Be long."


def test_editing_yaml_in_the_admin_shows_field_errors_and_keeps_the_persona(staff):
    (persona,) = import_personas([("a.yaml", GOOD)])
    url = reverse("admin:personas_persona_change", args=[persona.pk])
    response = staff.post(url, {"yaml": GOOD.replace("0.5", "9")})
    assert response.status_code == 200
    assert "YAML: temperature: must be a number from 0 to 2, not 9" in response.content.decode()
    persona.refresh_from_db()
    assert persona.temperature == 0.5
    response = staff.post(url, {"yaml": GOOD.replace("Be brief.", "Be vivid.")})
    assert response.status_code == 302
    persona.refresh_from_db()
    assert persona.instructions == "Be vivid."


def test_change_page_previews_the_exact_system_prompt(staff):
    (persona,) = import_personas([("a.yaml", GOOD.replace("A careful thinker.", "Careful <b>thinker</b>."))])
    html = staff.get(reverse("admin:personas_persona_change", args=[persona.pk])).content.decode()
    assert "Careful &lt;b&gt;thinker&lt;/b&gt;.\n\nFor the motion.\n\nBe brief." in html


def test_list_search_and_filter(staff):
    call_command("import_personas", str(SAMPLES))
    url = reverse("admin:personas_persona_changelist")
    html = staff.get(url, {"role__exact": "judge"}).content.decode()
    assert "Judge Ines Okafor" in html and "Ada Sterling" not in html
    html = staff.get(url, {"q": "union organiser"}).content.decode()
    assert "Marcus Vale" in html and "Ada Sterling" not in html


def test_duplicate_action(staff):
    (persona,) = import_personas([("a.yaml", GOOD)])
    staff.post(reverse("admin:personas_persona_changelist"), {"action": "duplicate", "_selected_action": [persona.pk]})
    copy = Persona.objects.get(name="Tess (copy)")
    assert copy.spec().system_prompt() == persona.spec().system_prompt()


def test_only_staff_reach_the_import_page(client, django_user_model):
    user = django_user_model.objects.create_user("plain", password="pw-plain-123")
    client.force_login(user)
    response = client.get(reverse("admin:personas_persona_import"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_import_command_reports_errors_without_importing(tmp_path):
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD.replace("Tess", "Uma") + "colour: red\n")
    with pytest.raises(CommandError, match=r"b\.yaml: colour: unknown field.*\(nothing was imported\)"):
        call_command("import_personas", str(tmp_path))
    assert not Persona.objects.exists()


def make_run_commands() -> list[list[str]]:
    """The `manage.py` commands `make run` runs on every start, as argument lists."""
    lines = (ROOT / "Makefile").read_text().split("\nrun:")[1].split("\n\n")[0].splitlines()[1:]
    return [line.split("manage.py", 1)[1].split() for line in lines if "manage.py" in line]


def test_make_run_keeps_a_persona_edited_in_the_admin_and_imports_the_missing(staff, tmp_path, monkeypatch):
    imports = [args for args in make_run_commands() if args[0] == "import_personas"]
    assert imports == [["import_personas", "personas/samples/", "--missing"]]
    monkeypatch.chdir(ROOT)
    call_command(*imports[0], stdout=StringIO())  # the first start
    ada = Persona.objects.get(name="Ada Sterling")
    url = reverse("admin:personas_persona_change", args=[ada.pk])
    assert "temperature: 0.8" in ada.yaml
    assert staff.post(url, {"yaml": ada.yaml.replace("temperature: 0.8", "temperature: 1.7")}).status_code == 302
    Persona.objects.filter(name="Marcus Vale").delete()
    out = StringIO()
    call_command(*imports[0], stdout=out)  # the next start
    assert Persona.objects.get(name="Ada Sterling").temperature == 1.7
    assert Persona.objects.filter(name="Marcus Vale").exists()
    assert "Imported 1 persona(s): Marcus Vale; those already there are kept as they are" in out.getvalue()
    call_command("import_personas", "personas/samples/", "--update", stdout=StringIO())  # on request, files win
    assert Persona.objects.get(name="Ada Sterling").temperature != 1.7


def test_ensure_admin_says_how_to_set_a_new_password(django_user_model):
    assert ["ensure_admin"] in make_run_commands()
    first, second = StringIO(), StringIO()
    call_command("ensure_admin", "--username", "root", stdout=first)
    call_command("ensure_admin", "--username", "root", stdout=second)
    assert "Admin login created: username root" in first.getvalue()
    assert "its password is unchanged" in second.getvalue()
    assert "uv run python manage.py changepassword root" in second.getvalue()


def test_the_admin_reports_every_error_in_the_yaml_at_once(staff):
    (persona,) = import_personas([("a.yaml", GOOD)])
    url = reverse("admin:personas_persona_change", args=[persona.pk])
    bad = GOOD.replace("0.5", "hot").replace("200", "0") + "colour: red\n"
    html = staff.post(url, {"yaml": bad}).content.decode()
    assert "YAML: colour: unknown field" in html
    assert "YAML: temperature: must be a number from 0 to 2, not &#x27;hot&#x27;" in html
    assert "YAML: max_tokens: must be a whole number from 1 to 32768, not 0" in html
    persona.refresh_from_db()
    assert persona.temperature == 0.5 and persona.yaml == GOOD


def test_a_file_and_a_folder_report_every_error_at_once(tmp_path):
    with pytest.raises(PersonaYAMLError) as raised:
        parse_personas("name: Tess\nrole: jester\ncolour: red\ntemperature: hot\n", "bad.yaml")
    assert [str(e) for e in raised.value.errors] == [
        "bad.yaml: colour: unknown field; the known fields are formats, instructions, judging_criteria, max_tokens, "
        "model, name, personality, position, provider, role, temperature",
        "bad.yaml: role: must be one of debater, judge, moderator, analyzer, solver, chat, not 'jester'",
        "bad.yaml: temperature: must be a number from 0 to 2, not 'hot'",
        "bad.yaml: personality: is required",
    ]
    (tmp_path / "a.yaml").write_text(GOOD.replace("0.5", "hot"))
    (tmp_path / "b.yaml").write_text(GOOD.replace("Tess", "Uma") + "colour: red\n")
    with pytest.raises(CommandError) as raised:
        call_command("import_personas", str(tmp_path))
    assert "a.yaml: temperature: must be a number" in str(raised.value)
    assert "b.yaml: colour: unknown field" in str(raised.value)
    assert not Persona.objects.exists()


def test_the_yaml_help_text_names_the_fields_and_the_fields_below_show_them(staff):
    (persona,) = import_personas([("a.yaml", GOOD)])
    html = staff.get(reverse("admin:personas_persona_change", args=[persona.pk])).content.decode()
    assert "The read-only fields below are read from it when you save." in html
    assert "judging_criteria, model, provider, temperature (0 to 2), max_tokens (1 to 32768), formats" in html
    below = html.split('id="id_yaml"')[1]
    for label, value in (("Name", "Tess"), ("Role hint", "debater"), ("Temperature", "0.5"), ("Max tokens", "200")):
        assert f"<label>{label}:</label>" in below
        assert f'<div class="readonly">{value}</div>' in below


@pytest.mark.django_db
def test_the_admins_persona_page_styles_its_prompt_preview_from_a_file_not_inline(admin_client):
    """The site's content security policy refuses inline styles: the preview's look comes from static CSS."""
    from personas.models import import_personas

    (persona,) = import_personas([("p.yaml", "name: Pat\nrole: debater\npersonality: Pat argues.\n")])
    html = admin_client.get(f"/admin/personas/persona/{persona.pk}/change/").content.decode()
    assert "<pre class='prompt-preview'>Pat argues.</pre>" in html
    assert 'href="/static/css/admin.css"' in html
    preview = html.split("prompt-preview")[1].split("</pre>")[0]
    assert "style=" not in preview


def test_a_users_own_budget_wins_over_the_default_and_an_empty_one_means_none(django_user_model, settings):
    """The core's budget rules read a user's Budget through the personas app's registration (chaoslm/costs.py)."""
    from decimal import Decimal

    from chaoslm import costs
    from personas.models import Budget

    settings.CHAOSLM_DEFAULT_MONTHLY_BUDGET = "5"
    olive = django_user_model.objects.create_user("olive", password="pw")
    assert costs.monthly_budget(olive) == Decimal("5")
    budget = Budget.objects.create(user=olive, monthly=Decimal("0.25"))
    assert costs.monthly_budget(olive) == Decimal("0.25")
    budget.monthly = None
    budget.save()
    assert costs.monthly_budget(olive) is None
