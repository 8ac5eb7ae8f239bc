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
from typing import TYPE_CHECKING

import typer

from asrbench.cli.options import ResultsOpt
from asrbench.errors import EXIT_FAILED, InputError

if TYPE_CHECKING:
    from asrbench.modelcard import Model
    from asrbench.streaming.run import StreamSpec

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
    cache: Path = typer.Option(
        None,
        "--cache",
        help="stream cache: each utterance kept as it is done, so a rerun resumes "
        "(default $ASRBENCH_CACHE/streams, else .cache/streams)",
    ),
    cpus: float = typer.Option(None, "--cpus", help="CPU limit of the container (Docker)"),
    gpus: str = typer.Option(None, "--gpus", help="GPUs for the container: 'all' or a count"),
    as_json: bool = typer.Option(
        False, "--json", help="print stream.json's pooled figures as JSON"
    ),
    capacity: int = typer.Option(
        None,
        "--capacity",
        help="probe 1, 2, 4, ... up to N simultaneous streams; the largest sustained "
        "(docs/STREAMING.md, 'Capacity')",
    ),
    max_failed: str = typer.Option(
        "0",
        "--max-failed",
        help="failure budget: a count (3) or a share (2%) of the utterances; more failed "
        "utterances make the command exit 1 (they are still stored, counted as deletions)",
    ),
) -> None:
    """Stream a dataset through a model at real time (or N x), print latency metrics with CIs."""
    from asrbench.cli.benchmark import _budget  # ops/benchmark's rule, not a second one
    from asrbench.resolve import resolve_dataset, resolve_model
    from asrbench.streaming.guard import warning
    from asrbench.streaming.program import streaming_program
    from asrbench.streaming.run import StreamSpec, describe, print_progress, stream_cell

    budget = _budget(max_failed)
    spec = StreamSpec(
        runner, chunk_ms, speed, max_utts, seed, results, cache_root=cache, cpus=cpus, gpus=gpus
    )
    mdl = resolve_model(model)
    streaming_program(mdl)  # a card that cannot stream is named first, whatever its secrets
    _check_secrets(mdl)
    if capacity is not None:
        _capacity(mdl, dataset, spec, capacity, as_json)
        return
    res = stream_cell(mdl, resolve_dataset(dataset), spec, print_progress)
    if as_json:
        rec = res.record
        typer.echo(
            json.dumps(
                {
                    "pooled": rec.pooled,
                    "pacing": rec.pacing,
                    "overhead_s": rec.overhead_s,
                    "latency_guard": rec.latency_guard,
                    "folder": str(res.folder),
                },
                indent=2,
                sort_keys=True,
            )
        )
    else:
        typer.echo(describe(res))
    if why := warning(res.record.latency_guard):  # stderr too: seen even under --json
        typer.echo(f"warning: {res.record.model} x {res.record.dataset}: {why}", err=True)
    n_failed, n = res.record.n_failed, res.record.n_utts
    if n_failed > budget(n):
        typer.echo(
            f"error: {res.record.model} x {res.record.dataset}: {n_failed} of {n} utterance(s) "
            f"failed (listed under `failed` in {res.folder / 'summary.json'}, counted as "
            "deletions); --max-failed sets a failure budget",
            err=True,
        )
        raise typer.Exit(EXIT_FAILED)


def _check_secrets(mdl: Model) -> None:
    """The checks ops/benchmark makes of a model's declared secrets (a value too weak to be a
    credential), and one more before a program starts: a card that declares secrets but gets
    none of them, which would only connect to be refused (or, from a local stand-in of the
    service, answer as if it had a key)."""
    from asrbench.benchmark.request import JobSpec
    from asrbench.benchmark.run import check_secrets
    from asrbench.secrets import unset_secrets

    check_secrets(mdl, JobSpec())
    for model_id, names in unset_secrets([mdl]):
        which = names[0] if len(names) == 1 else f"one of {', '.join(names)}"
        raise InputError(
            f"model {model_id}: its declared secret {which} is not set in the environment; "
            "set the credential in the host environment (models/README.md, secrets)"
        )


def _capacity(mdl: Model, dataset: str, spec: StreamSpec, max_n: int, as_json: bool) -> None:
    from asrbench.resolve import resolve_dataset
    from asrbench.streaming import capacity

    def progress(level: dict) -> None:
        state = "sustained" if level["sustained"] else "not sustained"
        typer.echo(f"  N={level['n']}: {state}", err=True)

    folder, rec = capacity.capacity(
        mdl, resolve_dataset(dataset), spec, capacity.Probe(max_n), progress
    )
    if as_json:
        typer.echo(json.dumps({**rec.to_dict(), "folder": str(folder)}, indent=2, sort_keys=True))
    else:
        typer.echo(capacity.describe(folder, rec))
