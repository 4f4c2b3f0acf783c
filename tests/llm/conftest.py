"""The embedded SmolLM2 model, started once per test module that asks for it; and a port of a test's own for the
embedded model's supervisor."""

import pytest

from chaoslm.llm import Endpoint, local_model
from tests.llm.smollm2 import free_port, require_smollm2


@pytest.fixture(scope="module")
def smollm2():
    require_smollm2()
    port = free_port()
    process = local_model.start(port=port, wait=120)
    yield f"http://127.0.0.1:{port}/v1"
    process.terminate()
    process.wait(10)


@pytest.fixture
def local_endpoint(smollm2, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_MODEL_PORT = int(smollm2.rsplit(":", 1)[1].split("/")[0])
    return Endpoint(name="smollm2", base_url=smollm2, api_key="", model=local_model.MODEL_ALIAS)


@pytest.fixture
def local_port(settings):
    """The embedded model is the default endpoint, on a port of this test's own; what its supervisor leaves in the
    temp directory for that port (its log, its last start's time) is removed after."""
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LLM_TIMEOUT = 5.0
    settings.CHAOSLM_LLM_BACKOFF = 0.05
    settings.CHAOSLM_LOCAL_MODEL_PORT = free_port()
    yield settings.CHAOSLM_LOCAL_MODEL_PORT
    local_model.log_path().unlink(missing_ok=True)
    local_model.local_status.last_start_path(settings.CHAOSLM_LOCAL_MODEL_PORT).unlink(missing_ok=True)
