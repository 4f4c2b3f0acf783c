import asyncio
import os

import pytest
from django.contrib.auth import get_user_model

from chaoslm.llm.testserver import TestLLMServer

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
# `make test` runs the engine suite a second time on PostgreSQL with this set to "celery".
ENGINE_RUNNER = os.environ.get("CHAOSLM_TEST_ENGINE_RUNNER", "inline")
# Under pytest-xdist (`make test` runs `pytest -n`): this process's worker number, else None.
_WORKER_ID = os.environ.get("PYTEST_XDIST_WORKER")
XDIST_WORKER = int(_WORKER_ID.removeprefix("gw")) if _WORKER_ID else None


# The suites that run the embedded model (llama.cpp, CPU-bound, threads of its own). Run side by side on two
# cores, their servers starved each other: one duel took ten minutes instead of one. So they run one after
# the other in one xdist process, and first, being the suite's longest unit of work.
SMOLLM2_FILES = {
    "tests/llm/test_local_model.py",
    "tests/llm/test_local_model_serve.py",
    "tests/llm/test_local_model_supervision.py",
    "tests/llm/test_local_model_together.py",
}
# Its tests share no fixture, and run together (all sixteen benches) they were a single unit of work of nine
# minutes on CI: the suite's tail.
BENCH_FILE = "tests/core/test_benches.py"
# The units of work that take minutes each (servers, workers and browsers started and killed), in this order, are
# handed out before the many files of quick tests. Handed out by size, as xdist does by default, the files of one
# slow test came last, and the run waited minutes at its end for one of them on one worker.
SLOW_FIRST = ("embedded-model", "tests/scaleout/", BENCH_FILE, "tests/browser/", "tests/llm/")


def unit_of_work(nodeid: str) -> str:
    """The unit a test is scheduled in: its file, except that each bench is one, and the embedded model's files one."""
    path = nodeid.split("::", 1)[0]
    if path == BENCH_FILE:
        return nodeid  # each bench is a subprocess of its own: spread them over the workers
    return "embedded-model" if path in SMOLLM2_FILES else path


def _slowness(unit: str) -> int:
    return next((rank for rank, prefix in enumerate(SLOW_FIRST) if unit.startswith(prefix)), len(SLOW_FIRST))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(unit_of_work(item.nodeid), []).append(item)
    slow = sorted((unit for unit in units if _slowness(unit) < len(SLOW_FIRST)), key=_slowness)
    quick = sorted((unit for unit in units if _slowness(unit) == len(SLOW_FIRST)), key=lambda u: -len(units[u]))
    # xdist sends a worker its next unit while it holds two tests or fewer (a test starts only once the one after it
    # is there). A slow unit of one or two tests would have the next slow unit queued behind it on the same worker:
    # it is followed by a short file of three or more instead, which fills that place.
    fillers = [unit for unit in reversed(quick) if len(units[unit]) >= 3]
    order = []
    for unit in slow:
        order.append(unit)
        if len(units[unit]) <= 2 and fillers:
            filler = fillers.pop(0)
            quick.remove(filler)
            order.append(filler)
    # Within a unit, file by file: a module's fixtures (a model server, a browser) start once, not at each return.
    files = {path: index for index, path in enumerate(dict.fromkeys(item.nodeid.split("::", 1)[0] for item in items))}
    items[:] = [
        item
        for unit in order + quick
        for item in sorted(units[unit], key=lambda item: files[item.nodeid.split("::", 1)[0]])
    ]


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadFileScheduling

    if config.getoption("dist") != "loadfile":
        return None
    # In the order the collection above gives, not re-sorted by each unit's number of tests.
    config.option.loadscopereorder = False

    class OneModelAtATime(LoadFileScheduling):
        """`--dist loadfile`, except that the embedded model's files are one unit of work, and each bench one."""

        def _split_scope(self, nodeid: str) -> str:
            return unit_of_work(nodeid)

    return OneModelAtATime(config, log)


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


@pytest.fixture
def embedded(llm_server, settings, monkeypatch):
    """No endpoint configured: the embedded model's, answered by the test server at its host and port."""
    # Here: a model module cannot be imported before pytest-django has set Django up.
    from chaoslm.llm import pace
    from chaoslm.llm.endpoints import default_endpoint

    monkeypatch.setattr(pace, "_prompt_rates", {})
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_MODEL = ""
    settings.CHAOSLM_LOCAL_MODEL_HOST = "127.0.0.1"
    settings.CHAOSLM_LOCAL_MODEL_PORT = llm_server.port
    assert default_endpoint().base_url == llm_server.url
    return settings


def require(condition: bool, what: str) -> None:
    """Skip a test whose prerequisite is missing, except under CI, where that is a failure."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{what} is required under CI but missing")
    pytest.skip(f"{what} is missing")


@pytest.fixture(autouse=True)
def _fresh_cache():
    # The rate limits count in process memory in tests (chaoslm/limits.py), the polls in the cache: each test
    # starts from zero. Cleared after too: a poll's push at the end of its interval (audience/votes.py) then
    # finds nothing held back and reads nothing from the next test's database.
    from django.core.cache import cache

    from chaoslm import limits

    cache.clear()
    limits.reset()
    yield
    cache.clear()
    limits.reset()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Real hashing is slow by design; tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session")
def _celery_worker():
    """A real Celery worker (solo pool) in this process, on the Redis broker the settings name."""
    from celery.contrib.testing.worker import start_worker
    from django.conf import settings

    from config.celery import app

    require(settings.CELERY_BROKER_URL.startswith("redis://"), "Redis (REDIS_URL) for the Celery engine run")
    # Results only so a test can wait for its task; the product does not use them.
    app.conf.result_backend = settings.CELERY_BROKER_URL
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        yield


@pytest.fixture
def run_to_rest(request):
    """Run a debate until it rests (completed, error, waiting for a person), as the runner would.

    Inline: the engine on a loop of its own. With CHAOSLM_TEST_ENGINE_RUNNER=celery: the advance task,
    enqueued on Redis and run by a Celery worker, then the debate as the worker left it.
    """
    from debates.engine import run_debate
    from debates.models import Debate

    if ENGINE_RUNNER != "celery":
        return lambda debate_id: asyncio.run(run_debate(debate_id))
    request.getfixturevalue("_celery_worker")
    from debates.tasks import advance_debate

    def run(debate_id: int) -> Debate:
        advance_debate.delay(debate_id).get(timeout=120)
        return Debate.objects.get(pk=debate_id)

    return run


@pytest.fixture
def people():
    """An owner, another user and a staff user: who may see and do what."""
    User = get_user_model()
    return {
        "owner": User.objects.create_user("olive", password="pw-olive-123"),
        "other": User.objects.create_user("otto", password="pw-otto-123"),
        "staff": User.objects.create_user("stella", password="pw-stella-123", is_staff=True),
    }
