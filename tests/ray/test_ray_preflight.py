"""Bad clusters and bad input: one clear error naming the cause, before any work starts.

Each case runs `ops/benchmark --executor ray` as a user would and checks: exit status 2, the
message names the cause (and the node), it came without a hang (each run is given
RUN_TIMEOUT_S; no assertion on how fast: this host may be busy), and nothing was started:
no result, no hypothesis-cache entry, nothing published to the zoo, no shard on any node.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from unittest import mock

import pytest
import yaml

from asrbench.images import engine_available
from tests.conftest import require
from tests.ray.support import bench, make_model

pytestmark = [pytest.mark.ray, pytest.mark.s3]


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _zoo_entries(zoo, remote: str = "s3") -> list[str]:
    from asrbench.zoo.config import load_config
    from asrbench.zoo.remote import open_remote

    with mock.patch.dict(os.environ, zoo.env):
        cfg = load_config(zoo.config)
        rem = open_remote(cfg.remote(remote), cfg.base)
        try:
            return [k for k, _ in rem.list("entries/")]
        finally:
            rem.close()


def _nothing_started(tmp_path: Path, cluster, model_id: str, zoo) -> None:
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())
    assert not [k for k in _zoo_entries(zoo) if f"/{model_id}/" in k]
    for node in cluster.nodes:
        assert not list(node.cache.glob(f"executor/models/*/{model_id}")), node.name


RUN_TIMEOUT_S = 300  # a hang fails the test (subprocess.TimeoutExpired)


def _run(model: Path, tmp_path: Path, env: dict, *extra: str, runner: str = "local"):
    return bench(
        "-m",
        model,
        "-d",
        "mini_en",
        "--runner",
        runner,
        "--max-utts",
        "2",
        "--results",
        tmp_path / "r",
        "--cache",
        tmp_path / "c",
        "--no-progress",
        "--executor",
        "ray",
        *extra,
        env=env,
        timeout=RUN_TIMEOUT_S,
    )


def test_unreachable_address_fails_at_once(driver_env: dict, tmp_path: Path) -> None:
    model = make_model(tmp_path / "models", "pre_addr")
    port = _closed_port()
    p = _run(model, tmp_path, driver_env, "--address", f"127.0.0.1:{port}")
    assert p.returncode == 2, p.stderr
    # refused at once (the TCP check), not after waiting out a connection timeout
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}: Connection refused" in p.stderr
    assert "Traceback" not in p.stderr
    p = _run(model, tmp_path, driver_env, "--address", "not-an-address")
    assert p.returncode == 2 and "--address 'not-an-address'" in p.stderr
    p = bench("-m", model, "--address", "127.0.0.1:1", env=driver_env)
    assert p.returncode == 2 and "apply to --executor ray only" in p.stderr


def test_no_node_offers_what_the_card_asks(cluster, zoo, driver_env: dict, tmp_path: Path) -> None:
    big = make_model(tmp_path / "models", "pre_threads", card={"runtime": {"threads": 8}})
    p = _run(big, tmp_path, driver_env, "--address", cluster.address)
    assert p.returncode == 2, p.stderr
    assert "model pre_threads needs a node offering 8 CPU" in p.stderr
    assert "runtime.threads" in p.stderr and "Its nodes:" in p.stderr
    _nothing_started(tmp_path, cluster, "pre_threads", zoo)
    gpu = make_model(tmp_path / "models", "pre_gpu", card={"gpu": "required"})
    p = _run(gpu, tmp_path, driver_env, "--address", cluster.address)
    assert p.returncode == 2 and "model pre_gpu needs a node offering 1 CPU, 1 GPU" in p.stderr
    _nothing_started(tmp_path, cluster, "pre_gpu", zoo)


def test_node_offering_docker_without_an_engine_is_named(
    cluster, zoo, driver_env: dict, tmp_path: Path
) -> None:
    require("docker", engine_available(), "no Docker Engine answers")
    model = make_model(tmp_path / "models", "pre_docker")
    bad = cluster.add_node(
        "e", resources={"docker": 1}, env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    )
    try:
        node_id = cluster.node_id(bad)
        p = _run(model, tmp_path, driver_env, "--address", cluster.address, runner="docker")
        assert p.returncode == 2, p.stderr
        assert f"node {node_id[:12]}" in p.stderr, p.stderr
        assert "offers the `docker` resource but no Docker Engine answers" in p.stderr
        assert p.stderr.count("no Docker Engine answers") == 1  # only e, not a or b
        _nothing_started(tmp_path, cluster, "pre_docker", zoo)
    finally:
        cluster.remove_node(bad)  # and wait until the cluster has marked it dead


def test_zoo_the_nodes_cannot_read_is_named(cluster, zoo, driver_env: dict, tmp_path: Path) -> None:
    """The driver reads the zoo with a profile only it has (its own credentials file); the
    nodes have no such profile: the probe says so before anything is published."""
    from tests.ray.conftest import ACCESS_KEY, SECRET_KEY

    creds = tmp_path / "driver-credentials"
    creds.write_text(
        f"[driveronly]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    config = tmp_path / "zoo.yaml"
    spec = yaml.safe_load(zoo.config.read_text())["remotes"]["s3"]
    config.write_text(
        yaml.safe_dump(
            {
                "default_remote": "s3",
                "remotes": {"s3": spec, "team": {**spec, "profile": "driveronly"}},
            }
        )
    )
    env = {
        k: v
        for k, v in driver_env.items()
        if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    }
    env.update({"AWS_SHARED_CREDENTIALS_FILE": str(creds), "ASRBENCH_ZOO_CONFIG": str(config)})
    model = make_model(tmp_path / "models", "pre_zoo")
    p = _run(model, tmp_path, env, "--address", cluster.address, "--zoo-remote", "team")
    assert p.returncode == 2, p.stderr
    assert "cannot read zoo remote 'team' with this node's credentials" in p.stderr
    assert "AWS profile 'driveronly' not found" in p.stderr
    assert p.stderr.count("cannot read zoo remote") == 3  # a, b and c; not the head (0 CPUs)
    _nothing_started(tmp_path, cluster, "pre_zoo", zoo)
