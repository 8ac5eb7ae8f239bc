"""`asrbench pull` (ops/pull): fetch a dataset or model version from a zoo remote."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from asrbench.cli.options import JsonOpt, QuietOpt
from asrbench.cli.zoo_common import ConfigOpt, RemoteOpt, human, kind_id, reporter

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def pull(
    dataset: str = typer.Option(None, "-d", "--dataset", help="dataset ID"),
    model: str = typer.Option(None, "-m", "--model", help="model ID"),
    version: str = typer.Option(
        None, "--version", help="version (default: pinned in zoo.yaml, else latest)"
    ),
    dest: Path = typer.Option(
        None, "--dest", help="where to place it (default datasets/ID or models/ID)"
    ),
    force: bool = typer.Option(
        False, "--force", help="replace an existing folder at the destination"
    ),
    with_image: bool = typer.Option(False, "--with-image", help="also docker load the model image"),
    remote: str = RemoteOpt,
    config: Path = ConfigOpt,
    as_json: bool = JsonOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Download missing objects (verified, resumable) and place the version atomically."""
    kind, entry_id = kind_id(dataset, model)
    from asrbench.zoo.pull import pull as do_pull

    res = do_pull(
        kind,
        entry_id,
        version=version,
        remote=remote,
        dest=dest,
        config=config,
        force=force,
        with_image=with_image,
        reporter=reporter(quiet),
    )
    if as_json:
        typer.echo(json.dumps(res.as_dict(), sort_keys=True))
        return
    state = "placed at" if res.placed else "already at"
    typer.echo(
        f"{kind} {entry_id}@{res.version} from {res.remote} {state} {res.dest}: "
        f"{res.files} files, {human(res.bytes_total)}; downloaded "
        f"{res.objects_downloaded} object(s), {human(res.bytes_downloaded)} "
        f"in {res.seconds:.1f} s"
    )
