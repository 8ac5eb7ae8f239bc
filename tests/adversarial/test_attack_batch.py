"""Attacks derived in batches (ASRBENCH_ATTACK_BATCH): the same keys and bytes as one by one."""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf
import yaml

from asrbench.dataset import load_dataset
from asrbench.errors import InputError
from asrbench.perturb.derive import (
    ATTACK_BATCH_ENV,
    _groups,
    _Pending,
    attack_batch,
    batch_hook,
    derive_dataset,
)

SPEC = "pgd:snr=30,steps=1"
# the one pair of mini_en utterances of the same sample count (7.855 s) and one of another
# length: one batch of three (the padded rows' norms and decoding must not change the bytes)
UTTS = ["LJ001-0024", "LJ001-0031", "LJ001-0002"]


def _cache_files(cache: Path) -> dict[str, bytes]:
    """Every cached perturbed file, by its name (the key) -> its bytes."""
    return {p.name: p.read_bytes() for p in sorted((cache / "perturb" / "audio").rglob("*.wav"))}


def _derive(tmp_path: Path, monkeypatch, mini_en, name: str, batch: int):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / name))
    monkeypatch.setenv(ATTACK_BATCH_ENV, str(batch))
    return derive_dataset(mini_en, SPEC, seed=0, out=tmp_path / f"out_{name}", utt_ids=UTTS)


def test_batch_of_three_writes_the_keys_and_bytes_of_one_by_one(
    tmp_path, monkeypatch, mini_en
) -> None:
    one = _derive(tmp_path, monkeypatch, mini_en, "b1", 1)
    three = _derive(tmp_path, monkeypatch, mini_en, "b3", 3)
    assert one.cached == three.cached == 0 and one.n_utts == three.n_utts == 3
    files1, files3 = _cache_files(tmp_path / "b1"), _cache_files(tmp_path / "b3")
    assert len(files1) == 3 and files1 == files3  # same keys (file names), same bytes
    prov = [yaml.safe_load((r.path / "dataset.yaml").read_text()) for r in (one, three)]
    assert prov[0]["derived_from"] == prov[1]["derived_from"]  # no batch size in the identity
    for uid in UTTS:
        a, b = (r.path / "audio" / f"{uid}.wav" for r in (one, three))
        assert a.read_bytes() == b.read_bytes()
    # A killed run resumes: with one file gone, only that utterance is attacked again (a batch
    # of one), the cached one is served as it is; the same bytes once more.
    gone = sorted((tmp_path / "b3" / "perturb" / "audio").rglob("*.wav"))[0]
    gone.unlink()
    again = derive_dataset(mini_en, SPEC, seed=0, out=tmp_path / "out_again", utt_ids=UTTS)
    assert again.cached == 2 and _cache_files(tmp_path / "b3") == files1


def test_only_a_one_step_attack_has_the_batch_hook() -> None:
    assert batch_hook("pgd:snr=30,steps=1") is not None
    assert batch_hook("gaussian_noise:2") is None
    assert batch_hook("universal:2") is None  # its fit is per fold, not per batch
    assert batch_hook("gaussian_noise:snr=40+pgd:2") is None  # composed: one by one


def test_batch_setting(monkeypatch) -> None:
    monkeypatch.delenv(ATTACK_BATCH_ENV, raising=False)
    default = attack_batch()
    assert default >= 1
    monkeypatch.setenv(ATTACK_BATCH_ENV, "8")
    assert attack_batch() == 8
    for bad in ("0", "-2", "four"):
        monkeypatch.setenv(ATTACK_BATCH_ENV, bad)
        with pytest.raises(InputError, match=f"{ATTACK_BATCH_ENV}=.*positive integer"):
            attack_batch()


def _pending(seconds: list[float], sr: int = 16000) -> list[_Pending]:
    return [_Pending(i, f"k{i}", int(s * sr), sr) for i, s in enumerate(seconds)]


def _seconds(groups: list[list[_Pending]]) -> list[list[float]]:
    return [[p.frames / p.sr for p in g] for g in groups]


def test_groups_are_by_length_and_long_utterances_go_alone(mini_en) -> None:
    """Batches hold one-window utterances only (over the hook's 29 s, window labels would be
    decoded in a batch); with same_length (pgd today) only equal sample counts share one."""
    ds = load_dataset(mini_en, check_audio=False)
    pending = _pending([5.0, 1.0, 40.0, 3.0, 2.0, 29.0, 31.0, 3.0, 3.0])
    loose = _groups(ds, pending, 2, 29.0, same_length=False)
    assert _seconds(loose) == [[1.0, 2.0], [3.0, 3.0], [3.0, 5.0], [29.0], [31.0], [40.0]]
    strict = _groups(ds, pending, 4, 29.0, same_length=True)
    assert _seconds(strict) == [[1.0], [2.0], [3.0, 3.0, 3.0], [5.0], [29.0], [31.0], [40.0]]
    # deterministic whatever the order the utterances come in (ties by utterance ID)
    assert _groups(ds, pending[::-1], 2, 29.0, same_length=False) == loose
    # another sample rate never shares a batch
    mixed = [*_pending([1.0, 1.0]), *_pending([2.0], sr=8000)]
    assert all(len({p.sr for p in g}) == 1 for g in _groups(ds, mixed, 4, 29.0, False))


def test_the_byte_identity_test_really_batches(mini_en) -> None:
    """UTTS, two lengths, go into one batch of three, as the test above derives them."""
    ds = load_dataset(mini_en, check_audio=False)
    index = {u.id: i for i, u in enumerate(ds.utterances)}
    frames = {u: sf.info(str(ds.audio_path(ds.utterances[index[u]]))).frames for u in UTTS}
    assert len(set(frames.values())) == 2
    pending = [_Pending(index[u], u, frames[u], 16000) for u in UTTS]
    hook = batch_hook(SPEC)
    assert hook is not None and not hook.same_length
    groups = _groups(ds, pending, 3, hook.max_seconds, hook.same_length)
    assert [sorted(p.key for p in g) for g in groups] == [sorted(UTTS)]
