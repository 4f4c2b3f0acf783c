"""The import layers (docs/architecture.md): the core imports no app, apps do not import each other, the pure
modules load no Django, and no first-party module imports itself back, at module level or inside a function."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from batches.kinds import KINDS

ROOT = Path(__file__).resolve().parents[2]
# Each package's rank (docs/architecture.md): a module imports only its own package and those of lower rank.
# `personas` (providers, personas, budgets) sits on the core and under every app that seats a persona.
# `audience` (a debate's poll, what every arena's vote shares) builds on debates and under batches, whose arenas use it.
# `accounts`, a person's own pages (login, spend, API tokens and webhooks), shows the API's tokens and webhooks.
# `config`, the wiring (settings, URLconf, ASGI, websocket routes, Celery), gathers every app, so it is on top.
RANKS = {
    "chaoslm": 0,
    "personas": 0.5,
    "debates": 1,
    "rooms": 1,
    "audience": 1.5,
    "batches": 2,
    "tournaments": 3,
    "experiments": 3,
    "comparisons": 3,
    "api": 4,
    "accounts": 4.5,
    "config": 5,
}
PACKAGES = tuple(RANKS)
# The core and the wiring are packages, not apps.
APPS = tuple(package for package in RANKS if package not in ("chaoslm", "config"))
PURE = (
    "debates.formats",
    "rooms.queue",
    "batches.schedule",
    "batches.questions",
    "experiments.questions",
    "experiments.design",
    "comparisons.question_sets",
    "comparisons.arithmetic",
    "comparisons.compare_stats",
    "comparisons.charts",
)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py") if (ROOT / package).is_dir() else ():
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()
# The app of each registered kind of batch (batches/kinds.py: its `BatchKind`'s module's package).
KIND_APPS = sorted({type(kind).__module__.partition(".")[0] for kind in KINDS.values()})


def _imports(name: str, path: Path) -> set[str]:
    """The first-party modules `name` imports anywhere in its text (function-local imports included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from package import module` imports the module; `from module import name`, the module.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(name: str) -> str:
    return name.split(".")[0]


def test_the_core_imports_no_app():
    wrong = {
        (m, i)
        for m, imports in GRAPH.items()
        for i in imports
        if _top(m) == "chaoslm"
        if _top(i) in APPS or _top(i) == "config"
    }
    assert wrong == set()


def _not_down(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The imports that run up the ranks, or sideways between two packages of one rank."""
    return {
        (m, i)
        for m, imports in graph.items()
        for i in imports
        if _top(m) != _top(i) and RANKS[_top(i)] >= RANKS[_top(m)]
    }


def test_every_import_points_down_the_ranks():
    """Nothing imports the wiring either: Django, daphne and Celery name it by its dotted path."""
    assert _not_down(GRAPH) == set()


def test_the_rank_check_sees_imports_up_and_sideways():
    graph = {"chaoslm.a": {"debates.b"}, "debates.b": {"rooms.c", "chaoslm.a"}, "api.d": {"config.urls", "rooms.c"}}
    assert _not_down(graph) == {("chaoslm.a", "debates.b"), ("debates.b", "rooms.c"), ("api.d", "config.urls")}


@pytest.mark.parametrize(
    ("app", "other"),
    [
        ("debates", "rooms"),
        ("rooms", "debates"),
        # Batches build on debates; each kind of batch builds on batches, and not on rooms or on another kind.
        ("debates", "batches"),
        ("rooms", "batches"),
        ("batches", "rooms"),
        *((below, kind) for kind in KIND_APPS for below in ("debates", "rooms", "batches")),
        *((kind, other) for kind in KIND_APPS for other in ("rooms", *KIND_APPS) if other != kind),
    ],
)
def test_apps_do_not_import_each_other(app, other):
    assert {(m, i) for m, imports in GRAPH.items() for i in imports if _top(m) == app and _top(i) == other} == set()


def test_the_api_is_the_top_layer_but_the_account_pages():
    """The JSON API (layer 4) may import every app; nothing imports it but the wiring and the account pages (4.5),
    which show its tokens and webhooks; nothing imports those but the wiring."""
    wrong = {
        (m, i)
        for m, imports in GRAPH.items()
        for i in imports
        if _top(i) == "api" and _top(m) not in ("api", "accounts")
    }
    assert wrong <= {("config.urls", "api.urls")}
    above = {(m, i) for m, imports in GRAPH.items() for i in imports if _top(i) == "accounts" and _top(m) != "accounts"}
    assert above == set()


def test_every_kind_of_batch_is_an_app_above_batches():
    assert KIND_APPS, "no kind of batch registered"
    assert all(RANKS[app] > RANKS["batches"] for app in KIND_APPS)


@pytest.mark.parametrize("kind", KIND_APPS)
def test_both_kinds_of_batch_build_on_batches_which_builds_on_debates(kind):
    """batches sits below tournaments and experiments and above debates: each kind imports it, it imports debates."""
    assert any(_top(i) == "batches" for m, imports in GRAPH.items() if _top(m) == kind for i in imports)
    assert any(_top(i) == "debates" for m, imports in GRAPH.items() if _top(m) == "batches" for i in imports)


@pytest.mark.parametrize("module", PURE)
def test_the_pure_modules_load_no_django(module):
    loaded = subprocess.run(
        [sys.executable, "-c", f"import sys, {module}; print(sorted({{m.split('.')[0] for m in sys.modules}}))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for framework in ("django", "channels", "celery", "asgiref"):
        assert f"'{framework}'" not in loaded


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_first_party_import_cycle():
    assert _cycles(GRAPH) == []


def test_the_cycle_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
