"""Universal perturbations: the speaker-disjoint split, tiling and scaling, the stored artifact,
and a real (one-epoch) fit through the bank."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import soundfile as sf
import yaml

from asrbench.adversarial.artifact import UniversalRecord, artifact_dir, load, save, universal_key
from asrbench.adversarial.pgd import SNR_TOL, snr_db
from asrbench.adversarial.universal import cer, folds, scaled, tile
from asrbench.dataset import Utterance, load_dataset
from asrbench.errors import InputError
from asrbench.perturb.derive import derive_dataset


def _utt(uid: str, speaker: str) -> Utterance:
    return Utterance(uid, f"audio/{uid}.wav", 1.0, "x", {"SPEAKER": speaker})


def test_folds_keep_speakers_whole_and_balanced(mini_en) -> None:
    utts = load_dataset(mini_en).utterances
    f = folds(utts)
    assert set(f) == {u.id for u in utts} and set(f.values()) == {0, 1}
    by_speaker: dict[str, set[int]] = {}
    for u in utts:
        if u.extra.get("SPEAKER"):
            by_speaker.setdefault(u.extra["SPEAKER"], set()).add(f[u.id])
    assert all(len(v) == 1 for v in by_speaker.values())  # no speaker on both sides
    assert folds(list(reversed(utts))) == f  # deterministic, order-free
    one = [_utt(f"a{i}", "S") for i in range(5)]  # one speaker: split by utterance
    assert set(folds(one).values()) == {0, 1}


def test_tiled_and_scaled_to_each_budget() -> None:
    v = np.arange(5.0)
    assert tile(v, 12).tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    assert tile(v, 3).tolist() == [0, 1, 2]
    rng = np.random.default_rng(0)
    v = rng.standard_normal(800)
    for n, snr in ((100, 10.0), (3000, 30.0), (16000, 40.0)):
        x = rng.standard_normal(n) * 0.1
        assert snr_db(x, x + scaled(v, x, snr)) == pytest.approx(snr, abs=1e-9)


def test_cer() -> None:
    assert cer("Hello  world", "hello world") == 0.0
    assert cer("abcd", "abed") == 0.25
    assert cer("", "") == 0.0 and cer("", "a") == 1.0


def test_artifact_round_trip_and_format_check(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path))
    # a record its key describes, of a 4-sample perturbation at unit RMS (tests/adversarial/
    # test_stored_artifacts.py: what load refuses)
    settings = {"snr": 20.0, "seconds": 4 / 16000}
    inputs = {"target": {"model": "m"}, "dev": [["u1", "0" * 64]], "settings": settings, "code": []}
    rec = UniversalRecord(universal_key(inputs), inputs, ["u1"], [0.1, 0.3, 0.2], 2, 16000)
    assert load(rec.key) is None
    save(rec, np.ones(4))
    got, vec = load(rec.key)
    assert got == rec and got.best_cer == 0.3 and vec.tolist() == [1.0] * 4
    path = artifact_dir(rec.key) / "universal.json"
    path.write_text(json.dumps({**rec.to_dict(), "format": "other/9"}))
    with pytest.raises(InputError, match="universal.json: not a asrbench.universal"):
        load(rec.key)


def _two_speaker_set(tmp_path, mini_en):
    """Two short utterances of two speakers, as a dataset folder."""
    ds = load_dataset(mini_en)
    keep = ["LJ001-0002", "cmu_arctic_us_axb_a0005"]
    out = tmp_path / "two"
    (out / "audio").mkdir(parents=True)
    lines = (mini_en / "metadata.tsv").read_text().splitlines()
    rows = [lines[0]] + [ln for ln in lines[1:] if ln.split("\t")[0] in keep]
    (out / "metadata.tsv").write_text("\n".join(rows) + "\n")
    meta = yaml.safe_load((mini_en / "dataset.yaml").read_text()) | {"id": "two"}
    (out / "dataset.yaml").write_text(yaml.safe_dump(meta))
    for u in ds.utterances:
        if u.id in keep:
            shutil.copy(ds.audio_path(u), out / u.audio)
    return out


def test_universal_through_the_bank_fits_on_the_other_speaker(
    tmp_path, monkeypatch, mini_en
) -> None:
    """A real one-epoch fit per fold on tiny.en: every utterance attacked on budget with the
    perturbation fitted on the other speaker, its dev CER recorded, and the artifact reused."""
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    parent = _two_speaker_set(tmp_path, mini_en)
    spec = "universal:snr=20,epochs=1,seconds=0.5"
    r = derive_dataset(parent, spec, out=tmp_path / "u")
    assert r.n_utts == 2
    clean, attacked = load_dataset(parent), load_dataset(r.path)
    for u, a in zip(clean.utterances, attacked.utterances, strict=True):
        x = sf.read(str(clean.audio_path(u)), dtype="float64")[0]
        y = sf.read(str(attacked.audio_path(a)), dtype="float64")[0]
        assert 20.0 <= snr_db(x, y) <= 20.0 + SNR_TOL, u.id
    records = [
        json.loads(p.read_text())
        for p in (tmp_path / "cache" / "adversarial" / "universal").glob("*/universal.json")
    ]
    assert sorted(r["dev"] for r in records) == [["LJ001-0002"], ["cmu_arctic_us_axb_a0005"]]
    assert all(len(r["dev_cer"]) == 1 and r["best_dev_cer"] >= 0.0 for r in records)
    assert all(r["inputs"]["settings"]["snr"] == 20.0 for r in records)
    stored = sorted((tmp_path / "cache" / "adversarial").rglob("*.npy"))
    stamps = [p.stat().st_mtime_ns for p in stored]
    shutil.rmtree(tmp_path / "cache" / "perturb" / "audio")  # the artifact alone is reused
    again = derive_dataset(parent, spec, out=tmp_path / "u2")
    assert [p.stat().st_mtime_ns for p in stored] == stamps  # not refitted
    assert [
        (tmp_path / "u" / u.audio).read_bytes() == (again.path / u.audio).read_bytes()
        for u in attacked.utterances
    ] == [True, True]


def test_a_dev_fold_without_text_is_refused_by_name(tmp_path, monkeypatch, mini_en) -> None:
    """The attacked utterance has its text, but the other fold (where the perturbation is
    fitted) does not: the fit would push the target off an empty transcript."""
    from asrbench.perturb.dsp import PerturbError

    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    parent = _two_speaker_set(tmp_path, mini_en)
    table = parent / "metadata.tsv"
    rows = [r.split("\t") for r in table.read_text().splitlines()]
    col = rows[0].index("TEXT")
    for r in rows[1:]:
        if r[0] == "cmu_arctic_us_axb_a0005":
            r[col] = ""
    table.write_text("".join("\t".join(r) + "\n" for r in rows))
    with pytest.raises((InputError, PerturbError), match=r"1 of its utterances have no refer"):
        derive_dataset(
            parent, "universal:snr=20,epochs=1", out=tmp_path / "u", utt_ids=["LJ001-0002"]
        )
    assert not (tmp_path / "u").exists()
    assert not list((tmp_path / "cache").rglob("*.npy"))  # nothing was fitted
