"""What the commands that import YAML files (`import_personas`, `import_formats`) share: the same arguments,
the same reading of files and folders, the same closing line."""

from collections.abc import Sequence
from pathlib import Path

from django.core.management.base import CommandError, CommandParser


def add_arguments(parser: CommandParser, noun: str) -> None:
    """`paths`, and `--update` or `--missing` for what to do with a name already in the database."""
    parser.add_argument("paths", nargs="+", help="YAML files, or folders holding *.yaml / *.yml files")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--update", action="store_true", help=f"replace {noun}s that have the same name")
    group.add_argument(
        "--missing",
        action="store_true",
        help=f"import only {noun}s not in the database yet; keep the others as they are (what `make run` does)",
    )


def read_files(paths: Sequence[str]) -> list[tuple[str, bytes]]:
    """Each named file, and a folder's *.yaml and *.yml files in name order, as (path, bytes)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted([*path.glob("*.yaml"), *path.glob("*.yml")]))
        elif path.is_file():
            files.append(path)
        else:
            raise CommandError(f"{raw}: no such file or folder")
    if not files:
        raise CommandError("no YAML files found")
    return [(str(f), f.read_bytes()) for f in files]


def imported_line(names: Sequence[str], noun: str, *, missing: bool) -> str:
    """The closing line: how many were imported, their names, and what `--missing` kept."""
    listed = f": {', '.join(names)}" if names else ""
    kept = "; those already there are kept as they are (--update replaces them)" if missing else ""
    return f"Imported {len(names)} {noun}(s){listed}{kept}"
