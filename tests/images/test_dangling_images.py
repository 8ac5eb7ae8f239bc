"""Model builds leave no `<none>` images behind (issue 39, item 5).

The template's build stage ends in an image that nothing tags once the model image has copied
its /opt: the engine kept one of 0.2-2.8 GB per build. Here a tiny card (standard library
only: no wheel is installed) is built, changed and built again; every image the two builds'
logs name must be tagged or gone afterwards. Other builds may run on the same engine, so the
check is on this test's own images, never on the engine's whole dangling list.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from asrbench.images import build_model_image, engine_available
from asrbench.images.build import stage_images
from asrbench.modelcard import load_model
from tests.conftest import require

CARD = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "crashy_en"


@pytest.fixture
def engine():
    require("docker", engine_available(), "no Docker Engine answers")
    from asrbench.images.engine import client

    return client()


def _dangling(engine) -> set[str]:
    return {i.id.split(":")[-1][:12] for i in engine.images.list(filters={"dangling": True})}


def test_a_rebuild_leaves_no_dangling_image_of_its_own(engine, tmp_path: Path) -> None:
    folder = tmp_path / "crashy_en"
    shutil.copytree(CARD, folder)
    logs, tags = [], []
    for n in range(2):  # a change to the program: a new tag, a real second build
        (folder / "transcribe.py").write_text(
            (folder / "transcribe.py").read_text() + f"\n# build {n}\n"
        )
        log = io.StringIO()
        tag, _ = build_model_image(load_model(folder), log=log)
        logs.append(log.getvalue())
        tags.append(tag)
    try:
        ours = stage_images([{"stream": text} for text in logs])
        assert ours, logs  # the builds ran (not reused), so their steps are in the logs
        assert not ours & _dangling(engine)
    finally:
        for tag in tags:
            engine.images.remove(tag)


def test_a_failed_build_leaves_no_dangling_image_of_its_own(engine, tmp_path: Path) -> None:
    """A model's own Dockerfile whose last step fails: the step before it left an image."""
    from asrbench.images.build import ImageBuildError

    folder = tmp_path / "crashy_en"
    shutil.copytree(CARD, folder)
    (folder / "Dockerfile").write_text(
        "ARG BASE_IMAGE=asrbench/base:bookworm\nFROM ${BASE_IMAGE}\n"
        f"RUN echo {tmp_path.name} > /opt/step\nRUN false\n"
    )
    with pytest.raises(ImageBuildError) as failed:
        build_model_image(load_model(folder))
    ours = stage_images([{"stream": failed.value.log_tail}])
    assert ours, failed.value.log_tail  # the first RUN committed an image
    assert not ours & _dangling(engine)
