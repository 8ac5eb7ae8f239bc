"""Docker Engine access, the locally built base image, and model image builds.

No registry can be assumed: the default base image is built from Debian packages with
debootstrap + `docker import` (`make base-image`), and model images install their Python
requirements from a host-side wheelhouse (hermetic: no network inside the build). Users with
a registry pass `--build-arg BASE_IMAGE=python:3.11-slim-bookworm`; users behind a
TLS-intercepting proxy who build from the network pass their CA bundle.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from asrbench.errors import AsrbenchError, InputError
from asrbench.modelcard import Model, has_requirements
from asrbench.settings import REPO_ROOT, settings

BASE_IMAGE = "asrbench/base:bookworm"
BASE_SCRIPT = REPO_ROOT / "scripts" / "build_base_image.sh"
CONTEXT_DIR = Path(__file__).resolve().parent / "docker_context"


class DockerUnavailable(AsrbenchError):
    """No Docker Engine answers."""


def client(timeout: int = 600):
    """A connected docker SDK client, or DockerUnavailable with what to do."""
    import docker
    from docker.errors import DockerException

    try:
        c = docker.from_env(timeout=timeout)
        c.ping()
        return c
    except DockerException as exc:
        raise DockerUnavailable(
            "no Docker Engine answers (is dockerd running? `sudo scripts/start_dockerd.sh` "
            f"starts one; or use --runner local): {exc}"
        ) from exc


def engine_available() -> bool:
    try:
        client(timeout=5)
        return True
    except DockerUnavailable:
        return False


def image_size(image_id: str | None) -> int | None:
    """Size in bytes of a local image (a run's `model_identity`), None if unknown or gone."""
    if not image_id or not image_id.startswith("sha256:"):
        return None
    try:
        engine = client(timeout=10)
    except DockerUnavailable:
        return None
    from docker.errors import APIError, ImageNotFound

    try:
        return int(engine.images.get(image_id).attrs["Size"])
    except (ImageNotFound, APIError):
        return None


def ensure_base_image(name: str = BASE_IMAGE) -> str:
    """Return the base image's ID, building it with debootstrap first if it is missing."""
    from docker.errors import ImageNotFound

    c = client()
    try:
        return c.images.get(name).id
    except ImageNotFound:
        pass
    if name != "asrbench/base:bookworm":
        # A public base image (users with a registry): pull it once.
        try:
            return c.images.pull(name).id
        except Exception as exc:
            raise DockerUnavailable(
                f"base image {name} is not here and could not be pulled ({exc}); `docker load` "
                "it, or unset ASRBENCH_BASE_IMAGE to build asrbench/base:bookworm locally"
            ) from exc
    print(f"building base image {name} with debootstrap (about a minute)...", file=sys.stderr)
    subprocess.run(["bash", str(BASE_SCRIPT), name], check=True)
    return c.images.get(name).id


@dataclass
class BuildOptions:
    """How to build a model image. Every field goes into the image tag's hash."""

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
    def from_settings(cls, base_image: str | None = None, mode: str | None = None,
                      ca_bundle: Path | None = None,
                      build_args: dict[str, str] | None = None) -> BuildOptions:
        """The settings' choices, each overridden by a command-line value when given."""
        s = settings()
        return cls(base_image=base_image or s.base_image, mode=mode or s.build_mode,
                   ca_bundle=ca_bundle or s.ca_bundle, build_args=dict(build_args or {}))


def wheelhouse(requirements: Path) -> Path:
    """Host-side wheelhouse for a requirements file, cached by its content."""
    key = hashlib.sha256(requirements.read_bytes() + sys.version.encode()).hexdigest()[:16]
    dest = settings().cache / "wheelhouse" / key
    if (dest / ".complete").is_file():
        return dest
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # The host runs the same CPython minor version as the image (3.11), so plain `pip download`
    # picks wheels that install there; --only-binary keeps builds free of compilers.
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
         "-d", str(tmp), "-r", str(requirements)],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"pip download for {requirements} failed (exit {proc.returncode}); a hermetic build "
            f"needs wheels for every requirement:\n{proc.stderr[-3000:]}"
        )
    (tmp / ".complete").write_text("ok\n")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    return dest


def image_tag(model: Model, base_id: str, opts: BuildOptions) -> str:
    spec = {
        "model": model.source_hash(),
        "base": base_id,
        "mode": opts.mode,
        "ca": hashlib.sha256(opts.ca_bundle.read_bytes()).hexdigest() if opts.ca_bundle else "",
        "args": opts.build_args,
        "install": hashlib.sha256((CONTEXT_DIR / "install.sh").read_bytes()).hexdigest(),
    }
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    return f"asrbench/{model.id}:{digest}"


def build_model_image(model: Model, opts: BuildOptions | None = None, log=None) -> tuple[str, str]:
    """Build (or reuse) the model's image; return (tag, image ID). Rebuilds only on change."""
    from docker.errors import BuildError, ImageNotFound

    opts = opts or BuildOptions()
    c = client()
    base_id = ensure_base_image(opts.base_image)
    tag = image_tag(model, base_id, opts)
    try:
        return tag, c.images.get(tag).id
    except ImageNotFound:
        pass
    with tempfile.TemporaryDirectory(prefix=f"asrbench-build-{model.id}-") as ctx_name:
        ctx = Path(ctx_name)
        shutil.copytree(model.root, ctx, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".venv"))
        build = ctx / ".build"
        (build / "wheels").mkdir(parents=True, exist_ok=True)
        shutil.copy2(CONTEXT_DIR / "install.sh", build / "install.sh")
        if opts.mode == "wheelhouse" and has_requirements(model.root / "requirements.txt"):
            for whl in wheelhouse(model.root / "requirements.txt").iterdir():
                if whl.name != ".complete":
                    shutil.copy2(whl, build / "wheels" / whl.name)
        if opts.ca_bundle:
            shutil.copy2(opts.ca_bundle, build / "ca.crt")
        args = {"BASE_IMAGE": opts.base_image, "BUILD_MODE": opts.mode, **opts.build_args}
        try:
            _, logs = c.images.build(
                path=str(ctx), tag=tag, buildargs=args, rm=True, forcerm=True,
                network_mode="host" if opts.mode == "network" else "none",
                labels={"org.asrbench.model": model.id,
                        "org.asrbench.source-hash": model.source_hash()},
            )
            for chunk in logs:
                if log and "stream" in chunk:
                    log.write(chunk["stream"])
        except BuildError as exc:
            tail = "".join(str(x.get("stream", x.get("error", ""))) for x in exc.build_log)
            raise RuntimeError(
                f"building the image of model {model.id} failed: {exc.msg}\n"
                f"{tail[-3000:]}"
            ) from exc
    return tag, c.images.get(tag).id
