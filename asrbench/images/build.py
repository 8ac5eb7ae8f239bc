"""Model image builds: options, the host wheelhouse, the build context, the tag, the build.

Model images install their Python requirements from a host-side wheelhouse by default
(hermetic: no network inside the build). Users with a registry pass another base image; users
behind a TLS-intercepting proxy who build from the network pass their CA bundle. The tag is
`asrbench/<ID>:` + short(digest("image", ...)) over everything that goes into the image, so an
image is rebuilt exactly when one of them changes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from asrbench.errors import AsrbenchError, InputError
from asrbench.fsio import replace_dir, stage_dir
from asrbench.identity import bytes_sha256, digest, file_sha256, short
from asrbench.images.dockerfile import BUILD_DIR, CONTEXT_NAME, render
from asrbench.images.engine import client, ensure_base_image
from asrbench.images.weights import WEIGHTS_CONTEXT, check_card, verify_user_weights
from asrbench.modelcard import PLATFORM_BUILD_ARGS, Model, has_requirements
from asrbench.settings import settings

INSTALL_SCRIPT = Path(__file__).resolve().parent / "install.sh"
BUILD_TIMEOUT_S = 3600  # the engine may say nothing for minutes while pip installs quietly
LOG_TAIL_CHARS = 3000


class ImageBuildError(AsrbenchError):
    """A model image that could not be built; names the model and carries the log tail."""

    def __init__(self, model_id: str, what: str, log_tail: str = ""):
        self.model_id, self.log_tail = model_id, log_tail
        tail = f"\n{log_tail[-LOG_TAIL_CHARS:]}" if log_tail.strip() else ""
        super().__init__(f"building the image of model {model_id} failed: {what}{tail}")


@dataclass
class BuildOptions:
    """How to build a model image. Every field goes into the image tag's digest."""

    # Defaults come from the settings so every command (benchmark, serve, push) builds alike:
    # ASRBENCH_BASE_IMAGE, ASRBENCH_BUILD_MODE (wheelhouse | network), ASRBENCH_CA_BUNDLE.
    base_image: str = field(default_factory=lambda: settings().base_image)
    mode: str = field(default_factory=lambda: settings().build_mode)
    ca_bundle: Path | None = field(default_factory=lambda: settings().ca_bundle)
    build_args: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in ("wheelhouse", "network"):
            raise InputError(f"build mode {self.mode!r}: choose wheelhouse or network")
        if self.ca_bundle is not None and not Path(self.ca_bundle).is_file():
            raise InputError(f"CA bundle {self.ca_bundle} not found")

    @classmethod
    def from_settings(
        cls,
        base_image: str | None = None,
        mode: str | None = None,
        ca_bundle: Path | None = None,
        build_args: dict[str, str] | None = None,
    ) -> BuildOptions:
        """The settings' choices, each overridden by a command-line value when given."""
        s = settings()
        return cls(
            base_image=base_image or s.base_image,
            mode=mode or s.build_mode,
            ca_bundle=ca_bundle or s.ca_bundle,
            build_args=dict(build_args or {}),
        )


def check_build_args(model: Model, opts: BuildOptions) -> None:
    """A rendered image takes only the build arguments its card declares (InputError)."""
    if model.dockerfile is not None:
        return  # the model's own Dockerfile declares its ARGs
    unknown = sorted(set(opts.build_args) - set(model.card.image.build_args))
    if unknown:
        takes = ", ".join(sorted(model.card.image.build_args)) or "none"
        platform = set(unknown) & set(PLATFORM_BUILD_ARGS)
        hint = " (use --base-image / --build-mode)" if platform else ""
        raise InputError(
            f"model {model.id}: build argument(s) {', '.join(unknown)} not declared "
            f"in {model.card_path} (image.build_args: {takes}){hint}"
        )


def wheelhouse(model: Model) -> Path | None:
    """Host-side wheels for the model's requirements, keyed by its environment digest."""
    req = model.requirements
    if not has_requirements(req):
        return None
    dest = settings().cache / "wheelhouse" / short(model.environment_digest())
    if (dest / ".complete").is_file():
        return dest
    tmp = stage_dir(dest)
    # The host runs the same CPython minor version as the image (3.11), so plain `pip download`
    # picks wheels that install there; --only-binary keeps builds free of compilers.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--only-binary=:all:",
            "-d",
            str(tmp),
            "-r",
            str(req),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise ImageBuildError(
            model.id,
            f"pip download for {req} failed (exit {proc.returncode}); a hermetic "
            "build needs a wheel for every requirement (or use --build-mode network)",
            proc.stderr,
        )
    (tmp / ".complete").write_text("ok\n")
    return replace_dir(tmp, dest)


