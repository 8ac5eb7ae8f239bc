"""`asrbench fairness` (ops/fairness): whom the recognisers fail, with honest statistics.

Per-group TER/mTER with speaker-bootstrap intervals and permutation tests, LWERR, SRB robustness
disparity over a grid, AequeVox differential testing and fault localisation (no references
needed). Hypotheses come from the benchmark's cache: no model runs twice on the same audio.
"""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.cli.executor_opts import AddressOpt, ExecutorOpt, ZooRemoteOpt, executor_from_flags
from asrbench.cli.options import (
    MaxUttsOpt,
    ModelsOpt,
    ResultsOpt,
    RunnerOpt,
    UttsOpt,
    campaign_subset,
)
from asrbench.errors import InputError

app = typer.Typer(add_completion=False, help=__doc__)


def expand_transforms(names: list[str]) -> list[str]:
    """`-t av_noise` = every severity of the bank entry; a full spec (`av_noise:3`) as is."""
    from asrbench.perturb.catalog import get

    out: list[str] = []
    for name in names:
        if ":" in name or "+" in name:
            out.append(name)
            continue
        sev = sorted(get(name).severities)  # an unknown name fails listing what exists
        out += [f"{name}:{s}" for s in sev] or [name]
    return out


@app.command()
def fairness(
    model: list[str] = ModelsOpt,
    dataset: str = typer.Option(..., "-d", "--dataset", help="dataset ID, folder or ID@VERSION"),
    by: str = typer.Option(
        ...,
        "--by",
        help="metadata column naming the groups: GENDER, ACCENT, LANGUAGE, SPEAKER or any label",
    ),
    grid: str = typer.Option(
        None,
        "-g",
        "--grid",
        help="transformations: a named grid (aequevox, srb-small...), a file or 'a:1;b:2'",
    ),
    transform: list[str] = typer.Option(
        None,
        "-t",
        "--transform",
        help="a bank entry at all its severities (av_noise) or one spec (av_noise:3); repeatable",
    ),
    analyses: str = typer.Option(
        None,
        "--analyses",
        help="comma-separated subset of accuracy, lwerr, robustness, "
        "metamorphic, differential, localiser (default: all that "
        "apply)",
    ),
    metric: str = typer.Option(
        None, "--metric", help="ter (default) or mter_utt; needs references"
    ),
    tau: float = typer.Option(0.1, "--tau", help="AequeVox violation threshold on D_b - D_k"),
    omega: float = typer.Option(
        0.0, "--omega", help="fault localiser: non-robust when drop(w) > omega"
    ),
    min_count: int = typer.Option(
        3, "--min-count", help="localiser: words ranked (and validated) only with WC >= this"
    ),
    base: str = typer.Option(
        None,
        "--base",
        help="base group for LWERR and robustness gaps (default: M on GENDER, else the best)",
    ),
    compare: list[str] = typer.Option(
        None,
        "--compare",
        help="group(s) compared with --base (default: F on GENDER, else every other)",
    ),
    cluster: str = typer.Option(
        "SPEAKER", "--cluster", help="column whose values are resampled and relabelled"
    ),
    min_speakers: int = typer.Option(3, "--min-speakers", help="smaller groups are flagged"),
    min_utts: int = typer.Option(20, "--min-utts", help="smaller groups are flagged"),
    reps: int = typer.Option(1000, "--bootstrap", help="bootstrap replicates"),
    perms: int = typer.Option(
        10000, "--permutations", help="permutations per test (all relabellings when fewer)"
    ),
    level: float = typer.Option(0.95, "--level", help="confidence level of the intervals"),
    seed: int = typer.Option(0, "--seed", help="perturbation, bootstrap and permutation seed"),
    utts: str = UttsOpt,
    max_utts: int = MaxUttsOpt,
    per_speaker: int = typer.Option(
        None,
        "--per-speaker",
        help="subset: N utterances of each speaker, evenly spaced in dataset order",
    ),
    runner: str = RunnerOpt,
    jobs: int = typer.Option(2, "-j", "--jobs"),
    resample: str = typer.Option(
        "never",
        "--resample",
        help="never: models get the dataset as it is (the contract: "
        "a program resamples itself); auto: a copy at the "
        "card's sample rate, for programs that cannot",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="run a model on a dataset whose language its card does not list (marked)",
    ),
    results: Path = ResultsOpt,
    out: Path = typer.Option(
        None, "--out", help="default <results>/fairness/<dataset>/<models>/<by>[__grid][__subKEY]"
    ),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="no progress line"),
    executor: str = ExecutorOpt,
    address: str = AddressOpt,
    zoo_remote: str = ZooRemoteOpt,
) -> None:
    """Per-group accuracy, LWERR, robustness disparity, differential testing, fault localiser."""
    import sys

    from asrbench.fairness.pipeline import FairnessOptions, run_fairness
    from asrbench.fairness.report import output_dir, to_markdown, write
    from asrbench.identity import digest, short
    from asrbench.perturb.grids import grid_name, grid_specs
    from asrbench.perturb.spec import parse_spec
    from asrbench.settings import settings

    if resample not in ("auto", "never"):
        raise InputError(f"--resample {resample!r}: use auto or never")
    specs = (grid_specs(grid) if grid else []) + expand_transforms(list(transform or []))
    for s in specs:
        parse_spec(s)  # a bad spec fails before anything runs
    subset = campaign_subset(utts, max_utts)
    label = "+".join([grid_name(grid)] if grid else []) or None
    if transform:
        label = "+".join(filter(None, [label, *[t.replace(":", "-") for t in transform]]))
    opts = FairnessOptions(
        by=by,
        analyses=[a.strip() for a in analyses.split(",") if a.strip()] if analyses else None,
        metric=metric,
        specs=specs,
        grid_label=label,
        tau=tau,
        omega=omega,
        min_count=min_count,
        base=base,
        compare=list(compare or []),
        cluster=cluster,
        min_speakers=min_speakers,
        min_utts=min_utts,
        reps=reps,
        perms=perms,
        level=level,
        seed=seed,
        utts=subset,
        per_speaker=per_speaker,
        runner=runner or "auto",
        jobs=jobs,
        resample=resample,
        force_language=force,
    )
    models = list(model or [])
    from asrbench.benchmark.language import check_grid

    check_grid(models, [dataset], force)  # a card without the dataset's language: refused
    with executor_from_flags(executor, address, zoo_remote, progress=not quiet) as ex:
        plan, report, rows = run_fairness(
            models, dataset, opts, results_root=results, progress=not quiet, executor=ex
        )
    for w in report.warnings:
        print(f"fairness: warning: {w}", file=sys.stderr)
    root = Path(results) if results else settings().results
    key = short(digest("selection", utterances=plan.ids), 12) if report.is_sample else None
    target = out or output_dir(root, plan.dataset.id, report.models, by, label, key)
    write(report, rows, target)
    typer.echo(to_markdown(report))
    typer.echo(
        f"written: {target}/fairness.json, fairness.md" + (", localiser/*.tsv" if rows else "")
    )
