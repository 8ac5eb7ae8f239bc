"""`ops/benchmark -m MODEL -d DATASET [...]`, matrix runs and `--table`; `ops/leaderboard`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from asrbench.benchmark import leaderboard
from asrbench.benchmark.errors import BenchmarkError
from asrbench.benchmark.request import Request, load_request
from asrbench.benchmark.run import default_results_root, run_benchmark
from asrbench.dataset import DatasetError
from asrbench.modelcard import ModelCardError
from asrbench.runners import RunnerError, RunOptions

app = typer.Typer(add_completion=False, help="Run ASR models on datasets and score them.")
KNOWN_ERRORS = (BenchmarkError, DatasetError, ModelCardError, RunnerError)


def _scorer_options(pairs: list[str]) -> dict:
    out: dict = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"--score-opt {pair!r}: use KEY=VALUE, e.g. nsw=false")
        low = value.lower()
        out[key] = (low == "true") if low in ("true", "false") else (
            int(value) if value.lstrip("-").isdigit() else value)
    return out


def print_table(results: Path, out: Path | None) -> None:
    board = leaderboard.build(results)
    if not board["models"]:
        typer.echo(f"no results under {results}; run ops/benchmark first", err=True)
        raise typer.Exit(1)
    paths = leaderboard.write(board, out or results)
    typer.echo(leaderboard.to_markdown(board))
    typer.echo("written: " + ", ".join(str(p) for p in paths.values()), err=True)


@app.command()
def benchmark(
    model: list[str] = typer.Option(None, "-m", "--model",
                                    help="model ID, folder or ID@VERSION (repeatable)"),
    dataset: list[str] = typer.Option(None, "-d", "--dataset",
                                      help="dataset ID, folder or ID@VERSION (repeatable)"),
    request: Path = typer.Option(None, "--request", help="YAML request: models x datasets"),
    runner: str = typer.Option(None, "--runner", help="docker, local or auto (default auto)"),
    results: Path = typer.Option(None, "--results", help="results root (default ./results)"),
    cache: Path = typer.Option(None, "--cache", help="hypothesis cache (default .cache/hyps)"),
    jobs: int = typer.Option(None, "-j", "--jobs", help="parallel containers/processes"),
    max_utts: int = typer.Option(None, "--max-utts", help="seeded sample of N utterances"),
    seed: int = typer.Option(None, "--seed", help="seed of the --max-utts sample (default 0)"),
    gpus: str = typer.Option(None, "--gpus", help="GPUs for containers: 'all' or a count"),
    utt_timeout: float = typer.Option(None, "--utt-timeout",
                                      help="per-utterance timeout (s), passed to the program"),
    timeout: float = typer.Option(None, "--timeout", help="whole-shard timeout (s)"),
    score_opt: list[str] = typer.Option(None, "--score-opt",
                                        help="scorer option KEY=VALUE (repeatable)"),
    table: bool = typer.Option(False, "--table", help="print the leaderboard from stored "
                               "results (runs nothing)"),
    no_progress: bool = typer.Option(False, "--no-progress", help="no progress lines"),
    env: list[str] = typer.Option(
        None, "--env", help="non-secret setting KEY=VALUE for the model program, e.g. "
        "OPENAI_BASE_URL=http://127.0.0.1:8000/v1 (repeatable; recorded in run.json and in "
        "the cache key; secrets come only from the host environment)"),
) -> None:
    """Run every model x dataset cell; a failing cell is reported and the others still run."""
    if table:
        print_table(results or default_results_root(), None)
        return
    try:
        req = load_request(request) if request else Request([], [], {})
    except BenchmarkError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    req.models += model or []
    req.datasets += dataset or []
    if not req.datasets and req.models:
        req.datasets = ["mini_en"]
    if not req.models:
        typer.echo("error: give a model with -m (or a --request file)", err=True)
        raise typer.Exit(2)
    o = req.options

    def pick(cli, key, default=None):  # noqa: ANN001, ANN202 - command line wins over request
        return cli if cli is not None else o.get(key, default)

    settings = dict(o.get("env") or {})
    for item in env or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            typer.echo(f"error: --env {item!r}: expected KEY=VALUE", err=True)
            raise typer.Exit(2)
        settings[key] = value
    run_opts = RunOptions(timeout_s=float(pick(timeout, "timeout_s", 3600.0)),
                          memory=o.get("memory"), cpus=o.get("cpus"), env=settings)
    scorer = {**(o.get("scorer") or {}), **_scorer_options(score_opt or [])}
    failures = []
    rows = []
    for m, d in req.cells():
        try:
            s = run_benchmark(
                m, d, runner=pick(runner, "runner", "auto"), results_root=pick(results, "results"),
                options=run_opts, jobs=int(pick(jobs, "jobs", 1)),
                max_utts=pick(max_utts, "max_utts"),
                seed=int(pick(seed, "seed", 0)), utt_timeout_s=pick(utt_timeout, "utt_timeout_s"),
                gpus=pick(gpus, "gpus"), cache_root=pick(cache, "cache"),
                scorer_options=scorer or None, progress=not no_progress,
                command=["ops/benchmark", *sys.argv[1:]],
            )
        except KNOWN_ERRORS as exc:
            failures.append((m, d))
            typer.echo(f"error: {m} x {d}: {exc}", err=True)
            continue
        except KeyboardInterrupt:
            typer.echo(f"\ninterrupted during {m} x {d}: its containers were stopped and the "
                       "utterances done are cached; rerun the same command to continue",
                       err=True)
            raise typer.Exit(130) from None
        wer = f"{100 * s['wer']:.2f}%" if s["wer"] is not None else "undefined"
        met = s["metrics"]
        line = (f"{s['model']} on {s['dataset']}: WER {wer} ({s['errors']}/{s['ref_words']} "
                f"words, {s['n_hyps']}/{s['n_utts']} utterances, {s['n_failed']} failed, "
                f"coverage {met.get('coverage')}, RTF {s['timing']['rtf']}, runner {s['runner']}"
                f", {'cache hit' if s['cache_hit'] else 'ran'}) -> {s['out_dir']}")
        rows.append(line)
        typer.echo(line)
    if len(req.cells()) > 1:
        typer.echo(f"{len(rows)} of {len(req.cells())} cells done" +
                   (f"; failed: {', '.join(f'{m} x {d}' for m, d in failures)}" if failures
                    else ""))
    if failures:
        raise typer.Exit(1)


leaderboard_app = typer.Typer(add_completion=False, help="Model x dataset WER table.")


@leaderboard_app.command()
def leaderboard_cmd(
    results: Path = typer.Option(None, "--results", help="results root (default ./results)"),
    out: Path = typer.Option(None, "--out", help="where to write leaderboard.* (default: "
                             "the results root)"),
) -> None:
    """Print and write the WER matrix with per-dataset ranks from stored results."""
    print_table(results or default_results_root(), out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "leaderboard":
        sys.argv.pop(1)
        sys.exit(leaderboard_app())
    sys.exit(app())
