"""`asrbench leaderboard` (ops/leaderboard): the model x dataset table from stored results, TER
with its CI and rank (significance ranges by paired bootstrap), and the latency of stored
streaming cells in a table of its own (docs/RESULTS.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.cli.options import ResultsOpt
from asrbench.errors import EXIT_FAILED

app = typer.Typer(add_completion=False, help=__doc__)


def show_leaderboard(
    results: Path | None, out: Path | None, reps: int | None = None, exclude_suspects: bool = False
) -> None:
    """Print the leaderboard and write leaderboard.{csv,json,md} (the one implementation)."""
    from asrbench.results import leaderboard
    from asrbench.results.ranking import DEFAULT_REPS
    from asrbench.settings import settings

    root = Path(results) if results else settings().results
    board = leaderboard.build(
        root, DEFAULT_REPS if reps is None else reps, exclude_suspects=exclude_suspects
    )
    if not board["models"]:
        typer.echo(f"no results under {root}; run ops/benchmark first", err=True)
        raise typer.Exit(EXIT_FAILED)
    paths = leaderboard.write(board, out or root)
    typer.echo(leaderboard.to_markdown(board))
    typer.echo("written: " + ", ".join(str(p) for p in paths.values()), err=True)


@app.command()
def leaderboard_cmd(
    results: Path = ResultsOpt,
    out: Path = typer.Option(
        None, "--out", help="where to write leaderboard.* (default: the results root)"
    ),
    reps: int = typer.Option(
        1000,
        "--reps",
        min=0,
        help="paired-bootstrap replicates per pair of models (rank ranges, ties in the mean "
        "rank); 0: ranks by TER alone",
    ),
    exclude_suspects: bool = typer.Option(
        False,
        "--exclude-suspects",
        help="score every cell without the references ops/audit flagged as suspect (TER, CIs "
        "and ranks over the other utterances)",
    ),
) -> None:
    """Print and write the TER matrix with CIs, per-dataset ranks and mean rank, and streaming
    latency, from stored results."""
    show_leaderboard(results, out, reps, exclude_suspects)
