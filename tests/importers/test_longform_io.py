"""Long-form import and export (`ops/import longform`, `ops/import lhotse --longform`,
`ops/export --to stm|seglst|rttm|lhotse`): round trips through each format keep every segment,
and bad input is refused naming the file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from asrbench.dataset import load_dataset
from asrbench.importers.common import ImportProblem
from asrbench.importers.export import export_dataset
from asrbench.importers.longform import build_longform, from_timed
from asrbench.longform.segments import write_timed
from asrbench.settings import REPO_ROOT
from scoring.timed import read_rttm, read_seglst, read_stm
from tests.longform.test_dataset import _tiny


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny(tmp_path_factory.mktemp("tiny") / "tiny_long")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASRBENCH_DATASETS_DIR", str(tmp_path / "datasets"))
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _key(segs) -> list:
    return [(s.session_id, s.speaker, s.start_time, s.end_time, s.words) for s in segs]


@pytest.mark.parametrize("fmt", ["stm", "seglst"])
def test_export_then_import_keeps_segments_and_text(
    tiny_root: Path, env: Path, cli, fmt: str
) -> None:
    code, out, err = cli("export", str(tiny_root), "--to", fmt, "--out", str(env / "x"))
    assert code == 0, err
    assert "1 recordings of tiny_long" in out
    ref = next((env / "x").iterdir())
    code, out, err = cli(
        "import", "longform", "--id", "back", "--segments", str(ref),
        "--audio-dir", str(tiny_root / "audio"),
    )  # fmt: skip
    assert code == 0, err
    assert "1 recordings" in out and "2 segments" in out
    back, orig = load_dataset(env / "datasets" / "back"), load_dataset(tiny_root)
    assert back.longform and _key(back.segments) == _key(orig.segments)
    assert [u.text for u in back] == [u.text for u in orig]
    assert back.utterances[0].duration == orig.utterances[0].duration


def test_rttm_import_makes_a_reference_free_longform_set(tiny_root: Path, tmp_path: Path) -> None:
    export_dataset(load_dataset(tiny_root), "rttm", tmp_path / "x")
    turns = read_rttm(tmp_path / "x" / "tiny_long.rttm")
    assert [(t.speaker, t.words) for t in turns] == [("LJ", ""), ("aew", "")]
    source = from_timed(tmp_path / "x" / "tiny_long.rttm", tiny_root / "audio")
    ds = load_dataset(build_longform(tmp_path / "spk", source, dataset_id="spk"))
    assert ds.reference_free and ds.longform and [u.text for u in ds] == [""]
    assert _key(ds.segments) == _key(turns)


def test_lhotse_round_trip_one_supervision_per_segment(tiny_root: Path, env: Path, cli) -> None:
    code, _, err = cli("export", str(tiny_root), "--to", "lhotse", "--out", str(env / "lh"))
    assert code == 0, err
    from lhotse import load_manifest

    sups = load_manifest(env / "lh" / "supervisions.jsonl.gz")
    cuts = load_manifest(env / "lh" / "cuts.jsonl.gz")
    orig = load_dataset(tiny_root)
    assert len(sups) == len(orig.segments) and len(cuts) == len(orig)
    assert sorted(len(c.supervisions) for c in cuts) == sorted(
        sum(s.session_id == u.id for s in orig.segments) for u in orig
    )
    code, _, err = cli(
        "import", "lhotse", "--id", "lh", "--longform",
        "--recordings", str(env / "lh" / "recordings.jsonl.gz"),
        "--supervisions", str(env / "lh" / "supervisions.jsonl.gz"),
        "--audio-root", str(tiny_root),
    )  # fmt: skip
    assert code == 0, err
    back = load_dataset(env / "datasets" / "lh")
    assert _key(back.segments) == _key(orig.segments)
    assert [u.text for u in back] == [u.text for u in orig]


def test_an_utterance_dataset_exports_one_segment_per_utterance(tmp_path: Path) -> None:
    ds = load_dataset(REPO_ROOT / "datasets" / "mini_en")
    export_dataset(ds, "stm", tmp_path / "x")
    segs = read_stm(tmp_path / "x" / "mini_en.stm")
    assert [s.session_id for s in segs] == [u.id for u in ds]
    assert all(s.start_time == 0 and s.end_time == pytest.approx(u.duration, abs=1e-3)
               for s, u in zip(segs, ds, strict=True))  # fmt: skip


def _copy(tiny_root: Path, tmp_path: Path) -> tuple[Path, list]:
    audio = tmp_path / "audio"
    shutil.copytree(tiny_root / "audio", audio)
    return audio, read_seglst(tiny_root / "segments.seglst.json")


def test_import_refuses_segments_past_the_end_of_the_audio(tiny_root: Path, tmp_path: Path) -> None:
    audio, segs = _copy(tiny_root, tmp_path)
    write_timed(
        tmp_path / "ref.stm",
        [segs[0], segs[1].__class__(**{**segs[1].__dict__, "end_time": 60.0})],
        "stm",
    )
    source = from_timed(tmp_path / "ref.stm", audio)
    with pytest.raises(ImportProblem, match=r"ref\.stm:2: segment ends at 60 s, past the end"):
        build_longform(tmp_path / "out", source, dataset_id="x")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["audio", "ref.stm"]  # nothing left behind


def test_import_names_a_session_without_audio_and_refuses_a_ctm(
    tiny_root: Path, tmp_path: Path
) -> None:
    audio, segs = _copy(tiny_root, tmp_path)
    (audio / "s1.wav").rename(audio / "other.wav")
    write_timed(tmp_path / "ref.stm", segs, "stm")
    with pytest.raises(ImportProblem, match=r"ref\.stm:1: session 's1': no audio file named s1\."):
        from_timed(tmp_path / "ref.stm", audio)
    from scoring.segments import TimedWord

    write_timed(tmp_path / "hyp.ctm", [TimedWord("s1", 0.5, 0.3, "in")], "ctm")
    with pytest.raises(ImportProblem, match=r"hyp\.ctm: a CTM holds hypothesis words"):
        from_timed(tmp_path / "hyp.ctm", audio)


def test_import_names_the_line_of_a_negative_duration(tiny_root: Path, tmp_path: Path) -> None:
    audio, _ = _copy(tiny_root, tmp_path)
    (tmp_path / "ref.stm").write_text("s1 1 LJ 0.5 2 in being\ns1 1 aew 3 2.5 author\n")
    with pytest.raises(ImportProblem, match=r"ref\.stm:2: segment ends at 2\.5 s before it starts"):
        from_timed(tmp_path / "ref.stm", audio)
