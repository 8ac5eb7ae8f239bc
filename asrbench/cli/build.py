"""`asrbench build` (ops/build): build (or reuse) model images, with registry-free options."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from asrbench.cli.options import parse_pairs

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def build(
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
    from asrbench.docker_build import BuildOptions, build_model_image
    from asrbench.resolve import resolve_model

    opts = BuildOptions.from_settings(base_image=base_image, mode=build_mode,
                                      ca_bundle=ca_bundle,
                                      build_args=parse_pairs(build_arg, "--build-arg"))
    for m in model:
        tag, image_id = build_model_image(resolve_model(m), opts,
                                          log=sys.stderr if verbose else None)
        typer.echo(f"{tag}\t{image_id}")
