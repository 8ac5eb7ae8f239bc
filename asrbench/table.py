"""The one table renderer: rows of dicts to Markdown (files, docs, logs) or a rich table (TTY)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO


def cell(value: Any) -> str:
    """How a value reads in a table: None as '-', floats with 3 decimals, '|' escaped."""
    if value is None:
        return "-"
    text = f"{value:.3f}" if isinstance(value, float) else str(value)
    return text.replace("|", "/").replace("\n", " ")


def markdown(
    rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: Callable[[Any], str] = cell
) -> str:
    """A GitHub-flavoured Markdown table (also readable in a terminal)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def show(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[str],
    title: str | None = None,
    stream: TextIO | None = None,
    fmt: Callable[[Any], str] = cell,
) -> None:
    """Print a table: rich's box drawing on a terminal, Markdown when piped or redirected."""
    stream = stream or sys.stdout
    if not stream.isatty():
        stream.write((f"{title}\n\n" if title else "") + markdown(rows, columns, fmt))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    for c in columns:
        t.add_column(c)
    for r in rows:
        t.add_row(*(fmt(r.get(c)) for c in columns))
    Console(file=stream).print(t)
