"""A debate's material beyond its topic (a passage, a question with its candidate answers): given by the form (typed
or from a file), the API and the command line, bounded by CHAOSLM_MAX_MATERIAL, handed to its format, and shown
escaped on its page, its share page and both exports."""

import json
import re
from collections.abc import Sequence
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from debates import transcripts
from debates.formats import registered
from debates.formats.base import PUBLIC, DebateConfig, Format, Plan, Record, SeatSpec, StepBuilder
from debates.models import Debate, Event, Seat
from debates.replay import create_replay
from debates.setup import SeatChoice, create_debate
from personas.models import Persona, import_personas

# Nothing here runs a debate but where a test says so (transaction=True): the runner is handed a debate as its
# transaction commits, and these tests' transactions never do.
pytestmark = pytest.mark.django_db

PASSAGE = "Question: which is older?\nA. The pyramids\nB. Oxford University\n\n<script>alert('x')</script> & more"


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    return user


@pytest.fixture
def personas():
    import_personas(
        [
            ("a.yaml", "name: Ann\nrole: debater\npersonality: Ann argues.\n"),
            ("b.yaml", "name: Ben\nrole: debater\npersonality: Ben argues.\n"),
        ]
    )
    return {p.name: p.pk for p in Persona.objects.all()}


def form_data(personas, **changes):
    data = {
        "format": "duel",
        "topic": "Which is older?",
        "premise": "",
        "visibility": "private",
        "seat_a": personas["Ann"],
        "seat_b": personas["Ben"],
        "seat_judge": "",
        "option_turns": 2,
        "option_word_limit": 0,
    }
    data.update(changes)
    return data


def test_the_form_stores_typed_material_with_its_line_ends_as_typed(client, owner, personas):
    page = client.get(reverse("debate_new")).content.decode()
    assert 'enctype="multipart/form-data"' in page and '<textarea name="material"' in page
    assert "up to 50,000 characters" in page
    response = client.post(reverse("debate_new"), form_data(personas, material=PASSAGE.replace("\n", "\r\n")))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Debate.objects.get().material == PASSAGE


@pytest.mark.parametrize("name", ["case.txt", "case.MD"])
def test_the_form_reads_material_from_a_utf8_text_file(client, owner, personas, name):
    upload = SimpleUploadedFile(name, ("\ufeff" + "Exhibit A: the ledger, dated 1874 — signed.\n").encode())
    response = client.post(reverse("debate_new"), form_data(personas, material_file=upload))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Debate.objects.get().material == "Exhibit A: the ledger, dated 1874 — signed."


@pytest.mark.parametrize(
    ("upload", "typed", "message"),
    [
        (
            SimpleUploadedFile("case.txt", "Exhibit".encode("utf-16")),
            "",
            "case.txt is not UTF-8 text (byte 1 is not UTF-8): save it as UTF-8 and choose it again.",
        ),
        (SimpleUploadedFile("case.pdf", b"%PDF-1.4"), "", "Choose a .txt or .md file: case.pdf is neither."),
        (
            SimpleUploadedFile("case.txt", b"Exhibit"),
            "Typed too",
            "Give the material in the box or as a file, not both.",
        ),
        (
            SimpleUploadedFile("case.txt", b"x" * 50_001),
            "",
            "The material may be at most 50,000 characters; this is 50,001.",
        ),
    ],
)
def test_a_refused_file_says_why_and_keeps_what_was_typed(client, owner, personas, upload, typed, message):
    response = client.post(
        reverse("debate_new"), form_data(personas, topic="Kept topic", material=typed, material_file=upload)
    )
    html = response.content.decode()
    assert response.status_code == 200 and not Debate.objects.exists()
    assert f'<a href="#id_material_file">Or the material from a file: {message}</a>' in html
    assert 'value="Kept topic"' in html
    assert f">\n{typed}</textarea>" in html


def test_material_past_the_bound_is_refused_in_the_box_and_kept_there(client, owner, personas, settings):
    settings.CHAOSLM_MAX_MATERIAL = 20
    response = client.post(reverse("debate_new"), form_data(personas, material="An overlong <b>passage</b>."))
    html = response.content.decode()
    assert response.status_code == 200 and not Debate.objects.exists()
    assert "Material: The material may be at most 20 characters; this is 27." in html
    assert ">\nAn overlong &lt;b&gt;passage&lt;/b&gt;.</textarea>" in html


def test_the_service_holds_the_bound_for_every_caller(owner, personas):
    with pytest.raises(Exception, match=r"The material may be at most 50,000 characters; this is 50,001\."):
        create_debate(
            format_name="duel",
            topic="T",
            material="x" * 50_001,
            seats={"a": SeatChoice(Persona.objects.get(name="Ann")), "b": SeatChoice(Persona.objects.get(name="Ben"))},
        )
    assert not Debate.objects.exists()


def shown_debate(owner, **fields):
    debate = Debate.objects.create(
        topic="Which is older?", format="duel", owner=owner, status="running", material=PASSAGE, **fields
    )
    ada = Seat.objects.create(debate=debate, key="a", role="debater", side="for", name="Ada", order=0)
    Seat.objects.create(debate=debate, key="b", role="debater", side="against", name="Bob", order=1)
    Event.objects.create(debate=debate, ordinal=0, kind="HEADER", content=debate.topic)
    Event.objects.create(debate=debate, ordinal=2, seat=ada, kind="TURN", step="opening", content="The pyramids.")
    return debate


