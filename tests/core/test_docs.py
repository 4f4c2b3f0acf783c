"""The documentation a newcomer reads stays true to the code and stands on its own.

- every prompt the protocol pages in docs/protocols/ quote is the one the code sends (the evidence page is
  checked the same way in tests/debates/formats/test_evidence.py);
- docs/settings.md lists every environment variable the product reads;
- every link between the README and the pages of docs/ leads to a file that exists;
- no tracked file points outside the repository, where a person who cloned it has nothing.
"""

import ast
import importlib
import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = ROOT / "docs" / "protocols"

# Module constants that are not prompt texts (NO_REASON and INTRO_SHOWN are what pages show, not what models read).
NOT_PROMPTS = {"PUBLIC", "PRIVATE", "ROUND_ROBIN", "SELECTOR", "PICK", "NO_REASON", "INTRO_SHOWN"}


def prompts(module: ModuleType) -> dict[str, str]:
    """Every upper-case text constant of `module`: its prompts and fixed instruction lines."""
    return {
        name: value
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, str) and name not in NOT_PROMPTS
    }


# Each protocol page: the module whose prompts it quotes, and how many it has (a new prompt goes on its page, and its
# count goes up). A new format's page is one line here.
PAGES = {
    "duel.md": ("debates.formats.duel", 17),
    "scheduling.md": ("debates.formats.moderated", 16),
    "structured.md": ("debates.formats.structured", 6),
    "panel.md": ("debates.formats.panel", 3),
    "rooms.md": ("rooms.queue", 5),
}


def page_prompts(page: str) -> dict[str, str]:
    """The prompts of the module `page` quotes."""
    return prompts(importlib.import_module(PAGES[page][0]))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_protocol_page_quotes_every_prompt_as_the_code_sends_it(page: str) -> None:
    text = (PROTOCOLS / page).read_text()
    found = page_prompts(page)
    assert len(found) == PAGES[page][1], sorted(found)  # a new prompt goes on its page, and its count goes up
    for name, value in found.items():
        assert f"### {name}\n\n```text\n{value}\n```" in text, f"{page} does not quote {name} as the code has it"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_protocol_page_quotes_no_prompt_the_code_does_not_have(page: str) -> None:
    # A heading left behind by a prompt renamed or removed in the code would mislead as much as a wrong text.
    headings = {line[4:] for line in (PROTOCOLS / page).read_text().splitlines() if line.startswith("### ")}
    assert headings == set(page_prompts(page))


# The files docs/adding-a-format.md says a new code format touches, "no other file".
FORMAT_FILES = [
    "debates/formats/<name>.py",
    "debates/formats/__init__.py",
    "tests/debates/formats/test_<name>.py",
    "docs/protocols/<name>.md",
    "README.md",
    "tests/core/test_docs.py",
]


def test_the_guide_to_adding_a_format_lists_the_files_a_format_touches() -> None:
    # Each row names the duel's own file (<name> = duel), and the guide's PAGES line has the shape of the duel's.
    text = (ROOT / "docs" / "adding-a-format.md").read_text()
    table = text.split("## The files, exactly", 1)[1].split("No other file changes", 1)[0]
    assert re.findall(r"^\| `([^`]+)` \|", table, re.M) == FORMAT_FILES
    assert all((ROOT / f.replace("<name>", "duel")).exists() for f in FORMAT_FILES)
    line = '`"<name>.md": ("debates.formats.<name>", <its prompt count>)`'
    assert line in table
    assert PAGES["duel.md"][0] == "debates.formats.duel"


# A variable's name as the product reads it: env_str/env_bool/env_number in settings.py, os.environ elsewhere.
READ = re.compile(
    r"""(?:env_str|env_bool|env_number|os\.environ\.get|os\.environ\[|os\.getenv)\(?\s*["']([A-Z][A-Z0-9_]*)["']"""
)


