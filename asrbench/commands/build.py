"""`ops/build -m MODEL`: build (or reuse) a model's image, with registry-free options."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from asrbench.docker_build import BuildOptions, DockerUnavailable, build_model_image
from asrbench.modelcard import ModelCardError, load_model

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def main(
    model: list[str] = typer.Option(..., "-m", "--model", help="model ID or folder (repeatable)"),
    base_image: str = typer.Option(
        None, "--base-image",
        help="base image (default asrbench/base:bookworm, built with debootstrap; "
             "e.g. python:3.11-slim-bookworm where a registry is reachable)"),
    build_mode: str = typer.Option(
        None, "--build-mode",
        help="wheelhouse: pip downloads on the host, the build needs no network (default); "
             "network: pip runs inside the build (with --network host)"),
    ca_bundle: Path = typer.Option(
        None, "--ca-bundle", help="extra CA bundle for network builds behind a TLS proxy"),
    build_arg: list[str] = typer.Option(
        None, "--build-arg", help="KEY=VALUE passed to the Dockerfile (repeatable)"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="stream the build log"),
) -> None:
    args = {}
    for item in build_arg or []:
        key, sep, value = item.partition("=")
        if not sep:
            typer.echo(f"error: --build-arg {item!r}: expected KEY=VALUE", err=True)
            raise typer.Exit(2)
        args[key] = value
    try:
        opts = BuildOptions(build_args=args)
        if base_image:
            opts.base_image = base_image
        if build_mode:
            opts.mode = build_mode
        if ca_bundle:
            opts.ca_bundle = ca_bundle
        opts.__post_init__()
        for m in model:
            tag, image_id = build_model_image(load_model(m), opts,
                                              log=sys.stderr if verbose else None)
            typer.echo(f"{tag}\t{image_id}")
    except (ModelCardError, DockerUnavailable, ValueError, RuntimeError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


if __name__ == "__main__":
    sys.exit(app())
