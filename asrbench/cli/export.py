"""`asrbench export` (ops/export): a dataset as Kaldi, NeMo or lhotse manifests, or its segment
references as STM, SegLST or RTTM (a long-form dataset's segments; else one per utterance)."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def export_cmd(
    dataset: str = typer.Argument(..., help="dataset ID, folder or ID@VERSION"),
    to: str = typer.Option(..., "--to", help="kaldi, nemo, lhotse, stm, seglst or rttm"),
    out: Path = typer.Option(..., "--out", help="folder to write the manifests into"),
    force: bool = typer.Option(False, "--force", help="replace an existing output folder"),
) -> None:
    from asrbench.importers.export import export_dataset
    from asrbench.resolve import resolve_dataset

    ds = resolve_dataset(dataset)
    files = export_dataset(ds, to, out, force=force)
    typer.echo(
        f"exported {len(ds)} {'recordings' if ds.longform else 'utterances'} of {ds.id} as {to}: "
        f"{', '.join(f.name for f in files)} in {out}"
    )
