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


def table(rows: list[dict[str, str]], columns: tuple[str, ...] = COLUMNS) -> str:
    """A GitHub-flavoured Markdown table (readable in a terminal too)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(r[k].replace("|", "/") for k in columns) + " |" for r in rows]
    return "\n".join(lines)


MEASURED = ("model", "type", "parameters", "weights", "image", "WER %", "mTER %", "RTF",
            "latency p50 s", "latency p90 s", "coverage", "utts", "runner")


def image_size(identity: str | None) -> int | None:
    """Size in bytes of the Docker image a run used (its `model_identity`), if still present."""
    if not identity or not identity.startswith("sha256:"):
        return None
    try:
        from asrbench.docker_build import DockerUnavailable, client

        return int(client(timeout=10).images.get(identity).attrs["Size"])
    except (DockerUnavailable, Exception):  # image removed or no engine: size unknown
        return None


def measured_rows(models: list[Model], results: Path, dataset: str) -> list[dict[str, str]]:
    """One row per model with stored results on `dataset`: accuracy, speed, sizes.

    Reads `<results>/<model>/<dataset>/summary.json` as `ops/benchmark` writes it; nothing is
    typed by hand, so the table can be regenerated and diffed.
    """
    rows = []
    for m in models:
        path = results / m.id / dataset / "summary.json"
        if not path.is_file():
            continue
        s = json.loads(path.read_text(encoding="utf-8"))
        met, tim = s.get("metrics", {}), s.get("timing", {})
        lat = tim.get("latency_s") or {}

        def pct(x: float | None) -> str:
            return "-" if x is None else f"{100 * x:.2f}"

        def num(x: float | None, fmt: str = "{:.3f}") -> str:
            return "-" if x is None else fmt.format(x)

        rows.append({
            "model": m.id, "type": m.card.type, "parameters": _human(m.card.parameters),
            "weights": _human(m.card.size_bytes, "B"),
            "image": _human(image_size(s.get("model_identity")), "B"),
            "WER %": pct(met.get("wer", met.get("ter"))), "mTER %": pct(met.get("mter")),
            "RTF": num(tim.get("rtf")), "latency p50 s": num(lat.get("p50"), "{:.2f}"),
            "latency p90 s": num(lat.get("p90"), "{:.2f}"),
            "coverage": num(met.get("coverage"), "{:.2f}"), "utts": str(met.get("n_utts", "-")),
            "runner": str(s.get("runner", "-")),
        })
    return rows


def card_json(model: Model) -> dict[str, Any]:
    d = model.card.to_dict()
    d["source_hash"] = model.source_hash()
    return d


@app.command()
def main(
    as_json: bool = typer.Option(False, "--json", help="every card in full, as JSON"),
    root: Path = typer.Option(REPO_ROOT / "models", "--root", help="folder of model folders"),
    results: Path = typer.Option(
        None, "--results",
        help="results root written by ops/benchmark: show measured WER, mTER, RTF, latency "
             "and image size per model instead of the cards"),
    dataset: str = typer.Option("mini_en", "-d", "--dataset", help="dataset for --results"),
) -> None:
    models, problems = load_all(root)
    for p in problems:
        typer.echo(f"error: {p}", err=True)
    if results is not None:
        rows = measured_rows(models, results, dataset)
        if not rows:
            typer.echo(f"error: no results for dataset {dataset!r} under {results}; run "
                       f"`ops/benchmark -m MODEL -d {dataset} --results {results}` first",
                       err=True)
            raise typer.Exit(1)
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
        else:
            typer.echo(table(rows, MEASURED))
    elif as_json:
        typer.echo(json.dumps([card_json(m) for m in models], indent=2, ensure_ascii=False))
    else:
        typer.echo(table([row(m) for m in models]))
    if problems:
        raise typer.Exit(1)


if __name__ == "__main__":
    sys.exit(app())
