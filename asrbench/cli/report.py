"""`asrbench report` (ops/report): a static, self-contained HTML site from stored results."""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.cli.options import DatasetsOpt, ModelsOpt, QuietOpt, ResultsOpt
from asrbench.errors import EXIT_FAILED

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def report(
    out: Path = typer.Option(
        Path("report"),
        "-o",
        "--out",
        help="site folder (replaced whole; an index.html and pages), or with "
        "--single-file a .html file or a folder for index.html",
    ),
    results: Path = ResultsOpt,
    dataset: list[str] = DatasetsOpt,
    model: list[str] = ModelsOpt,
    single_file: bool = typer.Option(
        False, "--single-file", help="one HTML file with every page, script and chart"
    ),
    audio: str = typer.Option(
        None,
        "--audio",
        help="copy (default), link (relative to the site), embed (--single-file default) or none",
    ),
    audio_max_kb: int = typer.Option(
        2000, "--audio-max-kb", help="re-encode larger audio files (Ogg Opus, 32 kbit/s)"
    ),
    level: float = typer.Option(0.95, "--level", help="confidence level of intervals and tests"),
    reps: int = typer.Option(1000, "--reps", help="paired bootstrap replicates"),
    no_ablation: bool = typer.Option(
        False, "--no-ablation", help="leave out the scorer ablation page and sections"
    ),
    backfill: bool = typer.Option(
        False,
        "--backfill",
        help="first write the ablation.json and timeline.json that cells stored before they "
        "existed lack (into the results tree, from each cell's stored utterances and the "
        "dataset folder its run.json names)",
    ),
    page_size: int = typer.Option(25, "--page-size", help="utterances per page of a cell page"),
    jobs: int = typer.Option(
        2, "-j", "--jobs", help="processes for the per-dataset statistics and ablation"
    ),
    strict: bool = typer.Option(
        False, "--strict", help="exit 1 when some stored file could not be used"
    ),
    quiet: bool = QuietOpt,
) -> None:
    """Build the report site from stored results only (summary.json, run.json, utterances.jsonl,
    robustness.json, fairness.json); no model is run. Bad files are named, the rest is built."""
    from asrbench.report import ReportOptions, build_site
    from asrbench.settings import settings

    root = Path(results) if results else settings().results
    if backfill:
        _backfill(root, model or None, dataset or None, quiet)
    built = build_site(
        ReportOptions(
            results=root,
            out=out,
            models=model or None,
            datasets=dataset or None,
            single_file=single_file,
            audio=audio,
            audio_max_bytes=1000 * audio_max_kb,
            level=level,
            reps=reps,
            ablation=not no_ablation,
            page_size=page_size,
            jobs=max(1, jobs),
        )
    )
    for p in built.problems:
        typer.echo(f"problem: {p}", err=True)
    for n in built.notes:
        typer.echo(f"note: {n}", err=True)
    if not quiet:
        listed = (
            f", {len(built.problems)} problem(s) listed on the front page" if built.problems else ""
        )
        typer.echo(f"written: {built.out} ({len(built.pages)} page(s){listed})")
    if strict and built.problems:
        raise typer.Exit(EXIT_FAILED)


def _backfill(
    root: Path, models: list[str] | None, datasets: list[str] | None, quiet: bool
) -> None:
    """Write the derived records older cells lack (asrbench/results/derived.py): named datasets
    get them even when derived (the report shows those only when named)."""
    from asrbench.results.derived import backfill

    written, problems = backfill(root, models, datasets, derived=bool(datasets))
    for p in problems:
        typer.echo(f"problem: {p}", err=True)
    if not quiet:
        typer.echo(f"backfilled: {len(written)} record(s)")
