"""The composed meeting set `meeting_overlap_en`: its audio is composed on first use from the
embedded sources (asrbench.importers.composed), its RTTM and SegLST references agree with each
other and with the audio, each session's overlap ratio, computed here from the turns, is the one
recorded and within a point of its bin, the recipe rebuilds it byte for byte, and the reference
scored against itself has a DER of 0."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import soundfile as sf

from asrbench.dataset import Dataset, load_dataset
from asrbench.identity import file_sha256
from asrbench.resolve import resolve_dataset
from asrbench.settings import REPO_ROOT
from scoring.timed import read_rttm, read_seglst

ROOT = REPO_ROOT / "datasets" / "meeting_overlap_en"
RTTM = "segments.rttm"
COMMITTED = (
    "dataset.yaml",
    "metadata.tsv",
    "segments.seglst.json",
    "segments.rttm",
    "composed.json",
)


@pytest.fixture(scope="module")
def ds() -> Dataset:
    """The set as `-d meeting_overlap_en` resolves it (composing the audio if it is missing)."""
    return resolve_dataset("meeting_overlap_en")


def _clone(tmp_path: Path) -> Path:
    """The set's folder as a clone has it: the committed files, no audio."""
    out = tmp_path / "meeting_overlap_en"
    out.mkdir()
    for name in COMMITTED:
        shutil.copy(ROOT / name, out / name)
    return out


def test_validate_composes_the_audio_once_from_a_clone(tmp_path: Path, cli, ds: Dataset) -> None:
    root = _clone(tmp_path)
    code, out, err = cli("validate", root, "--hash")
    assert code == 0, err
    assert "composing meeting_overlap_en (18 recordings)" in err
    assert f"ok, 18 utterances, {ds.total_duration / 60:.1f} min, {ds.content_hash()}" in out
    recorded = json.loads((root / "composed.json").read_text())["audio"]
    assert {a: file_sha256(root / a) for a in recorded} == recorded
    assert not list(root.glob(".*tmp*"))  # the staging folder is gone
    code, _, err = cli("validate", root)
    assert code == 0 and "composing" not in err  # composed once


def test_a_changed_source_is_one_line_naming_it(tmp_path: Path, cli) -> None:
    root = _clone(tmp_path)
    hashes = json.loads((root / "composed.json").read_text())
    source = "datasets/mini_en/audio/LJ001-0001.wav"
    hashes["sources"][source] = "0" * 64
    (root / "composed.json").write_text(json.dumps(hashes))
    code, _, err = cli("validate", root)
    assert code == 2
    assert f"its source {REPO_ROOT / source} differs" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (root / "audio").exists()


def test_an_unknown_recipe_is_one_line(tmp_path: Path, cli) -> None:
    root = _clone(tmp_path)
    card = (
        (root / "dataset.yaml").read_text().replace("composed: meeting_overlap_en", "composed: x")
    )
    (root / "dataset.yaml").write_text(card)
    code, _, err = cli("validate", root)
    assert code == 2
    assert "composed: 'x' is no recipe of this asrbench (known: meeting_overlap_en)" in err
    assert len(err.strip().splitlines()) == 1


def test_sessions_speakers_durations_and_bins(ds: Dataset) -> None:
    assert not [p for p in ds.problems if p.severity == "error"]
    assert Counter(u.extra["OVERLAP_BIN"] for u in ds) == {
        b: 3 for b in ("0", "5", "10", "15", "20", "30")
    }
    assert sorted(int(u.extra["NSPEAKERS"]) for u in ds) == [2] * 6 + [3] * 6 + [4] * 6
    assert all(40 <= u.duration <= 90 for u in ds)
    for utt in ds:
        speakers = {s.speaker for s in ds.segments if s.session_id == utt.id}
        assert sorted(speakers) == utt.extra["SPEAKERS"].split(",")
        assert len(speakers) == int(utt.extra["NSPEAKERS"])


def test_rttm_and_seglst_agree_and_turns_lie_inside_the_audio(
    tmp_path: Path, cli, ds: Dataset
) -> None:
    """The committed RTTM holds the SegLST's turns and is what `ops/export --to rttm` writes."""
    seglst = read_seglst(ROOT / "segments.seglst.json")
    rttm = read_rttm(ROOT / RTTM)
    key = lambda s: (s.session_id, s.start_time, s.speaker)  # noqa: E731
    turns = [(s.session_id, s.speaker, s.start_time, s.end_time) for s in sorted(seglst, key=key)]
    assert turns == [
        (s.session_id, s.speaker, s.start_time, round(s.end_time, 2)) for s in sorted(rttm, key=key)
    ]
    code, _, err = cli("export", "meeting_overlap_en", "--to", "rttm", "--out", tmp_path / "x")
    assert code == 0, err
    assert (tmp_path / "x" / "meeting_overlap_en.rttm").read_bytes() == (ROOT / RTTM).read_bytes()
    for utt in ds:
        info = sf.info(str(ds.audio_path(utt)))
        assert info.samplerate == 16000 and info.channels == 1
        ends = [t[3] for t in turns if t[0] == utt.id]
        assert 0 < min(t[2] for t in turns if t[0] == utt.id) and max(ends) <= info.duration


def _overlap_ratio(turns: list[tuple[float, float]]) -> float:
    """Overlapped / total speech time, by a sweep over the turns' boundaries."""
    events = sorted([(round(a, 2), 1) for a, _ in turns] + [(round(b, 2), -1) for _, b in turns])
    speech = overlap = 0.0
    active, last = 0, 0.0
    for t, step in events:
        if active >= 1:
            speech += t - last
        if active >= 2:
            overlap += t - last
        active, last = active + step, t
    return overlap / speech


def test_overlap_ratio_from_the_turns_is_the_recorded_one_in_its_bin(ds: Dataset) -> None:
    for utt in ds:
        ratio = _overlap_ratio(
            [(s.start_time, s.end_time) for s in ds.segments if s.session_id == utt.id]
        )
        assert f"{ratio:.4f}" == utt.extra["OVERLAP"]
        assert abs(ratio - int(utt.extra["OVERLAP_BIN"]) / 100) <= 0.01, utt.id
        assert utt.id.startswith(f"ov{int(utt.extra['OVERLAP_BIN']):02d}_")


def test_the_reference_against_itself_has_der_0(tmp_path: Path, cli, ds: Dataset) -> None:
    """The RTTM as reference and the SegLST as hypothesis (both files as written)."""
    out = tmp_path / "o"
    code, _, err = cli(
        "score", ROOT / "segments.rttm", ROOT / "segments.seglst.json", "--metric", "der",
        "--out", out,
    )  # fmt: skip
    assert code == 0, err
    rows = [json.loads(x) for x in (out / "sessions.jsonl").read_text().splitlines()]
    assert len(rows) == 18
    # RTTM gives start + duration, so an end can differ from the SegLST's by float rounding:
    # DER is exactly 0, JER within 1e-12
    assert all(r["der"] == 0 and r["jer"] < 1e-12 for r in rows)
    assert all(a == b for r in rows for a, b in r["mapping"])


def test_the_recipe_rebuilds_the_set_byte_for_byte(tmp_path: Path, ds: Dataset) -> None:
    script = ROOT / "build_meeting_overlap_en.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path / "set")], check=True)
    for name in COMMITTED:
        assert (tmp_path / "set" / name).read_bytes() == (ROOT / name).read_bytes(), name
    rebuilt = load_dataset(tmp_path / "set")
    assert rebuilt.content_hash() == ds.content_hash()
