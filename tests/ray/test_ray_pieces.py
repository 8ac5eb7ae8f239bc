"""A segmented run (`--segment vad`) through the Ray executor on the real local cluster: the
pieces dataset (derived on the driver, under its cache) travels to the nodes through the zoo,
its pieces run as shards there, and the reassembled cell equals the local executor's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ray.support import assert_same_cells, bench, cells, shards

pytestmark = [pytest.mark.ray, pytest.mark.s3, pytest.mark.slow]


def test_vad_pieces_on_the_cluster_equal_the_local_run(
    cluster, fake_models: dict, driver_env: dict, tmp_path: Path
) -> None:
    # the session's fake (0.3 s an utterance) writes a text that depends on the size of the
    # audio file it is given: each piece's text tells which piece (how long a cut) was read.
    # One recording of mini_long_en (the sample of seed 1), cut into a few dozen pieces.
    args = [
        *("-m", fake_models["slow"], "-d", "mini_long_en", "--runner", "local"),
        *("--segment", "vad", "--max-utts", "1", "--seed", "1"),
        *("--score-opt", "nsw=false", "--jobs", "3", "--no-progress"),
    ]
    local = bench(
        *args, "--results", tmp_path / "local", "--cache", tmp_path / "lc", env=driver_env
    )
    assert local.returncode == 0, local.stderr[-3000:]
    ray = bench(
        *args,
        *("--executor", "ray", "--address", cluster.address),
        *("--results", tmp_path / "ray", "--cache", tmp_path / "rc"),
        env=driver_env,
    )
    assert ray.returncode == 0, ray.stderr[-3000:]
    # the same recording-level hypotheses, scores and alignments, byte for byte
    assert_same_cells(tmp_path / "ray", tmp_path / "local", with_timing=True)
    (cell,) = cells(tmp_path / "ray").values()
    run = json.loads((cell / "run.json").read_text())
    seg = run["options"]["segmentation"]
    assert (seg["mode"], seg["method"]) == ("vad", "vad")
    assert len(seg["cut"]) == 1 and set(seg["cut"]) < {"lj_reading", "fsdd_jackson_numbers"}
    n_pieces = sum(seg["cut"].values())
    assert n_pieces > 10
    # the pieces ran as shards on the worker nodes, none on the head, and every piece once
    ran = shards(tmp_path / "ray")
    nodes = {str(n.cache): n.name for n in cluster.nodes}
    used = {nodes[s["node"]["cache"]] for s in ran}
    assert len(used) >= 2 and "head" not in used, used
    assert sum(s["n_utts"] for s in ran if s["round"] == 0) == n_pieces
    hyps = (cell / "hyp.raw.tsv").read_text().splitlines()
    assert sorted(x.split("\t")[0] for x in hyps) == sorted(seg["cut"])
    for line in hyps:
        rid, text = line.split("\t", 1)
        assert text.count("fake words for") == seg["cut"][rid]  # one text per piece, joined
