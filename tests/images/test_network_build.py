"""A network build whose hub does not answer: one line at once (issue 38, item 10).

`ops/build --build-mode network` of a card with `weights.hub` fetches the files on the host
before the Docker Engine is asked anything. Without hub access, huggingface_hub retried five
times with backoff (about 23 s) and printed eleven warning lines before the one-line error. Now
one request probes the hub first: unreachable, the files come from the cache of an earlier
fetch, else the error alone, naming the hub and the routes that need none. The hub here is a
closed loopback port (`HF_ENDPOINT`, which the build honours), or the loopback stub of the
hub's download API (tests/stubs/hf_hub.py) for the fetch that fills the cache.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from asrbench.images.weights import check_card, verify_user_weights
from asrbench.modelcard import load_model
from tests.runners.test_local_weights_lock import COMMIT, card_folder, weights_folder
from tests.stubs.hf_hub import HubStub

SPEC = {"repo": "tiny-org/lockcard", "revision": COMMIT, "files": ["model.bin", "tokens.txt"]}


def closed_port() -> int:
    """A loopback port nothing listens on (bound once by the OS, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    return tmp_path / "cache"


def test_an_unreachable_hub_is_one_line_at_once(
    cli, tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", hub)
    folder = card_folder(tmp_path, {"hub": SPEC})
    code, out, err = cli("build", "-m", folder, "--build-mode", "network")
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # no retry warnings before it
    assert f"the hub {hub} cannot be reached" in lines[0] and "Connection refused" in lines[0]
    assert "weights.dir" in lines[0] and "--build-mode wheelhouse" in lines[0]
    assert "Retrying" not in err


def test_an_unreachable_hub_builds_from_the_files_fetched_before(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = HubStub()
    stub.publish(SPEC["repo"], COMMIT, weights_folder(tmp_path / "hubfiles", "hubword"))
    monkeypatch.setenv("HF_ENDPOINT", stub.url)
    model = load_model(card_folder(tmp_path, {"hub": SPEC}))
    try:
        fetched = verify_user_weights(model, check_card(model), mode="network")
    finally:
        stub.close()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    again = verify_user_weights(model, check_card(model), mode="network")  # the lock holds
    assert again == fetched and (again / "tokens.txt").read_text().startswith("hubword")
