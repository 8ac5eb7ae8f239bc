"""Model images as `docker save` archives, for machines without a registry (`docker load`)."""

from __future__ import annotations

from pathlib import Path

from asrbench.fsio import atomic_file
from asrbench.zoo.errors import ZooError


def _client():
    try:
        import docker

        client = docker.from_env()
        client.ping()
        return client
    except Exception as exc:  # docker raises several types when the daemon is absent
        raise ZooError(
            f"Docker Engine not reachable ({type(exc).__name__}: {exc}); start "
            "dockerd or set DOCKER_HOST"
        ) from exc


def save_image(ref: str, dest: Path) -> dict:
    """`docker save` image `ref` to `dest`; return {"ref", "id"} describing it."""
    import docker

    client = _client()
    try:
        image = client.images.get(ref)
    except docker.errors.ImageNotFound as exc:
        raise ZooError(
            f"image {ref!r} not found locally; build the model first or pass --image"
        ) from exc
    with atomic_file(dest) as f:
        for chunk in image.save(named=ref):
            f.write(chunk)
    return {"ref": ref, "id": image.id}


def load_image(archive: Path) -> list[str]:
    """`docker load` an archive; return the tags of the loaded images."""
    client = _client()
    with open(archive, "rb") as f:
        images = client.images.load(f)
    return [tag for img in images for tag in (img.tags or [img.id])]