def test_every_environment_variable_the_product_reads_is_in_the_settings_reference() -> None:
    product = [
        *(path for package in ("config", "chaoslm", "personas") for path in sorted((ROOT / package).rglob("*.py")))
    ]
    read = {name for path in product for name in READ.findall(path.read_text())}
    assert {"CHAOSLM_DEBUG", "DATABASE_URL", "CHAOSLM_ADMIN_PASSWORD", "HF_HOME"} <= read  # the pattern finds them
    reference = (ROOT / "docs" / "settings.md").read_text()
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]*)`", reference))
    assert sorted(read - documented) == []


def tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """The heading anchors a Markdown page has, as GitHub makes them."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_every_link_in_the_readme_and_the_docs_leads_to_a_file_and_heading_that_exist() -> None:
    pages = [name for name in tracked() if name == "README.md" or (name.startswith("docs/") and name.endswith(".md"))]
    assert "docs/settings.md" in pages and "docs/protocols/duel.md" in pages
    broken = []
    for name in pages:
        for target in LINK.findall((ROOT / name).read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            resolved = ((ROOT / name).parent / path).resolve() if path else ROOT / name
            if not resolved.exists() or (anchor and anchor not in anchors(resolved)):
                broken.append(f"{name}: {target}")
    assert broken == []


def test_the_readme_reaches_every_page_of_the_docs_in_one_click() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = {target.split("#")[0] for target in LINK.findall(readme)}
    pages = {name for name in tracked() if name.startswith("docs/") and name.endswith(".md")}
    assert sorted(pages - linked) == []


def test_no_tracked_file_points_outside_the_repository() -> None:
    outside = ("../" + "shared").encode()  # spelt in two parts so this file does not match itself
    mentions = {name for name in tracked() if outside in (ROOT / name).read_bytes()}
    assert sorted(mentions) == []


def test_every_yaml_example_in_the_docs_is_valid_yaml() -> None:
    # A reader copies these into a file; the tournament example once had an unquoted "?," that YAML refuses.
    pages = [name for name in tracked() if name == "README.md" or (name.startswith("docs/") and name.endswith(".md"))]
    blocks = [block for name in pages for block in re.findall(r"```yaml\n(.*?)```", (ROOT / name).read_text(), re.S)]
    assert len(blocks) >= 3
    for block in blocks:
        assert isinstance(yaml.safe_load(block), dict), block


def defined_names() -> dict[str, set[str]]:
    """The names the product's code defines, by module (its dotted path and its last part): modules, classes,
    functions, methods, assigned names and attributes, model fields, keyword names, and identifier-like strings (a
    task's or URL's name); under "" every one of them, and the files of its templates and static assets."""
    names: dict[str, set[str]] = {"": set()}
    for name in tracked():
        path = ROOT / name
        if name.startswith(("tests/", "bench/")) or not name.endswith(".py"):
            names[""].add(Path(name).name)
            continue
        found = {path.stem}
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                found.add(node.attr)
            elif isinstance(node, ast.keyword) and node.arg:
                found.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[\w.]+", node.value):
                found.add(node.value)
        dotted = name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for key in {dotted, dotted.rsplit(".", 1)[-1], ""}:
            names.setdefault(key, set()).update(found)
        parent, _, child = dotted.rpartition(".")
        names.setdefault(parent, set()).add(child)  # a package's modules: `rooms.queue`
    return names


# Names in the architecture page that are not the code's own: SQL and Redis words, HTTP headers, file kinds, and
# the libraries' names it builds on.
NOT_CODE = {
    *("BEGIN", "COMMIT", "INSERT", "SELECT", "ZCOUNT", "EVAL", "GGUF", "TCP_NODELAY", "Last-Event-ID", "Retry-After"),
    *("AppConfig.ready", "post_save", "worker_ready", "django.test", "gc.freeze", "openai.AsyncOpenAI"),
    *("channels_redis", "htmx.createWebSocket", "owner/repo:file.gguf"),
}


def test_every_name_the_architecture_page_gives_exists_in_the_code() -> None:
    # The page is the map a newcomer reads; it once described advance_tournament, sweep_tournaments and
    # TournamentBatch long after they were gone.
    text = (ROOT / "docs" / "architecture.md").read_text()
    names = defined_names()
    files = tracked()

    def is_file(path: str) -> bool:
        path = path.rstrip("/")
        return any(f == path or f.startswith(path + "/") or f.endswith("/" + path) or f"/{path}/" in f for f in files)

    def defined(dotted: str, scope: str = "") -> bool:
        # The last part is defined in the module the one before it names (`services.advance`), else anywhere.
        parts = [p for p in dotted.split(".") if p]
        owner = ".".join(parts[:-1]) or scope
        return parts[-1] in names.get(owner, names[""]) and all(p in names[""] for p in parts[:-1])

    missing = []
    # `advance(id, token)` names `advance`; `batches/kinds.py: delete` names a file and a name in it.
    for token in sorted({re.sub(r"\(.*\)$", "", t).strip() for t in re.findall(r"`([^`\n]+)`", text)} - NOT_CODE):
        head, _, tail = (part.strip() for part in token.partition(":"))
        if head.startswith(("/", "-")) or not re.fullmatch(r"[\w./\-]+", head):
            continue  # a URL path, a command line, an expression
        module, _, attribute = head.rpartition(".")
        if "/" in module and f"{module}.py" in files and attribute != "py":
            ok = defined(attribute, module.replace("/", "."))  # a module's function: `debates/event_cards.quoted_html`
        elif "/" in head or head.endswith(".py"):
            scope = head.removesuffix(".py").replace("/", ".")
            ok = is_file(head) and all(defined(n, scope) for n in re.findall(r"[A-Za-z_][\w.]*", tail))
        elif any(f.rsplit("/", 1)[-1] == head for f in files) or re.fullmatch(r"[a-z0-9-]+", head):
            continue  # a file named in its folder's row, or an ordinary word set in code type ("inline", "duel")
        else:
            ok = defined(head)
        if not ok:
            missing.append(token)
    assert not missing, "names the code does not have: " + ", ".join(missing)
