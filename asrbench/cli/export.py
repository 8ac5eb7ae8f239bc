"""`asrbench export` (ops/export): a dataset as Kaldi, NeMo or lhotse manifests, or its segment
references as STM, SegLST or RTTM (a long-form dataset's segments; else one per utterance); or
a benchmark result cell's hypothesis as SegLST or CTM (give the cell's folder), for
`ops/score --metric` against the dataset's exported reference."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def export_cmd(
    dataset: str = typer.Argument(
        ...,
        help="dataset ID, folder or ID@VERSION; or a result cell's folder (results/MODEL/DATASET)",
    ),
    to: str = typer.Option(
        ..., "--to", help="kaldi, nemo, lhotse, stm, seglst or rttm; a result cell: seglst or ctm"
    ),
    out: Path = typer.Option(..., "--out", help="folder to write the manifests into"),
    force: bool = typer.Option(False, "--force", help="replace an existing output folder"),
) -> None:
    from asrbench.importers.export import export_cell, export_dataset, is_cell
    from asrbench.resolve import resolve_dataset

    if is_cell(Path(dataset)):
        files = export_cell(Path(dataset), to, out, force=force)
        typer.echo(f"exported the hypothesis of {dataset} as {to}: {files[0].name} in {out}")
        return
    ds = resolve_dataset(dataset)
    files = export_dataset(ds, to, out, force=force)
    typer.echo(
        f"exported {len(ds)} {'recordings' if ds.longform else 'utterances'} of {ds.id} as {to}: "
        f"{', '.join(f.name for f in files)} in {out}"
    )
