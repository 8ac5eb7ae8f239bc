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
        None,
        "--base-image",
        help="base image (default asrbench/base:bookworm, built with debootstrap; "
        "e.g. python:3.11-slim-bookworm where a registry is reachable)",
    ),
    build_mode: str = typer.Option(
        None,
        "--build-mode",
        help="wheelhouse: pip downloads on the host, the build needs no network (default); "
        "network: pip runs inside the build (with --network host)",
    ),
    ca_bundle: Path = typer.Option(
        None, "--ca-bundle", help="extra CA bundle for network builds behind a TLS proxy"
    ),
    build_arg: list[str] = typer.Option(
        None,
        "--build-arg",
        help="KEY=VALUE, one of the build arguments the card declares under image.build_args "
        "(repeatable), e.g. WHISPER_MODEL=tiny.en with --build-mode network",
    ),
    gpus: bool = typer.Option(
        False,
        "--gpus",
        help="the card's CUDA variant (image.cuda: CUDA wheels, tagged -cuda); an error for a "
        "card without one, naming why (docs/MODELS.md, GPU images)",
    ),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="print the build log"),
    print_dockerfile: bool = typer.Option(
        False,
        "--print-dockerfile",
        help="print the Dockerfile rendered from the card (or the model's own) and build nothing",
    ),
) -> None:
    from asrbench.images import BuildOptions, build_model_image, render_dockerfile
    from asrbench.modelcard import cuda_variant
    from asrbench.resolve import resolve_model

    models = [resolve_model(m) for m in model]  # every card checked before any build starts
    if gpus:
        models = [cuda_variant(m) for m in models]
    if print_dockerfile:
        for mdl in models:
            typer.echo(render_dockerfile(mdl), nl=False)
        return
    opts = BuildOptions.from_settings(
        base_image=base_image,
        mode=build_mode,
        ca_bundle=ca_bundle,
        build_args=parse_pairs(build_arg, "--build-arg"),
    )
    for mdl in models:
        tag, image_id = build_model_image(mdl, opts, log=sys.stderr if verbose else None)
        typer.echo(f"{tag}\t{image_id}")
