"""The Docker runner on a cluster node: runs the image the driver built, never builds one."""

from __future__ import annotations

from asrbench.modelcard import Model
from asrbench.runners.docker import DockerRunner


class NodeDockerRunner(DockerRunner):
    """A DockerRunner bound to one image (tag, ID) that `worker.ensure_image` put in the
    engine: a node has no base image to build from, and must run exactly the driver's image."""

    def __init__(self, tag: str, image_id: str):
        super().__init__()
        self._fixed = (tag, image_id)

    def _image(self, model: Model) -> tuple[str, str]:
        return self._fixed
