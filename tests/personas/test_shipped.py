"""What ships in personas/ and cards/ works together on a fresh install: every format the new-debate form offers
can be started with the sample personas alone, and the user guide's tournament example runs as written."""

from pathlib import Path

import pytest
import yaml
from django import forms
from django.contrib.auth import get_user_model
from django.core.management import call_command

from debates.format_cards import formats_for
from debates.forms import NewDebateForm
from experiments.spec import from_mapping as experiment_spec
from tournaments.spec import read_spec

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


@pytest.fixture
def shipped():
    call_command("import_personas", str(ROOT / "personas" / "samples"), verbosity=0)
    call_command("import_formats", str(ROOT / "cards"), verbosity=0)
    return get_user_model().objects.create_user("newbie", password="pw-newbie-123")


def test_every_format_on_the_form_can_be_started_with_the_sample_personas(shipped):
    cannot = {}
    for fmt in formats_for(shipped):
        blank = NewDebateForm(format_name=fmt.name, user=shipped)
        data = {"topic": "Should cities ban private cars?", "format": fmt.name, "visibility": "private", "hold": 0}
        data |= {bound.name: blank.fields[bound.name].initial for bound in blank.option_fields()}
        seated: set[str] = set()
        for name, field in blank.fields.items():
            # Each required persona seat takes a sample persona not already seated, as a newcomer would choose.
            if name.startswith("seat_") and isinstance(field, forms.ModelChoiceField) and field.required:
                free = [p for p in field.queryset if p.name not in seated]
                if free:
                    seated.add(free[0].name)
                    data[name] = free[0].pk
        form = NewDebateForm(data, format_name=fmt.name, user=shipped)
        if not form.is_valid():
            cannot[fmt.name] = [error for errors in form.errors.values() for error in errors]
    assert cannot == {}


def test_the_user_guides_tournament_example_reads_as_written_wherever_it_is_saved(shipped, tmp_path):
    guide = (ROOT / "docs" / "user-guide.md").read_text()
    block = next(b for b in guide.split("```yaml\n")[1:] if b.startswith("name: Spring league")).split("```")[0]
    # Saved outside the repository, as a person would save it: nothing in it may hang on the folder it is in.
    saved = tmp_path / "league.yaml"
    saved.write_text(block)

    spec = read_spec(saved)

    assert [c.spec.name for c in spec.debaters] == ["Ada Sterling", "Marcus Vale", "Priya Raman"]
    assert [c.spec.name for c in spec.judges] == ["Judge Ines Okafor"]
    assert len(spec.questions) == 2


def test_the_user_guides_experiment_example_reads_as_written(shipped):
    guide = (ROOT / "docs" / "user-guide.md").read_text()
    block = next(b for b in guide.split("```yaml\n")[1:] if b.startswith("name: Does debate help?")).split("```")[0]

    spec = experiment_spec(yaml.safe_load(block), ROOT, "docs/user-guide.md")

    assert [c.spec.name for c in spec.debaters] == ["Ada Sterling", "Marcus Vale"]
    assert len(spec.questions) == 12
