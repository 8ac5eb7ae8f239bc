"""The Docker Engine: a connected client, image sizes, and the locally built base image.

No registry can be assumed: the default base image is built from Debian packages with
debootstrap + `docker import` (`make base-image`); a public base image named by the user is
pulled once.
"""

from __future__ import annotations

import subprocess
import sys

from asrbench.errors import AsrbenchError
from asrbench.settings import BASE_IMAGE, REPO_ROOT

BASE_SCRIPT = REPO_ROOT / "scripts" / "build_base_image.sh"


class DockerUnavailable(AsrbenchError):
    """No Docker Engine answers, or the base image cannot be had."""


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
    from docker.errors import APIError, ImageNotFound

    c = client()
    try:
        return c.images.get(name).id
    except ImageNotFound:
        pass
    if name != BASE_IMAGE:
        # A public base image (users with a registry): pull it once.
        try:
            return c.images.pull(name).id
        except APIError as exc:
            raise DockerUnavailable(
                f"base image {name} is not here and could not be pulled ({exc}); `docker load` "
                f"it, or unset ASRBENCH_BASE_IMAGE to build {BASE_IMAGE} locally"
            ) from exc
    print(f"building base image {name} with debootstrap (about a minute)...", file=sys.stderr)
    proc = subprocess.run(["bash", str(BASE_SCRIPT), name], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise DockerUnavailable(
            f"building the base image {name} with {BASE_SCRIPT} failed (exit {proc.returncode}; "
            f"it needs root and debootstrap: `sudo make base-image`):\n{tail}"
        )
    return c.images.get(name).id
