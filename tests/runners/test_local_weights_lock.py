"""`--runner local` pins a card's own weights as the Docker build does (issue 26 item 1).

A card whose weights come from a folder (`weights.dir`) or a hub (`weights.hub`) without
checksums in the card is pinned by `weights.lock` beside it (asrbench/images/weightslock.py).
Here the local runner, which runs the program on the host from the card's folder, is held to
the same lock before the program starts: the first run writes it, a changed file stops the next
run in one line naming the file, both checksums, the lock and what to do, and hub files are taken
only from the cache folder of the commit a network build pinned.

The card is a real model folder under tmp_path: a stdlib program on the shared contract loop
(`contract.py`) that reads its weights folder (`ASRBENCH_WEIGHTS_SRC`) and answers every
utterance with the first word of `tokens.txt`, so a hypothesis shows which bytes the program
read. The weights are a tokens file and a seeded binary file; the audio is real `mini_en`.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from asrbench.dataset import Dataset, load_dataset
from asrbench.errors import InputError
from asrbench.identity import file_sha256
from asrbench.images.weights import check_card, verify_user_weights
from asrbench.images.weightslock import LOCK_NAME
from asrbench.modelcard import load_model
from asrbench.runners import read_tsv_pairs
from asrbench.runners.local import LocalRunner
from tests.conftest import own_cache
from tests.factories import make_model
from tests.stubs.hf_hub import HubStub

COMMIT = "c0ffee" + "0" * 34
PROGRAM = '''"""Answers every utterance with the first word of tokens.txt in the weights folder."""

import os
import sys
from pathlib import Path

import contract


def load():
    return (Path(os.environ["ASRBENCH_WEIGHTS_SRC"]) / "tokens.txt").read_text().split()


def transcribe_one(tokens, path):
    return tokens[0], contract.wav_seconds(path)


sys.exit(contract.run("lockcard", sys.argv[1:], load, transcribe_one))
'''


def card_folder(root: Path, weights: dict) -> Path:
    """models/lockcard: a card with the given `weights:` section and the program above."""
    return make_model(
        root / "models",
        "lockcard",
        PROGRAM,
        requirements=None,
        name="weights lock check",
        architecture="none (the first word of its weights' tokens.txt)",
        licence="Apache-2.0",
        program="transcribe.py",
        memory="256m",
        image={"shared": ["contract.py"]},
        weights=weights,
    )


def weights_folder(path: Path, word: str) -> Path:
    path.mkdir(parents=True)
    (path / "tokens.txt").write_text(f"{word}\n<blk>\n")
    (path / "model.bin").write_bytes(random.Random(0).randbytes(4096))
    return path


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    # own_cache: the checkout's virtualenvs (a bare cache made the same one in each test)
    monkeypatch.setenv("ASRBENCH_CACHE", str(own_cache(tmp_path / "cache")))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def two(mini_en: Path) -> tuple[Dataset, list]:
    ds = load_dataset(mini_en)
    return ds, sorted(ds.utterances, key=lambda u: u.duration)[:2]


def run_local(folder: Path, two, work: Path) -> dict[str, str]:
    ds, utts = two
    result = LocalRunner().run(load_model(folder), ds, work, utts)
    return read_tsv_pairs(result.hyp_path)


def test_first_local_run_pins_the_folder_and_a_changed_file_stops_the_next(
    tmp_path, cache, two, cli
):
    weights = weights_folder(tmp_path / "weights", "pinned")
    folder = card_folder(tmp_path, {"source": "a folder", "dir": str(weights)})
    assert not (folder / LOCK_NAME).exists()

    hyps = run_local(folder, two, tmp_path / "run1")
    assert set(hyps.values()) == {"pinned"} and len(hyps) == 2
    lock = json.loads((folder / LOCK_NAME).read_text())  # written by the first run
    assert lock["source"] == {"dir": str(weights)}
    assert lock["sha256"] == {n: file_sha256(weights / n) for n in ("model.bin", "tokens.txt")}

    # The folder changes under the card: the next run stops before the program starts.
    pinned = lock["sha256"]["tokens.txt"]
    (weights / "tokens.txt").write_text("swapped\n<blk>\n")
    with pytest.raises(InputError) as err:
        run_local(folder, two, tmp_path / "run2")
    msg = str(err.value)
    assert "weights file tokens.txt changed" in msg and str(folder / LOCK_NAME) in msg
    assert pinned in msg and file_sha256(weights / "tokens.txt") in msg
    assert "delete the lock" in msg
    assert not (tmp_path / "run2" / "run.log").exists()  # the program never ran

    # What a user sees: one line, no traceback, exit status 2 (another seed: no cache hit).
    code, _, out = cli(
        "benchmark", "-m", folder, "-d", two[0].root, "--runner", "local", "--max-utts", "2",
        "--seed", "7", "--results", tmp_path / "results", "--no-progress",
    )  # fmt: skip
    assert code == 2 and out.count("\n") == 1 and "Traceback" not in out, out
    assert "weights file tokens.txt changed" in out

    # Deleting the lock re-pins the files as they are now; the program reads them.
    (folder / LOCK_NAME).unlink()
    assert set(run_local(folder, two, tmp_path / "run3").values()) == {"swapped"}
    relock = json.loads((folder / LOCK_NAME).read_text())
    assert relock["sha256"]["tokens.txt"] == file_sha256(weights / "tokens.txt") != pinned


def test_a_file_added_to_the_pinned_folder_stops_the_run(tmp_path, cache, two):
    weights = weights_folder(tmp_path / "weights", "pinned")
    folder = card_folder(tmp_path, {"dir": str(weights)})
    run_local(folder, two, tmp_path / "run1")
    (weights / "extra.bin").write_bytes(b"\0" * 16)
    with pytest.raises(InputError, match="weights file extra.bin changed: sha256 [0-9a-f]{64}, "):
        run_local(folder, two, tmp_path / "run2")


@pytest.fixture
def hub(tmp_path: Path, monkeypatch):
    stub = HubStub()
    stub.publish("tiny-org/lockcard", COMMIT, weights_folder(tmp_path / "hubfiles", "hubword"))
    monkeypatch.setenv("HF_ENDPOINT", stub.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    yield stub
    stub.close()


def test_hub_weights_run_locally_only_from_the_snapshot_a_network_build_pinned(
    tmp_path, cache, two, hub
):
    spec = {"repo": "tiny-org/lockcard", "revision": COMMIT, "files": ["model.bin", "tokens.txt"]}
    folder = card_folder(tmp_path, {"hub": spec})
    with pytest.raises(InputError) as err:  # nothing fetched and pinned yet
        run_local(folder, two, tmp_path / "run0")
    assert "not pinned yet" in str(err.value) and "--build-mode network" in str(err.value)
    assert not hub.requests  # the local runner never reaches the hub

    model = load_model(folder)
    verify_user_weights(model, check_card(model), mode="network")  # what a network build does
    fetched = len(hub.requests)
    assert set(run_local(folder, two, tmp_path / "run1").values()) == {"hubword"}
    assert len(hub.requests) == fetched

    # The cached file is altered: the lock catches it before the program runs.
    lock = json.loads((folder / LOCK_NAME).read_text())
    snapshot = cache / "hf-hub" / "models--tiny-org--lockcard" / "snapshots" / COMMIT
    blob = (snapshot / "tokens.txt").resolve()
    blob.chmod(0o644)
    blob.write_text("tampered\n")
    with pytest.raises(InputError) as err:
        run_local(folder, two, tmp_path / "run2")
    assert "weights file tokens.txt changed" in str(err.value)
    assert lock["sha256"]["tokens.txt"] in str(err.value)

    # The cache emptied: the run says how to fetch the pinned files again.
    shutil.rmtree(cache / "hf-hub")
    with pytest.raises(InputError, match=f"commit {COMMIT}.*--build-mode network"):
        run_local(folder, two, tmp_path / "run3")
