"""`ops/perturb` and `ops/robustness`: derived datasets, the bank's catalogue, robustness grids.

    ops/perturb -d mini_en -p gaussian_noise:3 [--seed 0] [--out DIR] [-j 2] [--quality]
    ops/perturb list
    ops/robustness -m pocketsphinx_en -m whisper_tiny_en -d mini_en -g srb-small
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from asrbench.dataset import DatasetError
from asrbench.fsio import atomic_write_json, atomic_write_text
from asrbench.paths import REPO_ROOT
from asrbench.perturb.dsp import PerturbError
from asrbench.perturb.registry import SpecError, all_perturbations

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Robustness perturbation bank (SRB, Aurora-2, AequeVox, codecs).")

# Named grids for ops/robustness; a grid may also be a file with one spec per line.
GRIDS: dict[str, list[str]] = {
    "srb-small": ["gaussian_noise:2", "gaussian_noise:4", "env_noise:3", "music:3",
                  "crosstalk:3", "rir:3", "echo:2", "speed_up:2", "pitch_down:2", "lowpass:3",
                  "gsm", "mp3:4"],
    "srb": [f"{n}:{s}" for n in ("gaussian_noise", "env_noise", "music", "crosstalk", "rir",
                                 "echo", "bass", "treble", "phaser", "tempo_up", "tempo_down",
                                 "speed_up", "speed_down", "pitch_up", "pitch_down", "chorus",
                                 "tremolo", "resample", "gain", "lowpass", "highpass")
            for s in (1, 2, 3, 4)],
    "aequevox": [f"{n}:{s}" for n in ("amplitude", "clipping", "drop_chunks", "frame_drop",
                                      "av_highpass", "av_lowpass", "av_noise", "freq_scale")
                 for s in (1, 2, 3, 4, 5)] + ["amplify:1"],
    "channels": ["gsm", "narrowband", "mp3:1", "mp3:2", "mp3:3", "mp3:4", "g712", "mirs"],
}

ERRORS = (SpecError, PerturbError, DatasetError, ValueError)


def _fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


@app.command("perturb")
def perturb_cmd(
    dataset: str = typer.Option(None, "-d", "--dataset", help="dataset ID or folder"),
    spec: str = typer.Option(None, "-p", "--spec", help="e.g. gaussian_noise:3+gsm"),
    seed: int = typer.Option(0, "--seed", help="same dataset+spec+seed gives the same bytes"),
    out: Path = typer.Option(None, "--out",
                             help="default .cache/perturb/datasets/<parent>__<spec>__s<seed>"),
    jobs: int = typer.Option(1, "-j", "--jobs", help="worker processes"),
    quality: bool = typer.Option(False, "--quality", help="also PESQ/STOI/DNSMOS vs the parent"),
    utts: str = typer.Option(None, "--utts", help="only these utterance IDs (comma-separated)"),
    list_all: bool = typer.Option(False, "--list", help="list every perturbation and exit"),
) -> None:
    """Create a derived dataset with provenance (parent hash, spec, seed)."""
    from asrbench.perturb.derive import _resolve, derive_dataset

    if list_all:
        list_cmd()
        return
    if not dataset or not spec:
        _fail(ValueError("give -d DATASET and -p SPEC (or --list to see the perturbations)"))
    try:
        r = derive_dataset(dataset, spec, seed=seed, out=out, jobs=jobs,
                           utt_ids=utts.split(",") if utts else None)
        typer.echo(f"{r.path}: {r.n_utts} utterances ({r.cached} from cache), spec {r.spec}, "
                   f"seed {r.seed}")
        if quality:
            from asrbench.perturb.quality import dataset_quality

            q = dataset_quality(_resolve(dataset), r.path)
            atomic_write_json(r.path / "quality.json", q)
            typer.echo("mean quality: " + ", ".join(
                f"{k}={v:.3f}" for k, v in q["mean"].items() if v is not None))
    except ERRORS as exc:
        _fail(exc)


@app.command("list")
def list_cmd() -> None:
    """Every perturbation with its family, parameters and severities."""
    for name, p in all_perturbations().items():
        params = ", ".join(q.describe() for q in p.params) or "-"
        sev = ""
        if p.severities:
            sev = "  severities " + "; ".join(
                f"{k}: " + ",".join(f"{a}={b}" for a, b in v.items())
                for k, v in p.severities.items())
        typer.echo(f"{name:15s} [{p.family}] {p.description}\n    params {params}{sev}")
    typer.echo("grids: " + ", ".join(GRIDS) + ", aurora (every test set x noise x SNR)")


def grid_specs(grid: str) -> list[str]:
    """Specs of a named grid, a file (one spec per line) or a `;`-separated list."""
    if grid in GRIDS:
        return list(GRIDS[grid])
    if grid.startswith("aurora"):
        from asrbench.perturb.aurora import aurora_grid

        sets = grid.partition(":")[2] or "ABC"
        return aurora_grid(sets)
    path = Path(grid)
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
        return [s.strip() for s in lines if s.strip() and not s.startswith("#")]
    return [s.strip() for s in grid.split(";") if s.strip()]


@app.command("robustness")
def robustness_cmd(
    model: list[str] = typer.Option(..., "-m", "--model", help="model ID; repeat for several"),
    dataset: str = typer.Option("mini_en", "-d", "--dataset"),
    grid: str = typer.Option("srb-small", "-g", "--grid",
                             help=f"{', '.join(GRIDS)}, aurora[:SETS], a file or 'a:1;b:2'"),
    seed: int = typer.Option(0, "--seed"),
    runner: str = typer.Option("auto", "--runner", help="docker, local or auto"),
    jobs: int = typer.Option(2, "-j", "--jobs"),
    normaliser: str = typer.Option("dnsmos_ovrl", "--normaliser",
                                   help="NWERD difficulty: a quality metric (dnsmos_ovrl, pesq, "
                                        "stoi), model:ID (base model) or none"),
    out: Path = typer.Option(None, "--out", help="default results/robustness/<dataset>/<grid>"),
    utts: str = typer.Option(None, "--utts", help="subset: comma-separated IDs, or N for the "
                                                  "first N utterances"),
) -> None:
    """Run models over a perturbation grid and write WER/WERD/NWERD tables."""
    from asrbench.perturb.robustness import run_grid

    try:
        specs = grid_specs(grid)
        from asrbench.perturb.spec import parse_spec

        for s in specs:
            parse_spec(s)  # fail before any model runs
        target = out or REPO_ROOT / "results" / "robustness" / dataset / Path(grid).name
        subset = None
        if utts:
            from asrbench.dataset import load_dataset
            from asrbench.perturb.derive import _resolve

            subset = utts.split(",")
            if utts.isdigit():
                ds = load_dataset(_resolve(dataset), check_audio=False)
                subset = [u.id for u in ds.utterances[: int(utts)]]
        report = run_grid(model, dataset, specs, seed=seed, runner=runner, jobs=jobs,
                          normaliser=normaliser, utt_ids=subset)
        atomic_write_json(target / "robustness.json", report)
        atomic_write_text(target / "robustness.md", report["markdown"])
        typer.echo(report["markdown"])
        typer.echo(f"written: {target}/robustness.md and robustness.json")
    except ERRORS as exc:
        _fail(exc)
    except Exception as exc:  # benchmark/runner errors are defined by another package
        if type(exc).__name__ in ("BenchmarkError", "RunnerError", "ModelCardError"):
            _fail(exc)
        raise


if __name__ == "__main__":
    sys.exit(app())


