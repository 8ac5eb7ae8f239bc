"""`asrbench validate` (ops/validate): report every problem in dataset folders; writes nothing
but a composed set's audio, composed on first use (asrbench.importers.composed)."""

from __future__ import annotations

from pathlib import Path

import typer

from asrbench.dataset import load_dataset, validate
from asrbench.errors import EXIT_INPUT
from asrbench.importers.composed import ensure_audio

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def validate_cmd(
    datasets: list[Path] = typer.Argument(..., help="dataset folders"),
    no_audio: bool = typer.Option(False, "--no-audio", help="skip opening the audio files"),
    show_hash: bool = typer.Option(False, "--hash", help="print the content hash when valid"),
) -> None:
    failed = False
    for root in datasets:
        if not no_audio:
            ensure_audio(root)  # a composed set's audio, composed once (the only thing written)
        problems = validate(root, check_audio=not no_audio)
        for p in problems:
            typer.echo(str(p), err=True)
        errors = [p for p in problems if p.severity == "error"]
        if errors:
            failed = True
            typer.echo(f"{root}: {len(errors)} error(s)", err=True)
            continue
        ds = load_dataset(root, check_audio=False)
        line = f"{root}: ok, {len(ds)} utterances, {ds.total_duration / 60:.1f} min"
        if show_hash:
            line += f", {ds.content_hash()}"
        typer.echo(line)
    if failed:
        raise typer.Exit(EXIT_INPUT)
