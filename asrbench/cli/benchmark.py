"""`asrbench benchmark` (ops/benchmark): every model x dataset cell, sharded, cached, resumable."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import typer

from asrbench.cli.executor_opts import (
    AddressOpt,
    ExecutorOpt,
    ZooRemoteOpt,
    executor_from_flags,
)
from asrbench.cli.options import (
    DatasetsOpt,
    JobsOpt,
    ModelsOpt,
    ResultsOpt,
    RunnerOpt,
    SeedOpt,
    parse_pairs,
    positive_seconds,
    score_options,
    typed_pairs,
)
from asrbench.errors import EXIT_FAILED, EXIT_INTERRUPTED, AsrbenchError, InputError

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def benchmark(
    model: list[str] = ModelsOpt,
    dataset: list[str] = DatasetsOpt,
    request: Path = typer.Option(None, "--request", help="YAML request: models x datasets"),
    runner: str = RunnerOpt,
    results: Path = ResultsOpt,
    cache: Path = typer.Option(
        None, "--cache", help="hypothesis cache (default $ASRBENCH_CACHE/hyps, else .cache/hyps)"
    ),
    jobs: int = JobsOpt,
    max_utts: int = typer.Option(None, "--max-utts", help="seeded sample of N utterances"),
    seed: int = SeedOpt,
    gpus: str = typer.Option(None, "--gpus", help="GPUs for containers: 'all' or a count"),
    utt_timeout: float = typer.Option(
        None, "--utt-timeout", help="per-utterance timeout (s), passed to the program"
    ),
    timeout: float = typer.Option(None, "--timeout", help="whole-shard timeout (s)"),
    score_opt: list[str] = typer.Option(
        None, "--score-opt", help="scorer option KEY=VALUE (repeatable)"
    ),
    table: bool = typer.Option(
        False,
        "--table",
        help="print the leaderboard from stored "
        "results instead (runs nothing; same as `leaderboard`)",
    ),
    no_progress: bool = typer.Option(False, "--no-progress", help="no progress lines"),
    env: list[str] = typer.Option(
        None,
        "--env",
        help="non-secret setting KEY=VALUE for the model program, e.g. "
        "OPENAI_BASE_URL=http://127.0.0.1:8000/v1 (repeatable; recorded in run.json and in "
        "the cache key; secrets come only from the host environment)",
    ),
    max_failed: str = typer.Option(
        "0",
        "--max-failed",
        help="failure budget per cell: a count (3) or a share (2%); a "
        "cell with more failed utterances makes the command exit 1 (they are still stored, "
        "counted as deletions, and retried by the next run)",
    ),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="report this result even if the "
        "reported one was computed on other dataset content or "
        "scorer options (the old one is kept beside it)",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="run a model on a dataset whose language its card does not list (refused "
        "otherwise); the program runs in its default language and the result is marked "
        "forced_language",
    ),
    segment: str = typer.Option(
        None,
        "--segment",
        help="long recordings: auto (default: VAD for recordings or utterances longer than "
        "the card's max_input_s, in any dataset, else the model's own decoding), none, vad or "
        "windows (cut every recording); recorded in run.json and the cell's key",
    ),
    segment_opt: list[str] = typer.Option(
        None,
        "--segment-opt",
        help="segmenter parameter KEY=VALUE over the card's limit, e.g. threshold=0.4, "
        "max_segment_s=20, method=webrtc, window_s=20, overlap_s=4 (repeatable)",
    ),
    executor: str = ExecutorOpt,
    address: str = AddressOpt,
    zoo_remote: str = ZooRemoteOpt,
) -> None:
    """Run every model x dataset cell; a failing cell is reported and the others still run."""
    from asrbench.benchmark.request import JobSpec, Request, RequestOptions, check_env, load_request
    from asrbench.benchmark.run import Outcome, run_matrix

    if table:
        from asrbench.cli.leaderboard import show_leaderboard

        show_leaderboard(results, None)
        return
    req = load_request(request) if request else Request()
    models = [*req.models, *(model or [])]
    datasets = [*req.datasets, *(dataset or [])] or (["mini_en"] if models else [])
    if not models:
        raise InputError("give a model with -m (or a --request file)")
    flags = RequestOptions(
        runner=runner,
        results=results,
        cache=cache,
        jobs=jobs,
        max_utts=max_utts,
        seed=seed,
        utt_timeout_s=positive_seconds(utt_timeout, "--utt-timeout"),
        timeout_s=positive_seconds(timeout, "--timeout"),
        gpus=gpus,
        scorer=score_options(score_opt),
        env=check_env(parse_pairs(env, "--env"), "--env"),
        segment=segment,
        segment_opt=typed_pairs(segment_opt, "--segment-opt"),
    )
    spec = JobSpec.build(
        req.options,
        flags,
        replace=replace,
        progress=not no_progress,
        command=["ops/benchmark", *sys.argv[1:]],
        force_language=force,
    )
    _refuse_secrets_as_settings(models, spec.env)
    budget = _budget(max_failed)
    failures: list[tuple[str, str]] = []
    done = 0
    cells = [(m, d) for m in models for d in datasets]
    ex = executor_from_flags(executor, address, zoo_remote, progress=not no_progress)

    def report(i: int, outcome: Outcome) -> None:
        nonlocal done
        m, d = cells[i]
        if isinstance(outcome, AsrbenchError):
            failures.append((m, d))
            typer.echo(f"error: {m} x {d}: {outcome}", err=True)
            return
        typer.echo(outcome.line())
        n_failed, n = outcome.summary.n_failed, outcome.summary.selection.n_utts
        if n_failed > budget(n):
            failures.append((m, d))
            typer.echo(
                f"error: {m} x {d}: {n_failed} of {n} utterance(s) failed (listed in "
                f"{outcome.out_dir / 'failed.tsv'}, counted as deletions); the next run "
                "retries them; --max-failed sets a failure budget",
                err=True,
            )
            return
        done += 1

    try:
        with ex:
            outcomes = run_matrix(
                cells, spec, executor=ex, on_result=None if len(cells) == 1 else report
            )
    except KeyboardInterrupt:
        typer.echo(
            "\ninterrupted: running shards were stopped and the utterances done are "
            "cached; rerun the same command to continue",
            err=True,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if len(cells) == 1:
        if isinstance(outcomes[0], AsrbenchError):
            raise outcomes[0]  # one cell: the CLI prints it and maps it to its exit code
        report(0, outcomes[0])
    if len(cells) > 1:
        typer.echo(
            f"{done} of {len(cells)} cells done"
            + (f"; failed: {', '.join(f'{m} x {d}' for m, d in failures)}" if failures else "")
        )
    if failures:
        raise typer.Exit(EXIT_FAILED)


def _budget(spec: str):
    """`--max-failed`: '3' (a count) or '2%' (a share of the cell's utterances)."""
    text = spec.strip()
    try:
        if text.endswith("%"):
            share = float(text[:-1]) / 100
            if not 0 <= share <= 1:
                raise ValueError
            return lambda n: share * n
        count = int(text)
        if count < 0:
            raise ValueError
        return lambda n: count
    except ValueError:
        raise InputError(f"--max-failed {spec!r}: give a count (3) or a share (2%)") from None


def _refuse_secrets_as_settings(models: list[str], settings: Mapping[str, str]) -> None:
    """No `--env` name may be a secret of any model in the run: settings are recorded in
    run.json and cache keys, and passed to every model of a matrix."""
    if not settings:
        return
    from asrbench.resolve import model_parts, resolve_model

    for m in (part for spec in models for part in model_parts(spec)):
        declared = set(resolve_model(m).card.secrets) & set(settings)
        if declared:
            raise InputError(
                f"--env {', '.join(sorted(declared))}: declared a secret by model "
                f"{m}; set it in the host environment instead (secrets never enter "
                "run.json, cache keys or another model's environment)"
            )
