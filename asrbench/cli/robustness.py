"""`asrbench robustness` (ops/robustness): models over a perturbation grid, WER/WERD/NWERD."""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.cli.executor_opts import (
    AddressOpt,
    ExecutorOpt,
    ZooRemoteOpt,
    executor_from_flags,
)
from asrbench.cli.options import ModelsOpt, ResultsOpt, RunnerOpt
from asrbench.errors import InputError

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def robustness(
    model: list[str] = ModelsOpt,
    dataset: str = typer.Option("mini_en", "-d", "--dataset"),
    grid: str = typer.Option(
        "srb-small",
        "-g",
        "--grid",
        help="srb-small, srb, aequevox, channels, aurora[:SETS], a file "
        "(one spec a line) or 'a:1;b:2'",
    ),
    seed: int = typer.Option(0, "--seed"),
    runner: str = RunnerOpt,
    jobs: int = typer.Option(2, "-j", "--jobs"),
    normaliser: str = typer.Option(
        "dnsmos_ovrl",
        "--normaliser",
        help="NWERD difficulty: a quality metric (dnsmos_ovrl, pesq, "
        "stoi), model:ID (base model) or none",
    ),
    results: Path = ResultsOpt,
    out: Path = typer.Option(None, "--out", help="default <results>/robustness/<dataset>/<grid>"),
    utts: str = typer.Option(
        None, "--utts", help="subset: comma-separated IDs, or N for the first N utterances"
    ),
    executor: str = ExecutorOpt,
    address: str = AddressOpt,
    zoo_remote: str = ZooRemoteOpt,
) -> None:
    """Run models over a perturbation grid and write WER/WERD/NWERD tables."""
    from asrbench.fsio import atomic_write_json, atomic_write_text
    from asrbench.perturb.grids import grid_name, grid_specs
    from asrbench.perturb.robustness import check_request, run_grid
    from asrbench.perturb.spec import parse_spec
    from asrbench.resolve import resolve_dataset
    from asrbench.settings import settings

    if not model:
        raise InputError("give at least one model with -m")
    specs = grid_specs(grid)
    for s in specs:
        parse_spec(s)  # fail before any model runs
    ds = resolve_dataset(dataset, check_audio=False)
    check_request(model, normaliser)  # every model and the normaliser, before any work
    root = Path(results) if results else settings().results
    target = out or root / "robustness" / ds.id / grid_name(grid)
    subset = None
    if utts:
        if utts.isdigit():
            subset = [u.id for u in ds.utterances[: int(utts)]]
        else:
            subset = utts.split(",")
    with executor_from_flags(executor, address, zoo_remote) as ex:
        report = run_grid(
            model,
            dataset,
            specs,
            seed=seed,
            runner=runner or "auto",
            jobs=jobs,
            normaliser=normaliser,
            utt_ids=subset,
            results_root=root,
            executor=ex,
        )
    atomic_write_json(target / "robustness.json", report)
    atomic_write_text(target / "robustness.md", report["markdown"])
    typer.echo(report["markdown"])
    typer.echo(f"written: {target}/robustness.md and robustness.json")
