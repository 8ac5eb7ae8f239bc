"""The one Dockerfile template, rendered from a model card (its `program` and `image:` section).

Every model image has the same shape: the base image, a virtualenv with the model's pinned
requirements (installed by `install.sh` from the host wheelhouse, or from the network), the
model's source files in /opt/model, an optional build-time step (assemble the weights) and the
card's program as the entry point, which is also what the local runner runs. Two stages: the
build stage installs and prepares, the image takes only its /opt, so the wheelhouse copied into
the build context (and any weights package uninstalled after `prepare`) never reaches a layer
of the image. A model folder
that holds its own `Dockerfile` is built from that instead (`Model.dockerfile`). The CUDA
variant (`Model.variant`, the card's `image.cuda`) is the same template: only its requirements
(asrbench.images.build) and its environment (`image.cuda.env`, ASRBENCH_DEVICE=cuda) differ.

`string.Template` with `@` as its delimiter is enough: the template has no loops or conditions
of its own (the optional parts are rendered here), and `$` stays free for Dockerfile variables.
"""

from __future__ import annotations

import json
import shlex
import string
from collections import defaultdict
from pathlib import PurePosixPath

from asrbench.modelcard import DEVICE_ENV, Model

MODEL_DIR = "/opt/model"
WEIGHTS_DIR = "/opt/weights"  # user-supplied weights land here (card `weights.dir`)
WEIGHTS_CONTEXT = ".weights"  # ... from this folder of the build context
PYTHON = "/opt/venv/bin/python"
PIP = "/opt/venv/bin/pip"
VENV_SITE = "/opt/venv/lib/python3.11/site-packages"
BUILD_DIR = ".build"  # in the build context: install.sh, requirements, wheels, CA bundle
# The rendered Dockerfile's name in the build context: hidden, so never a model source file, and
# outside .build/ so that it does not invalidate the cached install layer.
CONTEXT_NAME = ".asrbench.Dockerfile"


class _Template(string.Template):
    delimiter = "@"


TEMPLATE = _Template("""\
# Rendered by asrbench from @{card}: change the card (`program`, `image:`), not this file.
@{variant}ARG BASE_IMAGE=asrbench/base:bookworm
FROM ${BASE_IMAGE} AS build
ARG BUILD_MODE=wheelhouse
@{build_args}COPY @{build_dir}/ /opt/build/
@{copy_before}# One layer: the requirements, then the card's build-time step and uninstalls, if any.
RUN @{run}
# The image: the base plus what the build stage left under /opt (virtualenv, prepared weights,
# the model's files); the wheelhouse and the build context stay behind in the build stage.
FROM ${BASE_IMAGE}
COPY --from=build /opt /opt
@{copy_after}@{copy_weights}ENV @{env}
ENTRYPOINT @{entrypoint}
""")


def entrypoint(program: str) -> list[str]:
    """The image's entry point: the card's program, with the image's Python."""
    return [PYTHON, f"{MODEL_DIR}/{program}"]


def copy_lines(relpaths: list[str]) -> str:
    """COPY instructions placing the source files under /opt/model, one per folder."""
    by_dir: dict[str, list[str]] = defaultdict(list)
    for rel in relpaths:
        parent = PurePosixPath(rel).parent.as_posix()
        by_dir[parent].append(rel)
    lines = []
    for parent in sorted(by_dir):
        dest = MODEL_DIR + "/" if parent == "." else f"{MODEL_DIR}/{parent}/"
        lines.append(f"COPY {json.dumps([*sorted(by_dir[parent]), dest])}\n")
    return "".join(lines)


def _cuda_note(pins: list[str]) -> str:
    """Comment lines naming the CUDA wheels the variant installs besides requirements.txt."""
    lines = ["# CUDA variant: requirements.txt plus these wheels (image.cuda.requirements):"]
    lines += [f"#   {pin}" for pin in pins]
    return "".join(line + "\n" for line in lines)


def render(model: Model) -> str:
    """The Dockerfile of `model`'s image: its own, or the template rendered from its card."""
    if model.dockerfile is not None:
        return model.dockerfile.read_text(encoding="utf-8")
    card, image = model.card, model.card.image
    # image.no_deps: pip reads its --no-deps from PIP_NO_DEPS (the other cards' lines unchanged)
    no_deps = "PIP_NO_DEPS=1 " if image.no_deps else ""
    run = [
        f'BUILD_MODE="$BUILD_MODE" {no_deps}sh /opt/build/install.sh /opt/build/requirements.txt',
        "rm -rf /opt/build",
    ]
    if image.prepare:
        program, *args = image.prepare
        run.append(shlex.join([PYTHON, f"{MODEL_DIR}/{program}", *args]))
    if image.uninstall:
        run.append(shlex.join([PIP, "uninstall", "--yes", "--quiet", *image.uninstall]))
    # pip installs, the image runs: it carries no package installer (nor compiler: the base has
    # none, and every requirement is a wheel).
    run.append(f"rm -rf {VENV_SITE}/pip {VENV_SITE}/pip-*.dist-info /opt/venv/bin/pip*")
    copy = copy_lines(list(model.source_files()))
    # User-supplied weights (card `weights.dir` or `weights.hub`), verified on the host and
    # placed in the build context by the build (asrbench.images.weights), in their own layer
    # after the install.
    weights = card.extra.get("weights")
    user_weights = isinstance(weights, dict) and (weights.get("dir") or weights.get("hub"))
    env = {"HOME": "/tmp", "LANG": "C.UTF-8", **image.env}
    cuda = image.cuda if model.variant == "cuda" else None
    if cuda is not None:  # the program picks the GPU when one is visible, else the CPU
        env.update({**cuda.env, DEVICE_ENV: "cuda"})
    return TEMPLATE.substitute(
        card=f"{card.id}/model.yaml" + (", its image.cuda variant" if cuda else ""),
        variant=_cuda_note(cuda.requirements) if cuda else "",
        build_dir=BUILD_DIR,
        build_args="".join(
            f"ARG {k}={json.dumps(v) if v else ''}\n" for k, v in sorted(image.build_args.items())
        ),
        # The build-time step runs the model's own files, so they go in first; otherwise last,
        # so that editing the program reuses the install layer from Docker's cache.
        copy_before=copy if image.prepare else "",
        copy_after="" if image.prepare else copy,
        copy_weights=(
            f"COPY {json.dumps([WEIGHTS_CONTEXT + '/', WEIGHTS_DIR + '/'])}\n"
            if user_weights
            else ""
        ),
        run=" \\\n && ".join(run),
        env=" ".join(f"{k}={json.dumps(v)}" for k, v in env.items()),
        entrypoint=json.dumps(entrypoint(card.program)),
    )
