"""`asrbench perturb` (ops/perturb): a derived, perturbed dataset with provenance.

ops/perturb -d mini_en -p gaussian_noise:3 [--seed 0] [--out DIR] [-j 2] [--quality]
ops/perturb --list
"""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.errors import InputError

app = typer.Typer(add_completion=False, help=__doc__)


def list_perturbations() -> None:
    """Every perturbation with its family, parameters and severities."""
    from asrbench.perturb.catalog import all_perturbations
    from asrbench.perturb.grids import GRIDS

    for name, p in all_perturbations().items():
        params = ", ".join(q.describe() for q in p.params) or "-"
        sev = ""
        if p.severities:
            sev = "  severities " + "; ".join(
                f"{k}: " + ",".join(f"{a}={b}" for a, b in v.items())
                for k, v in p.severities.items()
            )
        typer.echo(f"{name:15s} [{p.family}] {p.description}\n    params {params}{sev}")
    typer.echo("grids: " + ", ".join(GRIDS) + ", aurora (every test set x noise x SNR)")


@app.command()
def perturb(
    dataset: str = typer.Option(None, "-d", "--dataset", help="dataset ID, folder or ID@VERSION"),
    spec: str = typer.Option(None, "-p", "--spec", help="e.g. gaussian_noise:3+gsm"),
    seed: int = typer.Option(0, "--seed", help="same dataset+spec+seed gives the same bytes"),
    out: Path = typer.Option(
        None, "--out", help="default .cache/perturb/datasets/<parent>__<spec>__s<seed>"
    ),
    jobs: int = typer.Option(1, "-j", "--jobs", help="worker processes"),
    quality: bool = typer.Option(False, "--quality", help="also PESQ/STOI/DNSMOS vs the parent"),
    utts: str = typer.Option(None, "--utts", help="only these utterance IDs (comma-separated)"),
    list_all: bool = typer.Option(False, "--list", help="list every perturbation and exit"),
) -> None:
    """Create a derived dataset with provenance (parent hash, spec, seed, assets)."""
    if list_all:
        list_perturbations()
        return
    if not dataset or not spec:
        raise InputError("give -d DATASET and -p SPEC (or --list to see the perturbations)")
    from asrbench.fsio import atomic_write_json
    from asrbench.perturb.derive import derive_dataset

    r = derive_dataset(
        dataset, spec, seed=seed, out=out, jobs=jobs, utt_ids=utts.split(",") if utts else None
    )
    typer.echo(
        f"{r.path}: {r.n_utts} utterances ({r.cached} from cache), spec {r.spec}, seed {r.seed}"
    )
    if quality:
        from asrbench.perturb.quality import dataset_quality

        q = dataset_quality(r.parent, r.path)
        atomic_write_json(r.path / "quality.json", q)
        typer.echo(
            "mean quality: "
            + ", ".join(f"{k}={v:.3f}" for k, v in q["mean"].items() if v is not None)
        )
