"""`ops/models`: list the zoo's model cards as a table, or `--json` for machines."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from asrbench.modelcard import Model, ModelCardError, load_model
from asrbench.paths import REPO_ROOT

app = typer.Typer(add_completion=False, help=__doc__)

COLUMNS = ("id", "type", "family", "architecture", "parameters", "size", "licence", "languages",
           "secrets")


def model_dirs(root: Path) -> list[Path]:
    """Folders under `root` that hold a model card (`_common` and friends have none)."""
    return sorted(p for p in root.iterdir() if (p / "model.yaml").is_file())


def load_all(root: Path) -> tuple[list[Model], list[str]]:
    """Every model under `root`, and one message per folder whose card breaks the contract."""
    models, problems = [], []
    for folder in model_dirs(root):
        try:
            models.append(load_model(folder))
        except ModelCardError as exc:
            problems.append(str(exc))
    return models, problems


def _human(n: int | None, unit: str = "") -> str:
    if n is None:
        return "-"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f} {suffix}{unit}"
    return f"{n} {unit}".strip()


def row(model: Model) -> dict[str, str]:
    c = model.card
    return {"id": c.id, "type": c.type, "family": c.family,
            "architecture": c.architecture if len(c.architecture) <= 40
            else c.architecture[:39] + "…",
            "parameters": _human(c.parameters), "size": _human(c.size_bytes, "B"),
            "licence": c.licence.split(" (")[0], "languages": ",".join(c.languages),
            "secrets": ",".join(c.secrets) or "-"}


def table(rows: list[dict[str, str]]) -> str:
    """A GitHub-flavoured Markdown table (readable in a terminal too)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r[k].replace("|", "/") for k in COLUMNS) + " |" for r in rows]
    return "\n".join(lines)


def card_json(model: Model) -> dict[str, Any]:
    d = model.card.to_dict()
    d["source_hash"] = model.source_hash()
    return d


@app.command()
def main(
    as_json: bool = typer.Option(False, "--json", help="every card in full, as JSON"),
    root: Path = typer.Option(REPO_ROOT / "models", "--root", help="folder of model folders"),
) -> None:
    models, problems = load_all(root)
    for p in problems:
        typer.echo(f"error: {p}", err=True)
    if as_json:
        typer.echo(json.dumps([card_json(m) for m in models], indent=2, ensure_ascii=False))
    else:
        typer.echo(table([row(m) for m in models]))
    if problems:
        raise typer.Exit(1)


if __name__ == "__main__":
    sys.exit(app())
