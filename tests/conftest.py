import os

import pytest

from chaoslm.llm.testserver import TestLLMServer

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture(scope="session")
def _llm_server_process():
    with TestLLMServer() as server:
        yield server


@pytest.fixture
def llm_server(_llm_server_process, settings, tmp_path):
    """The OpenAI-compatible test server, reset, and made the default endpoint with short timeouts."""
    server = _llm_server_process
    server.reset()
    settings.OPENAI_BASE_URL = server.url
    settings.OPENAI_API_KEY = "test-key"
    settings.CHAOSLM_DEFAULT_MODEL = "test-model"
    settings.CHAOSLM_LLM_TIMEOUT = 2.0
    settings.CHAOSLM_LLM_BACKOFF = 0.01
    settings.CHAOSLM_TRANSCRIPTS_DIR = tmp_path / "transcripts"
    return server


def require(condition: bool, what: str) -> None:
    """Skip a test whose prerequisite is missing, except under CI, where that is a failure."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{what} is required under CI but missing")
    pytest.skip(f"{what} is missing")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Real hashing is slow by design; tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
