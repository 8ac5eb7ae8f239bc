"""Model images: the Docker Engine, the Dockerfile rendered from a card, content-tagged builds.

- `engine`: a connected client, image sizes, the locally built base image (no registry needed);
- `dockerfile`: the one template every model image is rendered from (card `program`, `image:`);
- `build`: build options, the host wheelhouse, the build context, the tag and the build.
"""

from asrbench.images.build import (
    BuildOptions,
    ImageBuildError,
    build_context,
    build_model_image,
    check_build_args,
    image_key,
    image_tag,
    wheelhouse,
)
from asrbench.images.dockerfile import render as render_dockerfile
from asrbench.images.engine import (
    BASE_IMAGE,
    DockerUnavailable,
    client,
    engine_available,
    ensure_base_image,
    image_size,
)
from asrbench.images.weights import DOCUMENTED_FIELDS, check_card, verify_user_weights

__all__ = [
    "BASE_IMAGE",
    "DOCUMENTED_FIELDS",
    "BuildOptions",
    "DockerUnavailable",
    "ImageBuildError",
    "build_context",
    "build_model_image",
    "check_build_args",
    "check_card",
    "client",
    "engine_available",
    "ensure_base_image",
    "image_key",
    "image_size",
    "image_tag",
    "render_dockerfile",
    "verify_user_weights",
    "wheelhouse",
]