ESCAPED = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more"


def material_section(html: str) -> str:
    return html.split('<details class="material panel" id="material">')[1].split("</details>")[0]


def test_the_page_and_the_share_page_show_the_material_escaped_and_folded_above_the_transcript(client, owner):
    debate = shown_debate(owner, visibility=Debate.Visibility.UNLISTED)
    for url in (reverse("debate_detail", args=[debate.pk]), reverse("debate_share", args=[debate.share_token])):
        html = client.get(url).content.decode()
        section = material_section(html)
        assert section.startswith("<summary>Material</summary>")
        assert "Question: which is older?\nA. The pyramids\nB. Oxford University" in section
        assert ESCAPED in section and "<script>alert" not in html
        assert html.index('id="material"') < html.index('id="transcript"')
        client.logout()
    plain = Debate.objects.create(topic="No material", format="duel", owner=owner)
    client.force_login(owner)
    assert 'id="material"' not in client.get(reverse("debate_detail", args=[plain.pk])).content.decode()


def test_both_exports_carry_the_material(owner):
    debate = shown_debate(owner)
    assert json.loads(transcripts.as_json(debate))["material"] == PASSAGE
    markdown = transcripts.as_markdown(debate)
    # Folded, and fenced so a Markdown reader shows it as written: no markup, no HTML run.
    assert f"<details><summary>Material</summary>\n\n```text\n{PASSAGE}\n```\n\n</details>\n" in markdown
    assert markdown.index("Material") < markdown.index("The pyramids.")
    debate.material = "A fence inside: ```python\nprint(1)\n```"
    assert f"````text\n{debate.material}\n````" in transcripts.as_markdown(debate)


@pytest.mark.django_db(transaction=True)
def test_the_command_line_takes_material_as_text_or_from_a_file(owner, personas, tmp_path, llm_server):
    common = ["duel", "--topic", "Which is older?", "--a", "Ann", "--b", "Ben", "--turns", "2", "--owner", "olive"]
    call_command("debate", *common, "--material", "A. The pyramids\nB. Oxford", stdout=StringIO())
    assert Debate.objects.get().material == "A. The pyramids\nB. Oxford"
    path = tmp_path / "case.md"
    path.write_text("# The case\n\nExhibit A.", encoding="utf-8")
    call_command("debate", *common, "--material-file", str(path), stdout=StringIO())
    assert Debate.objects.order_by("-pk").first().material == "# The case\n\nExhibit A."
    path.write_bytes("Exhibit".encode("utf-16"))
    with pytest.raises(CommandError, match=r"case\.md is not UTF-8 text \(byte 1 is not UTF-8\)"):
        call_command("debate", *common, "--material-file", str(path))
    with pytest.raises(CommandError, match=r"no-such\.txt: No such file or directory"):
        call_command("debate", *common, "--material-file", str(tmp_path / "no-such.txt"))
    with pytest.raises(CommandError, match="The material may be at most 50,000 characters; this is 50,001"):
        call_command("debate", *common, "--material", "x" * 50_001)
    assert Debate.objects.count() == 2


READ = "Answer the question from the material.\n{material}"


class Reader(Format):
    """One call whose prompt quotes the debate's material: what a format receives of it."""

    name = "material_reader"
    title = "Material reader"
    description = "Reads the material."
    scores_turns = False
    listed = False
    seat_specs = (SeatSpec("a", "debater", "Reader"),)

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        done = {r.ordinal for r in records}
        if 0 not in done:
            return Plan(steps=(self.header(config),))
        if 1 in done:
            return Plan(finished=True)
        build = StepBuilder(config, records)
        build.call("a", 1, "TURN", "answer", READ.format(material=config.material), visibility=PUBLIC)
        return Plan(steps=tuple(build.steps))


@pytest.mark.django_db(transaction=True)
def test_the_format_receives_the_material_and_a_replay_keeps_it(owner, personas, llm_server, run_to_rest):
    with registered(Reader()):
        debate = create_debate(
            format_name="material_reader",
            topic="Which is older?",
            material=PASSAGE,
            seats={"a": SeatChoice(Persona.objects.get(name="Ann"))},
            owner=owner,
        )
        llm_server.configure(rules=[{"match": re.escape("Answer the question"), "reply": "A."}])
        debate = run_to_rest(debate.pk)
        assert debate.status == Debate.Status.COMPLETED, debate.error_text
        assert debate.events.get(ordinal=1).prompt == READ.format(material=PASSAGE)
    duel = shown_debate(owner)
    duel.status = Debate.Status.COMPLETED
    duel.save()
    bob = duel.seats.get(key="b")
    Event.objects.create(debate=duel, ordinal=3, seat=bob, kind="TURN", step="opening", content="Oxford.")
    import_personas([("j.yaml", "name: Jo\nrole: judge\npersonality: Jo judges.\n")])
    replay = create_replay(duel, SeatChoice(Persona.objects.get(name="Jo")), owner=owner)
    assert replay.material == PASSAGE
