"""`asrbench zoo` (ops/zoo): what the zoo remotes hold (list, show) and whether it is intact
(verify [--repair])."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from asrbench.cli.options import JsonOpt
from asrbench.cli.zoo_common import ConfigOpt, RemoteOpt, human
from asrbench.zoo.cache import Cache
from asrbench.zoo.config import load_config
from asrbench.zoo.errors import ZooError, ZooInputError
from asrbench.zoo.listing import describe, list_entries
from asrbench.zoo.remote import open_remote

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)


@app.command("list")
def list_cmd(remote: str = RemoteOpt, config: Path = ConfigOpt, as_json: bool = JsonOpt) -> None:
    """Entries held by each remote (or one), with versions and sizes, and the local cache."""
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
    out["cache"] = {
        "path": str(cache.root),
        "objects": count,
        "bytes": size,
        "entries": cache.cached_entries(),
    }
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
            shown = human(latest["bytes"]) if latest and "bytes" in latest else "?"
            typer.echo(
                f"  {e['kind']:<8} {e['id']:<24} {len(e['versions'])} version(s), "
                f"latest {e['latest']} ({shown})"
            )
    c = out["cache"]
    typer.echo(f"local cache {c['path']}: {c['objects']} object(s), {human(c['bytes'])}")
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
    if kind not in ("dataset", "model"):
        raise ZooInputError("KIND must be 'dataset' or 'model'")
    cfg = load_config(config)
    spec = cfg.remote_for(kind, entry_id, remote)
    rem = open_remote(spec, cfg.base)
    try:
        versions = list_entries(rem).get((kind, entry_id), [])
        summary = describe(rem, kind, entry_id, versions)
    finally:
        rem.close()
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
            f"  {v['version']}  {v['created']}  {v['files']} files  {human(v['bytes'])}"
            f"{img}  {'cached' if v['cached'] else 'not cached'}{tag}"
        )


@app.command()
def verify(
    dataset: str = typer.Option(None, "-d", "--dataset", help="dataset ID"),
    model: str = typer.Option(None, "-m", "--model", help="model ID"),
    version: str = typer.Option(None, "--version", help="version (default: latest)"),
    repair: bool = typer.Option(
        False,
        "--repair",
        help="re-upload corrupt or missing objects "
        "from a good local copy (zoo cache or the entry's folder)",
    ),
    source: Path = typer.Option(
        None, "--source", help="folder with good copies (default datasets/ID or models/ID)"
    ),
    remote: str = RemoteOpt,
    config: Path = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Read every object of a version back from the remote and check its SHA-256."""
    from asrbench.cli.zoo_common import kind_id
    from asrbench.zoo.progress import Reporter
    from asrbench.zoo.verify import verify as do_verify

    kind, entry_id = kind_id(dataset, model)
    res = do_verify(
        kind,
        entry_id,
        version=version,
        remote=remote,
        config=config,
        repair=repair,
        source=source,
        reporter=Reporter(),
    )
    if as_json:
        typer.echo(json.dumps(res.as_dict(), sort_keys=True))
    else:
        typer.echo(
            f"{kind} {entry_id}@{res.version} on {res.remote}: {res.objects} object(s), "
            f"{human(res.bytes_read)} read back in {res.seconds:.1f} s; "
            f"{len(res.bad)} bad, {len(res.repaired)} repaired"
        )
        for b in res.bad:
            typer.echo(f"  bad: {b['path']} ({b['why']})")
        for u in res.unrepaired:
            typer.echo(f"  not repaired: {u['path']}: {u['why']}")
        if res.bad and not repair:
            typer.echo("  rerun with --repair to re-upload them from a good local copy")
    if not res.ok:
        raise typer.Exit(1)