def image_key(model: Model, base_id: str, opts: BuildOptions, dockerfile: str) -> str:
    """digest("image", ...): the source, the base image, how it is built, what renders it."""
    return digest(
        "image",
        source=model.source_hash(),
        base=base_id,
        mode=opts.mode,
        ca_bundle=file_sha256(opts.ca_bundle) if opts.ca_bundle else None,
        build_args=dict(opts.build_args),
        template={
            "dockerfile": bytes_sha256(dockerfile.encode()),
            "install": file_sha256(INSTALL_SCRIPT),
        },
    )


def image_tag(model: Model, base_id: str, opts: BuildOptions, dockerfile: str | None = None) -> str:
    """`asrbench/<ID>:<short image digest>`."""
    dockerfile = render(model) if dockerfile is None else dockerfile
    return f"asrbench/{model.id}:{short(image_key(model, base_id, opts, dockerfile))}"


def build_context(
    model: Model, opts: BuildOptions, dest: Path, dockerfile: str | None = None
) -> str:
    """Lay out the build context in `dest`; return the Dockerfile's path inside it.

    `dest` holds the model's source files (shared helpers copied in, as in /opt/model),
    `.build/` (install.sh, requirements.txt, the wheelhouse, the CA bundle) and, for a rendered
    image, the Dockerfile.
    """
    model.assemble(dest)
    build = dest / BUILD_DIR
    (build / "wheels").mkdir(parents=True, exist_ok=True)
    shutil.copy2(INSTALL_SCRIPT, build / "install.sh")
    if model.requirements is not None:
        shutil.copy2(model.requirements, build / "requirements.txt")
    else:
        (build / "requirements.txt").write_text("# standard library only\n")
    if opts.mode == "wheelhouse":
        wheels = wheelhouse(model)
        for whl in wheels.iterdir() if wheels else ():
            if whl.name != ".complete":
                shutil.copy2(whl, build / "wheels" / whl.name)
    if opts.ca_bundle:
        shutil.copy2(opts.ca_bundle, build / "ca.crt")
    spec = check_card(model)
    if spec is not None and (spec.dir is not None or spec.hub is not None):
        verify_user_weights(model, spec, dest / WEIGHTS_CONTEXT, opts.mode)
    if model.dockerfile is not None:
        return "Dockerfile"
    (dest / CONTEXT_NAME).write_text(
        render(model) if dockerfile is None else dockerfile, encoding="utf-8"
    )
    return CONTEXT_NAME


def build_model_image(
    model: Model, opts: BuildOptions | None = None, log: TextIO | None = None
) -> tuple[str, str]:
    """Build (or reuse) the model's image; return (tag, image ID). Rebuilds only on change."""
    import requests
    from docker.errors import APIError, BuildError, ImageNotFound

    opts = opts or BuildOptions()
    check_build_args(model, opts)
    spec = check_card(model)  # unknown fields, malformed weights: before any work
    if spec is not None and (spec.dir is not None or spec.hub is not None):
        # a missing or corrupt file: before the engine; a lock is written before the tag
        verify_user_weights(model, spec, mode=opts.mode)
    c = client()
    base_id = ensure_base_image(opts.base_image)
    dockerfile = render(model)
    tag = image_tag(model, base_id, opts, dockerfile)
    try:
        return tag, c.images.get(tag).id
    except ImageNotFound:
        pass
    with tempfile.TemporaryDirectory(prefix=f"asrbench-build-{model.id}-") as ctx_name:
        ctx = Path(ctx_name)
        dockerfile_path = build_context(model, opts, ctx, dockerfile)
        args = {"BASE_IMAGE": opts.base_image, "BUILD_MODE": opts.mode, **opts.build_args}
        try:
            _, logs = c.images.build(
                path=str(ctx),
                dockerfile=dockerfile_path,
                tag=tag,
                buildargs=args,
                rm=True,
                forcerm=True,
                timeout=BUILD_TIMEOUT_S,
                network_mode="host" if opts.mode == "network" else "none",
                labels={
                    "org.asrbench.model": model.id,
                    "org.asrbench.source-hash": model.source_hash(),
                },
            )
        except BuildError as exc:
            tail = "".join(str(x.get("stream") or x.get("error") or "") for x in exc.build_log)
            raise ImageBuildError(model.id, exc.msg, tail) from None
        except APIError as exc:  # e.g. a Dockerfile the engine cannot parse
            raise ImageBuildError(
                model.id, f"the Docker Engine refused the build: {exc.explanation or exc}"
            ) from None
        except requests.exceptions.RequestException as exc:
            raise ImageBuildError(
                model.id, f"lost the Docker Engine during the build ({type(exc).__name__}: {exc})"
            ) from None
        if log is not None:
            for chunk in logs:
                if "stream" in chunk:
                    log.write(chunk["stream"])
    try:
        return tag, c.images.get(tag).id
    except ImageNotFound:
        raise ImageBuildError(model.id, f"the build ended but {tag} is not in the engine") from None
