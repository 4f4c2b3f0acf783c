"""The batch-wide settings are named for batches; their old tournament names still work, with a deprecation line."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READ = (
    "from django.conf import settings; print(settings.CHAOSLM_BATCH_TICK, settings.CHAOSLM_MAX_RUNNING_BATCH_DEBATES)"
)


def settings_with(**env):
    clean = {k: v for k, v in os.environ.items() if k not in ("CHAOSLM_TOURNAMENT_TICK", "CHAOSLM_MAX_RUNNING_MATCHES")}
    done = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {READ}"],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split(), done.stderr


def test_the_old_names_still_set_the_batch_settings_and_say_they_are_deprecated():
    values, stderr = settings_with(CHAOSLM_TOURNAMENT_TICK="7", CHAOSLM_MAX_RUNNING_MATCHES="3")
    assert values == ["7.0", "3"]
    assert "CHAOSLM_TOURNAMENT_TICK is deprecated: set CHAOSLM_BATCH_TICK instead." in stderr
    assert "CHAOSLM_MAX_RUNNING_MATCHES is deprecated: set CHAOSLM_MAX_RUNNING_BATCH_DEBATES instead." in stderr


def test_the_new_names_win_and_the_defaults_are_unchanged():
    values, stderr = settings_with(CHAOSLM_BATCH_TICK="5", CHAOSLM_TOURNAMENT_TICK="7")
    assert values == ["5.0", "8"]
    assert "(CHAOSLM_BATCH_TICK is set, so CHAOSLM_TOURNAMENT_TICK is ignored)" in stderr
    assert settings_with()[1] == ""
