"""Options and helpers shared by `asrbench push`, `pull` and `zoo`."""

from __future__ import annotations

import sys

import typer

from asrbench.zoo.errors import ZooInputError
from asrbench.zoo.progress import Reporter, RichReporter

ConfigOpt = typer.Option(None, "--config", help="zoo.yaml to use (default: repo zoo.yaml)")
RemoteOpt = typer.Option(None, "--remote", "-r", help="remote name from zoo.yaml")


def kind_id(dataset: str | None, model: str | None) -> tuple[str, str]:
    if bool(dataset) == bool(model):
        raise ZooInputError("give exactly one of -d DATASET_ID or -m MODEL_ID")
    return ("dataset", dataset) if dataset else ("model", model)  # type: ignore[return-value]


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


def reporter(quiet: bool) -> Reporter:
    return Reporter() if quiet or not sys.stderr.isatty() else RichReporter()
