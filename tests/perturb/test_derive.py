"""Derived datasets: provenance, validation, content cache, byte-identical determinism."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from asrbench.dataset import load_dataset
from asrbench.identity import hash_file as file_sha256
from asrbench.perturb.derive import derive_dataset
from asrbench.settings import REPO_ROOT
from tests.perturb.conftest import SHORT_IDS

# Every random ingredient at once: babble choice, RIR choice, noise, chunk choice, codec.
SPEC = "crosstalk:2+rir:1+gaussian_noise:3+drop_chunks:2+mp3:3"


def _hashes(root) -> dict[str, str]:
    ds = load_dataset(root)
    return {u.id: file_sha256(ds.audio_path(u)) for u in ds.utterances}


def test_derived_dataset_has_provenance_and_validates(tmp_path, monkeypatch, mini_en):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    r = derive_dataset(mini_en, SPEC, seed=7, out=tmp_path / "d", utt_ids=SHORT_IDS)
    ds = load_dataset(r.path)  # the validator checks durations, rates and paths
    assert [u.id for u in ds.utterances] == [u for u in _ids(mini_en) if u in SHORT_IDS]
    meta = yaml.safe_load((r.path / "dataset.yaml").read_text())
    parent = load_dataset(mini_en)
    assert meta["derived_from"]["hash"] == parent.content_hash()
    assert meta["derived_from"]["spec"] == SPEC and meta["derived_from"]["seed"] == 7
    refs = parent.references()
    assert all(u.text == refs[u.id] for u in ds.utterances)
    # Second run: everything comes from the content cache, same bytes.
    r2 = derive_dataset(mini_en, SPEC, seed=7, out=tmp_path / "d2", utt_ids=SHORT_IDS)
    assert r2.cached == len(SHORT_IDS)
    assert _hashes(r.path) == _hashes(r2.path)


def _ids(root) -> list[str]:
    return [u.id for u in load_dataset(root).utterances]


def test_same_seed_same_bytes_across_processes(tmp_path, mini_en):
    """Two separate processes, separate caches, one with 2 workers: byte-identical audio."""
    outs = []
    for i, jobs in enumerate((1, 2)):
        env = dict(
            os.environ, ASRBENCH_CACHE=str(tmp_path / f"cache{i}"), PYTHONPATH=str(REPO_ROOT)
        )
        code = (
            "from asrbench.perturb.derive import derive_dataset; import sys; "
            f"derive_dataset({str(mini_en)!r}, {SPEC!r}, seed=3, out=sys.argv[1], "
            f"jobs={jobs}, utt_ids={SHORT_IDS!r})"
        )
        out = tmp_path / f"run{i}"
        subprocess.run([sys.executable, "-c", code, str(out)], env=env, check=True, timeout=300)
        outs.append(_hashes(out))
    assert outs[0] == outs[1]
    assert len(set(outs[0].values())) == len(SHORT_IDS)


def test_seed_and_subset_independence(tmp_path, monkeypatch, mini_en):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    a = _hashes(derive_dataset(mini_en, SPEC, seed=1, out=tmp_path / "a", utt_ids=SHORT_IDS).path)
    b = _hashes(derive_dataset(mini_en, SPEC, seed=2, out=tmp_path / "b", utt_ids=SHORT_IDS).path)
    assert all(a[u] != b[u] for u in SHORT_IDS)
    # An utterance's audio does not depend on which other utterances were processed with it.
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache-other"))
    c = _hashes(
        derive_dataset(mini_en, SPEC, seed=1, out=tmp_path / "c", utt_ids=SHORT_IDS[1:]).path
    )
    assert all(c[u] == a[u] for u in SHORT_IDS[1:])


def test_cli_creates_dataset(tmp_path, mini_en):
    env = dict(os.environ, ASRBENCH_CACHE=str(tmp_path / "cache"))
    out = tmp_path / "cli"
    proc = subprocess.run(
        [
            str(REPO_ROOT / "ops" / "perturb"),
            "-d",
            str(mini_en),
            "-p",
            "narrowband",
            "--out",
            str(out),
            "--utts",
            ",".join(SHORT_IDS[:2]),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(load_dataset(out)) == 2


def test_subset_never_overwrites_the_full_derived_set(tmp_path, monkeypatch, mini_en):
    """Found by the report: a --utts subset was written under the full set's folder name."""
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    sub = derive_dataset(mini_en, "narrowband", utt_ids=SHORT_IDS[:2])
    other = derive_dataset(mini_en, "narrowband", utt_ids=SHORT_IDS[1:])
    assert sub.path != other.path and "__u2-" in sub.path.name
    assert len(load_dataset(sub.path)) == 2 and len(load_dataset(other.path)) == 2


def test_a_perturbation_that_leaves_no_audio_writes_nothing(tmp_path, monkeypatch, mini_en):
    """frame_drop of 1-s chunks at 90 % empties some utterances: one error naming them, no
    derived folder (not even half of one), no empty file in the cache, the old folder kept."""
    import pytest
    import soundfile as sf

    from asrbench.perturb.dsp import PerturbError

    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "d"
    out.mkdir()
    (out / "keep.txt").write_text("an earlier derivation")
    with pytest.raises(PerturbError, match=r"leaves no audio at all in \d+ of 35 utterance"):
        derive_dataset(mini_en, "frame_drop:ms=1000,ratio=0.9", seed=0, out=out)
    assert [p.name for p in tmp_path.iterdir() if p.name != "cache"] == ["d"]
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    cached = list((tmp_path / "cache").rglob("*.wav"))
    assert cached and all(sf.info(str(p)).frames > 0 for p in cached)
