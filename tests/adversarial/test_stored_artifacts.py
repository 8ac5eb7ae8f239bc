"""Issue 38, item 12: a stored universal perturbation was used without checking it against its
record: an edited `perturbation.npy` (or `universal.json`, or a fit's files copied into another
fit's folder) attacked the dataset with whatever it held. `artifact.load` now checks the record
against its folder's key and the inputs asked for, the file against the recorded SHA-256 and
length, and the samples (finite, unit RMS), and refuses anything else naming the folder.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from asrbench.adversarial.artifact import (
    UniversalRecord,
    artifact_dir,
    attack_code,
    load,
    save,
    universal_key,
)
from asrbench.adversarial.universal import UniversalSettings
from asrbench.errors import InputError

SR = 16000


def _fit(snr: float = 20.0, seed: int = 0) -> tuple[UniversalRecord, np.ndarray, dict]:
    """A stored artifact as `universal.fitted` writes one (the fit itself left out)."""
    settings = UniversalSettings(snr=snr, seconds=0.002, seed=seed)
    inputs = {
        "target": {"model": "tiny.en", "weights_sha256": {"model.bin": "ab" * 32}},
        "dev": [["u1", "cd" * 32], ["u2", "ef" * 32]],
        "settings": asdict(settings),
        "code": attack_code(),
    }
    v = np.random.default_rng(seed).standard_normal(round(settings.seconds * SR))
    v /= np.sqrt(np.mean(v**2))
    record = UniversalRecord(universal_key(inputs), inputs, ["u1", "u2"], [0.2, 0.4], 2, SR)
    save(record, v)
    return record, v, inputs


def _npy(vector: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.asarray(vector, np.float32), allow_pickle=False)
    return buf.getvalue()


def _rewrite(key: str, vector: np.ndarray, samples: int | None = None) -> None:
    """Replace the perturbation AND update its record's hash and length (a careful tamperer)."""
    folder = artifact_dir(key)
    data = _npy(vector)
    (folder / "perturbation.npy").write_bytes(data)
    rec = json.loads((folder / "universal.json").read_text())
    rec["perturbation"] = {
        "sha256": hashlib.sha256(data).hexdigest(),
        "samples": len(vector) if samples is None else samples,
    }
    (folder / "universal.json").write_text(json.dumps(rec))


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))


def test_an_untouched_artifact_loads() -> None:
    record, v, inputs = _fit()
    got, vec = load(record.key, inputs)
    assert got == record and np.allclose(vec, v, atol=1e-6)
    stored = json.loads((artifact_dir(record.key) / "universal.json").read_text())
    assert stored["perturbation"]["samples"] == 32 and len(stored["perturbation"]["sha256"]) == 64


def _refused(key: str, inputs: dict, what: str) -> None:
    with pytest.raises(InputError, match=what) as info:
        load(key, inputs)
    msg = str(info.value)
    assert msg.startswith(f"{artifact_dir(key)}: ") and "delete the folder" in msg
    assert msg.splitlines() == [msg]


def test_an_edited_perturbation_file_is_refused() -> None:
    record, v, inputs = _fit()
    npy = artifact_dir(record.key) / "perturbation.npy"
    npy.write_bytes(_npy(-v))  # same length, same RMS, another perturbation
    _refused(record.key, inputs, "perturbation.npy does not have the SHA-256")


def test_an_edited_snr_in_the_record_is_refused() -> None:
    record, _, inputs = _fit(snr=20.0)
    path = artifact_dir(record.key) / "universal.json"
    rec = json.loads(path.read_text())
    rec["inputs"]["settings"]["snr"] = 5.0
    path.write_text(json.dumps(rec))
    _refused(record.key, inputs, "does not describe the fit its folder is named by")


def test_another_fits_files_copied_in_are_refused() -> None:
    mine, _, inputs = _fit(seed=0)
    other, _, _ = _fit(seed=1)
    for name in ("perturbation.npy", "universal.json"):
        shutil.copy(artifact_dir(other.key) / name, artifact_dir(mine.key) / name)
    _refused(mine.key, inputs, "does not describe the fit its folder is named by")


def test_a_record_for_other_inputs_is_refused() -> None:
    record, _, inputs = _fit()
    asked = {**inputs, "dev": [["u1", "00" * 32], ["u2", "ef" * 32]]}  # u1's audio changed
    _refused(record.key, asked, "inputs differ from this fit's")


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda v: v * 3.0, "RMS 3, not 1"),
        (lambda v: np.where(np.arange(len(v)) == 3, np.nan, v), "not one finite row"),
        (lambda v: v[:20] / np.sqrt(np.mean(v[:20] ** 2)), "20 samples, 32 expected"),
    ],
    ids=["scaled", "nan", "truncated"],
)
def test_a_consistently_rewritten_but_wrong_perturbation_is_refused(change, what: str) -> None:
    record, v, inputs = _fit()
    _rewrite(record.key, change(v))
    _refused(record.key, inputs, what)


def test_a_tampered_artifact_is_refused_through_the_bank(tmp_path: Path, mini_en) -> None:
    """A real one-epoch fit per fold, then one stored perturbation edited: the next derivation
    is refused naming its folder, and nothing is attacked with it."""
    from asrbench.perturb.derive import derive_dataset
    from asrbench.perturb.dsp import PerturbError
    from tests.adversarial.test_universal import _two_speaker_set

    parent = _two_speaker_set(tmp_path, mini_en)
    spec = "universal:snr=20,epochs=1,seconds=0.5"
    derive_dataset(parent, spec, out=tmp_path / "u")
    npy = sorted((tmp_path / "cache" / "adversarial" / "universal").glob("*/perturbation.npy"))[0]
    v = np.load(npy)
    npy.write_bytes(_npy(np.roll(v, 1)))
    shutil.rmtree(tmp_path / "cache" / "perturb" / "audio")  # so the artifact is read again
    with pytest.raises((InputError, PerturbError), match="perturbation.npy does not have") as e:
        derive_dataset(parent, spec, out=tmp_path / "u2")
    assert str(npy.parent) in str(e.value)
    assert not (tmp_path / "u2").exists()
