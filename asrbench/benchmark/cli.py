"""`ops/benchmark -m MODEL -d DATASET`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from asrbench.benchmark.run import BenchmarkError, run_benchmark
from asrbench.dataset import DatasetError
from asrbench.modelcard import ModelCardError
from asrbench.runners import RunnerError

app = typer.Typer(add_completion=False, help="Run an ASR model on a dataset and score it.")


@app.command()
def benchmark(
    model: str = typer.Option(..., "-m", "--model", help="model ID (models/<ID>) or folder"),
    dataset: str = typer.Option("mini_en", "-d", "--dataset", help="dataset ID or folder"),
    runner: str = typer.Option("auto", "--runner", help="docker, local or auto"),
    results: Path = typer.Option(None, "--results", help="results root (default ./results)"),
) -> None:
    try:
        s = run_benchmark(model, dataset, runner=runner, results_root=results)
    except (BenchmarkError, DatasetError, ModelCardError, RunnerError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    wer = f"{100 * s['wer']:.2f}%" if s["wer"] is not None else "undefined"
    typer.echo(f"{s['model']} on {s['dataset']}: WER {wer} ({s['errors']}/{s['ref_words']} "
               f"words, {s['n_hyps']}/{s['n_utts']} utterances, runner {s['runner']})")


if __name__ == "__main__":
    sys.exit(app())
