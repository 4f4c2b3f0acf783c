"""CSV that a spreadsheet opens as data: every CSV ChaosLM writes goes through `csv_text`.

A spreadsheet (Excel, LibreOffice, Google Sheets) takes a cell that begins with `=`, `+`, `-` or `@`
as a formula, and a tab or carriage return before one of them as well. A tournament question or a
persona's name is text someone typed, or a model wrote: written raw, `=HYPERLINK(...)` in a topic
would run when the owner opens the export. Such a text cell is written with a leading apostrophe,
which spreadsheets show as text and do not evaluate (OWASP's rule for CSV injection). Numbers are
written as numbers: a negative rating is data, not a formula.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """`value` as a spreadsheet should read it: text that a spreadsheet would evaluate, with a leading apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """`rows` as CSV text, each cell through `safe_cell`."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerows([safe_cell(cell) for cell in row] for row in rows)
    return out.getvalue()
