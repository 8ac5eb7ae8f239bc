"""`asrbench stream` (ops/stream): a model's streaming program fed a dataset in real time.

Prints final TER, first-partial latency, end-of-speech-to-final latency, per-word emission
latency, the cursor lag, partial stability and the real-time factor under pacing, with
bootstrap intervals over utterances, and the pacing's own accuracy and the platform's overhead
per event; stores the cell under results/streaming/ (docs/STREAMING.md). With `--capacity N`,
probes how many simultaneous streams the machine sustains instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from asrbench.cli.options import ResultsOpt

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def stream_cmd(
    model: str = typer.Option(
        ..., "-m", "--model", help="model ID or folder (its card needs `streaming:`)"
    ),
    dataset: str = typer.Option(..., "-d", "--dataset", help="dataset ID or folder"),
    chunk_ms: int = typer.Option(100, "--chunk-ms", help="audio per chunk in milliseconds"),
    speed: float = typer.Option(1.0, "--speed", help="feed at N x real time (recorded)"),
    max_utts: int = typer.Option(None, "--max-utts", help="a seeded sample of N utterances"),
    seed: int = typer.Option(0, "--seed", help="seed of the sample and of the bootstrap"),
    runner: str = typer.Option("docker", "--runner", help="docker or local"),
    results: Path = ResultsOpt,
    as_json: bool = typer.Option(
        False, "--json", help="print stream.json's pooled figures as JSON"
    ),
    capacity: int = typer.Option(
        None,
        "--capacity",
        help="probe 1, 2, 4, ... up to N simultaneous streams; the largest sustained "
        "(docs/STREAMING.md, 'Capacity')",
    ),
) -> None:
    """Stream a dataset through a model at real time (or N x), print latency metrics with CIs."""
    from asrbench.resolve import resolve_dataset, resolve_model
    from asrbench.streaming.run import StreamSpec, describe, print_progress, stream_cell

    spec = StreamSpec(runner, chunk_ms, speed, max_utts, seed, results)
    if capacity is not None:
        _capacity(model, dataset, spec, capacity, as_json)
        return
    res = stream_cell(resolve_model(model), resolve_dataset(dataset), spec, print_progress)
    if as_json:
        rec = res.record
        typer.echo(
            json.dumps(
                {
                    "pooled": rec.pooled,
                    "pacing": rec.pacing,
                    "overhead_s": rec.overhead_s,
                    "folder": str(res.folder),
                },
                indent=2,
                sort_keys=True,
            )
        )
    else:
        typer.echo(describe(res))


def _capacity(model: str, dataset: str, spec, max_n: int, as_json: bool) -> None:
    from asrbench.resolve import resolve_dataset, resolve_model
    from asrbench.streaming import capacity

    def progress(level: dict) -> None:
        state = "sustained" if level["sustained"] else "not sustained"
        typer.echo(f"  N={level['n']}: {state}", err=True)

    folder, rec = capacity.capacity(
        resolve_model(model), resolve_dataset(dataset), spec, capacity.Probe(max_n), progress
    )
    if as_json:
        typer.echo(json.dumps({**rec.to_dict(), "folder": str(folder)}, indent=2, sort_keys=True))
    else:
        typer.echo(capacity.describe(folder, rec))
