"""Command line: `python -m asrbench.zoo.cli push|pull|list|show`.

Wrapped by ops/push, ops/pull and ops/zoo.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from asrbench.zoo.cache import Cache
from asrbench.zoo.config import load_config
from asrbench.zoo.errors import ZooError
from asrbench.zoo.listing import describe, list_entries
from asrbench.zoo.progress import Reporter, RichReporter
from asrbench.zoo.pull import pull as do_pull
from asrbench.zoo.push import push as do_push
from asrbench.zoo.remote import open_remote

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The dataset and model zoo: push, pull, list, show.",
)


def _kind_id(dataset: str | None, model: str | None) -> tuple[str, str]:
    if bool(dataset) == bool(model):
        raise ZooError("give exactly one of -d DATASET_ID or -m MODEL_ID")
    return ("dataset", dataset) if dataset else ("model", model)  # type: ignore[return-value]


def _fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


def _reporter(quiet: bool) -> Reporter:
    return Reporter() if quiet or not sys.stderr.isatty() else RichReporter()


ConfigOpt = typer.Option(None, "--config", help="zoo.yaml to use (default: repo zoo.yaml)")
RemoteOpt = typer.Option(None, "--remote", "-r", help="remote name from zoo.yaml")
JsonOpt = typer.Option(False, "--json", help="print a machine-readable summary")
QuietOpt = typer.Option(False, "--quiet", "-q", help="no progress bar")


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
        None, "--image",
        help="image reference (default: the model's content-addressed image, built if missing)",
    ),
    remote: str = RemoteOpt,
    config: Path = ConfigOpt,
    as_json: bool = JsonOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Upload missing objects, then publish the version's manifest."""
    try:
        kind, entry_id = _kind_id(dataset, model)
        res = do_push(
            kind,
            entry_id,
            source=source,
            remote=remote,
            config=config,
            with_image=with_image,
            image_ref=image,
            reporter=_reporter(quiet),
        )
    except ZooError as exc:
        _fail(exc)
        return
    if as_json:
        typer.echo(json.dumps(res.as_dict(), sort_keys=True))
        return
    state = "already published" if res.already_published else "published"
    typer.echo(
        f"{kind} {entry_id}@{res.version} {state} on {res.remote}: {res.files} files, "
        f"{_human(res.bytes_total)}; uploaded {res.objects_uploaded} object(s), "
        f"{_human(res.bytes_uploaded)} in {res.seconds:.1f} s"
    )


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
    try:
        kind, entry_id = _kind_id(dataset, model)
        res = do_pull(
            kind,
            entry_id,
            version=version,
            remote=remote,
            dest=dest,
            config=config,
            force=force,
            with_image=with_image,
            reporter=_reporter(quiet),
        )
    except ZooError as exc:
        _fail(exc)
        return
    if as_json:
        typer.echo(json.dumps(res.as_dict(), sort_keys=True))
        return
    state = "placed at" if res.placed else "already at"
    typer.echo(
        f"{kind} {entry_id}@{res.version} from {res.remote} {state} {res.dest}: "
        f"{res.files} files, {_human(res.bytes_total)}; downloaded "
        f"{res.objects_downloaded} object(s), {_human(res.bytes_downloaded)} "
        f"in {res.seconds:.1f} s"
    )


@app.command("list")
def list_cmd(remote: str = RemoteOpt, config: Path = ConfigOpt, as_json: bool = JsonOpt) -> None:
    """Entries held by each remote (or one), with versions and sizes, and the local cache."""
    try:
        cfg = load_config(config)
        names = [remote] if remote else sorted(cfg.remotes)
        out: dict = {"remotes": {}, "cache": {}}
        for name in names:
            spec = cfg.remote(name)
            rem = open_remote(spec, cfg.base)
            try:
                entries = list_entries(rem)
                rows = [describe(rem, k, i, vs) for (k, i), vs in sorted(entries.items())]
            except ZooError as exc:
                out["remotes"][name] = {"url": spec.url, "error": str(exc)}
                continue
            finally:
                rem.close()
            out["remotes"][name] = {"url": spec.url, "entries": [r.__dict__ for r in rows]}
        cache = Cache()
        count, size = cache.usage()
        out["cache"] = {"path": str(cache.root), "objects": count, "bytes": size,
                        "entries": cache.cached_entries()}
    except ZooError as exc:
        _fail(exc)
        return
    if as_json:
        typer.echo(json.dumps(out, sort_keys=True, default=str))
        return
    for name, info in out["remotes"].items():
        typer.echo(f"remote {name} ({info['url']})")
        if "error" in info:
            typer.echo(f"  unavailable: {info['error']}")
            continue
        if not info["entries"]:
            typer.echo("  (empty)")
        for e in info["entries"]:
            latest = next((v for v in e["versions"] if v["version"] == e["latest"]), None)
            size = _human(latest["bytes"]) if latest and "bytes" in latest else "?"
            typer.echo(
                f"  {e['kind']:<8} {e['id']:<24} {len(e['versions'])} version(s), "
                f"latest {e['latest']} ({size})"
            )
    c = out["cache"]
    typer.echo(f"local cache {c['path']}: {c['objects']} object(s), {_human(c['bytes'])}")
    for name, versions in c["entries"].items():
        typer.echo(f"  {name}: {', '.join(versions)}")


@app.command()
def show(
    kind: str = typer.Argument(..., help="dataset or model"),
    entry_id: str = typer.Argument(..., metavar="ID"),
    remote: str = RemoteOpt,
    config: Path = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Every version of one entry: date, files, size, whether the local cache holds it."""
    try:
        if kind not in ("dataset", "model"):
            raise ZooError("KIND must be 'dataset' or 'model'")
        cfg = load_config(config)
        spec = cfg.remote_for(kind, entry_id, remote)
        rem = open_remote(spec, cfg.base)
        try:
            versions = list_entries(rem).get((kind, entry_id), [])
            summary = describe(rem, kind, entry_id, versions)
        finally:
            rem.close()
    except ZooError as exc:
        _fail(exc)
        return
    if as_json:
        typer.echo(json.dumps({"remote": spec.name, **summary.__dict__}, sort_keys=True))
        return
    typer.echo(f"{kind} {entry_id} on {spec.name} ({spec.url})")
    if not summary.versions:
        typer.echo("  no versions")
    for v in summary.versions:
        if "error" in v:
            typer.echo(f"  {v['version']}  BROKEN: {v['error']}")
            continue
        tag = " (latest)" if v["version"] == summary.latest else ""
        img = f", image {v['image']}" if v.get("image") else ""
        typer.echo(
            f"  {v['version']}  {v['created']}  {v['files']} files  {_human(v['bytes'])}"
            f"{img}  {'cached' if v['cached'] else 'not cached'}{tag}"
        )


if __name__ == "__main__":
    app()
