"""What a node does before a shard, for real: the image comes from the zoo's `docker save`
archive when (and only when) the engine lacks it, and the driver publishes a content once.

The tests' cluster nodes share this machine's Docker Engine, so on the cluster an image is
always there already; here the image is removed from the engine after publishing, and the
node's side (`worker.ensure_image`) runs with a node cache of its own.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from asrbench.images import engine_available
from tests.conftest import require
from tests.ray.support import make_model

pytestmark = [pytest.mark.docker, pytest.mark.s3, pytest.mark.slow]


def test_image_archive_is_fetched_and_loaded_only_when_the_engine_lacks_it(
    zoo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require("docker", engine_available(), "no Docker Engine answers")
    from asrbench.executors.publish import Publisher
    from asrbench.executors.worker import checkout, ensure_entry, ensure_image
    from asrbench.images import client
    from asrbench.modelcard import load_model
    from asrbench.runners.docker import DockerRunner

    for k, v in zoo.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "driver"))
    # a model of its own (a unique comment in its program): its image is this test's alone
    mdl = load_model(make_model(tmp_path / "models", "fetch_img", marker=uuid.uuid4().hex))
    run = DockerRunner()
    image_id, tag = run.prepare(mdl), run.image_tag(mdl)
    engine = client()
    try:
        pub = Publisher(zoo.config, "s3")
        ref, image = pub.model(mdl, "docker", image_id, tag)
        assert image == (tag, image_id) and pub.stats["pushed"] == 1
        again = Publisher(zoo.config, "s3")  # a later run: remembered, no `docker save`
        assert again.model(mdl, "docker", image_id, tag)[0] == ref
        assert again.stats == {**again.stats, "pushed": 0, "reused": 1}

        engine.images.remove(tag, force=True)
        monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "node"))
        folder, model_bytes = ensure_entry(ref, pub.zoo)
        assert folder == checkout(ref) and (folder / "fake.py").is_file() and model_bytes > 0
        fetched = ensure_image(ref, pub.zoo, tag, image_id)
        assert fetched > 10 * 2**20  # the archive came from the zoo ...
        loaded = engine.images.get(image_id)  # ... and holds exactly the driver's image
        assert tag in loaded.tags
        assert ensure_image(ref, pub.zoo, tag, image_id) == 0  # held by ID: nothing fetched
    finally:
        try:
            engine.images.remove(tag, force=True)
        except Exception:
            pass
