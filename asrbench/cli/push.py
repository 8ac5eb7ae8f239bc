"""`asrbench push` (ops/push): publish a dataset or model version to a zoo remote."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from asrbench.cli.options import JsonOpt, QuietOpt
from asrbench.cli.zoo_common import ConfigOpt, RemoteOpt, human, kind_id, reporter

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def push(
    dataset: str = typer.Option(None, "-d", "--dataset", help="dataset ID"),
    model: str = typer.Option(None, "-m", "--model", help="model ID"),
    source: Path = typer.Option(
        None, "--source", help="folder to push (default datasets/ID or models/ID)"
    ),
    with_image: bool = typer.Option(
        False, "--with-image", help="also push the model image (docker save)"
    ),
    image: str = typer.Option(
        None,
        "--image",
        help="image reference (default: the model's content-addressed image, built if missing)",
    ),
    remote: str = RemoteOpt,
    config: Path = ConfigOpt,
    as_json: bool = JsonOpt,
    quiet: bool = QuietOpt,
    verify_remote: bool = typer.Option(
        False,
        "--verify",
        help="re-hash objects the remote already holds (reads them back) "
        "and re-upload any that are corrupt; objects a pull found corrupt are always re-hashed",
    ),
) -> None:
    """Upload missing objects, then publish the version's manifest."""
    kind, entry_id = kind_id(dataset, model)
    from asrbench.zoo.push import push as do_push

    res = do_push(
        kind,
        entry_id,
        source=source,
        remote=remote,
        config=config,
        with_image=with_image,
        image_ref=image,
        reporter=reporter(quiet),
        verify_remote=verify_remote,
    )
    if as_json:
        typer.echo(json.dumps(res.as_dict(), sort_keys=True))
        return
    state = "already published" if res.already_published else "published"
    typer.echo(
        f"{kind} {entry_id}@{res.version} {state} on {res.remote}: {res.files} files, "
        f"{human(res.bytes_total)}; uploaded {res.objects_uploaded} object(s), "
        f"{human(res.bytes_uploaded)} in {res.seconds:.1f} s"
    )
