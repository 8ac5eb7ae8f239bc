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
from asrbench.cli.options import (
    MaxUttsOpt,
    ModelsOpt,
    ResultsOpt,
    RunnerOpt,
    UttsOpt,
    campaign_subset,
)

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def robustness(
    model: list[str] = ModelsOpt,
    dataset: list[str] = typer.Option(
        None,
        "-d",
        "--dataset",
        help="dataset (default mini_en); repeat it (-d mini_en -d mini_fr) to compare "
        "robustness across languages: WERD per language and between languages, bootstrap CIs",
    ),
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
    utts: str = UttsOpt,
    max_utts: int = MaxUttsOpt,
    force: bool = typer.Option(
        False,
        "--force",
        help="run a model on a dataset whose language its card does not list (marked)",
    ),
    executor: str = ExecutorOpt,
    address: str = AddressOpt,
    zoo_remote: str = ZooRemoteOpt,
) -> None:
    """Run models over a perturbation grid and write WER/WERD/NWERD tables."""
    from asrbench.campaign.base import write_outputs
    from asrbench.campaign.robustness import (
        RobustnessOptions,
        plan_grid,
        run_languages,
        run_planned,
    )
    from asrbench.perturb.grids import grid_name, grid_specs
    from asrbench.perturb.robustness import to_markdown
    from asrbench.settings import settings

    root = Path(results) if results else settings().results
    subset = campaign_subset(utts, max_utts)
    opts = RobustnessOptions(seed, runner or "auto", jobs, normaliser, subset, root, force)
    datasets = list(dict.fromkeys(dataset or ["mini_en"]))
    models = list(model or [])
    if len(datasets) > 1:  # across languages: every dataset's request is checked first
        target = out or root / "robustness" / "+".join(Path(d).name for d in datasets) / grid_name(
            grid
        )
        with executor_from_flags(executor, address, zoo_remote) as ex:
            report = run_languages(models, datasets, grid_specs(grid), opts, executor=ex)
    else:
        # every input (models, dataset, grid, normaliser, selection) is checked before any work
        plan = plan_grid(models, datasets[0], grid_specs(grid), opts)
        target = out or root / "robustness" / plan.campaign.ds.id / grid_name(grid)
        with executor_from_flags(executor, address, zoo_remote) as ex:
            report = run_planned(plan, executor=ex)
    md = to_markdown(report)
    write_outputs(target, {"robustness.json": report, "robustness.md": md})
    typer.echo(md)
    typer.echo(f"written: {target}/robustness.md and robustness.json")
