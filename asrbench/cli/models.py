"""`asrbench models` (ops/models): the model cards as a table, or measured results per model;
`ops/models add hf:ORG/NAME[@REVISION]` writes a card for a model named by runtime scheme,
`ops/models add ./FOLDER` one for a folder of weights on this host (its kind from its files)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from asrbench.cli.options import JsonOpt
from asrbench.errors import EXIT_FAILED, EXIT_INPUT, InputError
from asrbench.table import show

app = typer.Typer(add_completion=False, help=__doc__)


@app.callback(invoke_without_command=True)
def models(
    ctx: typer.Context,
    as_json: bool = JsonOpt,
    root: Path = typer.Option(None, "--root", help="folder of model folders (default models/)"),
    results: Path = typer.Option(
        None,
        "--results",
        help="results root written by ops/benchmark: show measured WER, mTER, RTF, latency "
        "and image size per model instead of the cards",
    ),
    dataset: str = typer.Option("mini_en", "-d", "--dataset", help="dataset for --results"),
) -> None:
    """List every model card; with --results, one measured row per model on a dataset."""
    if ctx.invoked_subcommand is not None:
        return
    from asrbench import modelcard
    from asrbench.settings import settings

    if root is not None and not root.is_dir():
        raise InputError(f"--root {root}: not a folder; give the folder of model folders")
    found, problems = modelcard.load_all(root or settings().models_dir)
    for p in problems:
        typer.echo(f"error: {p}", err=True)
    if results is not None:
        from asrbench.results.leaderboard import MODEL_COLUMNS, model_rows

        rows = model_rows(found, results, dataset)
        if not rows:
            typer.echo(
                f"error: no results for dataset {dataset!r} under {results}; run "
                f"`ops/benchmark -m MODEL -d {dataset} --results {results}` first",
                err=True,
            )
            raise typer.Exit(EXIT_FAILED)
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
        else:
            show(rows, MODEL_COLUMNS)
    elif as_json:
        typer.echo(json.dumps([m.card_json() for m in found], indent=2, ensure_ascii=False))
    else:
        show([modelcard.summary_row(m) for m in found], modelcard.SUMMARY_COLUMNS)
    if problems:
        raise typer.Exit(EXIT_INPUT)


@app.command("add")
def add(
    name: str = typer.Argument(
        ...,
        help="a folder of weights on this host (Hugging Face save_pretrained, a .nemo file, an "
        "onnx-asr or sherpa-onnx export: the runtime is read from its files), or "
        "SCHEME:ORG/NAME[@REVISION] (hf:, sherpa:, onnx:, nemo:), e.g. "
        "hf:facebook/wav2vec2-base-960h@main, or nemo:PATH.nemo for a local .nemo file",
    ),
    model_id: str = typer.Option(None, "--id", help="the card's ID (default: from the name)"),
    task: str = typer.Option(
        None,
        "--task",
        help="hf: ctc or seq2seq (default: seq2seq for Whisper-like names, else ctc); onnx: "
        "nemo-conformer-ctc, -rnnt, -tdt or -aed (default: guessed from the name); nemo: the "
        "model class is read from the .nemo file (runtime.kind: auto); a folder: read from its "
        "files",
    ),
    root: Path = typer.Option(None, "--root", help="folder of model folders (default models/)"),
) -> None:
    """Write a card folder for a model named by runtime scheme and say how to build and run it."""
    from asrbench.runtimes import folder_ref, is_ref, parse_ref, write_card_folder
    from asrbench.settings import settings

    # A name with a colon is a scheme's unless a path of that name exists (parse_ref lists them)
    local = not is_ref(name) and (":" not in name or Path(name).expanduser().exists())
    ref = folder_ref(Path(name)) if local else parse_ref(name)
    home = settings().models_dir  # the runtime template cards live there
    folder = write_card_folder(ref, root or home, task, model_id, templates=home)
    arg = folder.name if root is None else str(folder)
    if ref.path is not None:  # a local weights file or folder: no network, the lock pins it
        typer.echo(
            f"wrote {folder}/model.yaml ({ref.text}); check its facts, then\n"
            f"  ops/build -m {arg}    # copies and checks the weights, writes weights.lock\n"
            f"  ops/benchmark -m {arg} -d mini_en"
        )
        return
    typer.echo(
        f"wrote {folder}/model.yaml ({ref.text}); check its facts and weights.hub.files, then\n"
        f"  ops/build -m {arg} --build-mode network    # fetches the weights, writes "
        "weights.lock\n"
        f"  ops/benchmark -m {arg} -d mini_en"
    )
