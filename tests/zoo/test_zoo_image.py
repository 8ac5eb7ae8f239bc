"""Models with --with-image: the image travels as a `docker save` archive and is `docker load`ed."""

from __future__ import annotations

import io
import os
import tarfile

import pytest
from zoo_support import require, tree_bytes, write_zoo_yaml

from asrbench.zoo import pull, push
from tests.factories import write_card

TAG = "asrbench-zoo-test/tiny:1"


@pytest.fixture
def docker_client():
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:  # no daemon, no socket, no permission
        require("docker", False, str(exc))
    return client


def _tiny_image(client) -> None:
    """`docker import` of a one-file root filesystem: no registry, no pull."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b"hello from the zoo\n"
        info = tarfile.TarInfo("hello.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    repo, tag = TAG.split(":")
    client.api.import_image_from_data(buf.getvalue(), repository=repo, tag=tag)


@pytest.mark.docker
def test_model_with_image_round_trip(docker_client, tmp_path, monkeypatch):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    _tiny_image(docker_client)
    image_id = docker_client.images.get(TAG).id
    model = write_card(tmp_path / "tiny_model", name="test model", program="asr.py", network=False)
    (model / "Dockerfile").write_text("FROM scratch\n")
    (model / "asr.py").write_text('#!/usr/bin/env python3\nprint("hi")\n')
    (model / "asr.py").chmod(0o755)
    cfg = write_zoo_yaml(tmp_path / "zoo.yaml", {"local": {"url": "file://remote"}})
    try:
        res = push("model", "tiny_model", source=model, config=cfg, with_image=True, image_ref=TAG)
        assert res.objects_uploaded == 4  # three files and the image archive
        docker_client.images.remove(TAG, force=True)
        back = pull("model", "tiny_model", config=cfg, dest=tmp_path / "back", with_image=True)
        assert tree_bytes(tmp_path / "back") == tree_bytes(model)
        assert os.access(tmp_path / "back" / "asr.py", os.X_OK)  # the program stays runnable
        assert back.objects_downloaded == 4
        assert docker_client.images.get(TAG).id == image_id
    finally:
        try:
            docker_client.images.remove(TAG, force=True)
        except Exception:  # already gone
            pass
