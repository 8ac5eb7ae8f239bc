"""Long-form datasets (`kind: longform`): the embedded sets, their recipes, the loader's checks of
the segments file (each bad input named by file and line) and the identity covering it."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
import soundfile as sf

from asrbench.dataset import DatasetError, load_dataset, validate
from asrbench.importers.longform import write_longform_dataset
from asrbench.longform import compose
from asrbench.longform.segments import session_text, write_timed
from asrbench.perturb.bank import MOH_DIR
from asrbench.settings import REPO_ROOT
from scoring.timed import read_seglst
from tests.conftest import MINI_EN, require

DATASETS = REPO_ROOT / "datasets"
LONGFORM = ("mini_long_en", "mini_meeting_en")


@pytest.mark.parametrize("name", LONGFORM)
def test_embedded_longform_sets_load_with_exact_segments(name: str) -> None:
    ds = load_dataset(DATASETS / name)
    assert ds.longform and not ds.problems
    assert len(ds) >= 2 and all(u.duration >= 120 for u in ds)
    size = sum(f.stat().st_size for f in (DATASETS / name).rglob("*") if f.is_file())
    assert size < 9.5e6
    for utt in ds:
        segs = [s for s in ds.segments if s.session_id == utt.id]
        assert utt.text == session_text(segs)
        assert max(s.end_time for s in segs) <= utt.duration
        # times are whole 10 ms frames, so they print exactly with two decimals
        assert all(
            abs(t * 100 - round(t * 100)) < 1e-6 for s in segs for t in (s.start_time, s.end_time)
        )


def test_meeting_sessions_have_two_speakers_and_cross_speaker_overlap() -> None:
    ds = load_dataset(DATASETS / "mini_meeting_en")
    for utt in ds:
        segs = sorted(
            (s for s in ds.segments if s.session_id == utt.id), key=lambda s: s.start_time
        )
        assert len({s.speaker for s in segs}) == 2
        overlaps = [(a, b) for a, b in pairwise(segs) if b.start_time < a.end_time]
        assert overlaps and all(a.speaker != b.speaker for a, b in overlaps)


def test_session_audio_holds_the_speech_where_the_segments_say() -> None:
    """Inside a segment the level is speech; in the longest pause it is the -50 dBFS bed."""
    ds = load_dataset(DATASETS / "mini_long_en")
    utt = next(u for u in ds if u.id == "lj_reading")
    audio, rate = sf.read(str(ds.audio_path(utt)))
    segs = [s for s in ds.segments if s.session_id == utt.id]
    gap_start, gap_end = max(
        ((a.end_time, b.start_time) for a, b in pairwise(segs)), key=lambda g: g[1] - g[0]
    )
    pause = audio[int(gap_start * rate) + 800 : int(gap_end * rate) - 800]
    speech = audio[int(segs[0].start_time * rate) : int(segs[0].end_time * rate)]
    assert 20 * math.log10((pause**2).mean() ** 0.5) < -40
    assert (speech**2).mean() > 100 * (pause**2).mean()


def test_nonspeech_clips_are_reference_free_and_hold_no_speech() -> None:
    ds = load_dataset(DATASETS / "nonspeech_clips")
    assert ds.reference_free and not ds.problems
    assert {u.extra["CONTENT"] for u in ds} == {"silence", "noise", "music"}
    assert all(10 <= u.duration <= 30 for u in ds)
    silence = sf.read(str(ds.audio_path(next(u for u in ds if u.id == "silence_10s"))))[0]
    assert not silence.any()


@pytest.mark.parametrize("name", [*LONGFORM, "nonspeech_clips"])
def test_recipes_rebuild_the_embedded_sets_byte_for_byte(
    name: str, tmp_path: Path, shared: Path
) -> None:
    if name == "nonspeech_clips":
        require("moh", MOH_DIR.is_dir(), f"{MOH_DIR} (Debian asterisk-moh-opsound-wav)")
    script = DATASETS / name / f"build_{name}.py"
    cmd = [sys.executable, str(script), "--out", str(tmp_path / name)]
    if name in LONGFORM:
        cmd += ["--shared", str(shared)]
    subprocess.run(cmd, check=True, capture_output=True)
    rebuilt = load_dataset(tmp_path / name)
    assert rebuilt.content_hash() == load_dataset(DATASETS / name).content_hash()


# ----------------------------------------------------------------------------- a tiny set


def _tiny(root: Path) -> Path:
    """A two-speaker session of two real mini_en utterances, overlapping by 0.3 s."""
    a = compose.Clip("LJ", "in being comparatively modern.", _clip("LJ001-0002"))
    b = compose.Clip("aew", "Author of the danger trail.", _clip("cmu_arctic_us_aew_a0001"))
    placed = compose.sequence([a, b], [-30])
    bed = compose.noise_bed([MINI_EN / "audio/LJ001-0002.wav"], 2000, -60)
    samples, _, _ = compose.render(placed, bed)
    session = compose.Session("s1", samples, tuple(compose.segments("s1", placed)))
    write_longform_dataset(root, {"id": "tiny_long", "sample_rate": 16000}, [session])
    return root


def _clip(uid: str) -> object:
    return compose.trim(compose.read_mono(MINI_EN / f"audio/{uid}.wav"))


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny(tmp_path_factory.mktemp("tiny") / "tiny_long")


@pytest.fixture
def tiny(tiny_root: Path, tmp_path: Path) -> Path:
    root = tmp_path / "tiny_long"
    shutil.copytree(tiny_root, root)
    return root


def _rewrite(root: Path, edit) -> Path:
    """Edit the SegLST entries (a list of dicts) and write them back one per line."""
    path = root / "segments.seglst.json"
    entries = json.loads(path.read_text())
    edit(entries)
    path.write_text("[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]\n")
    return path


def _only_error(root: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(root)
    errors = [p for p in info.value.problems if p.severity == "error"]
    assert len(errors) == 1, errors
    return str(errors[0])


def test_tiny_set_loads_and_its_hash_covers_the_segments(tiny: Path) -> None:
    ds = load_dataset(tiny)
    assert [s.speaker for s in ds.segments] == ["LJ", "aew"]
    assert ds.segments[1].start_time < ds.segments[0].end_time  # the overlap survived
    before = ds.content_hash()

    def nudge(entries: list) -> None:
        entries[1]["start_time"] += 0.01

    _rewrite(tiny, nudge)
    assert load_dataset(tiny).content_hash() != before


def test_stm_segments_file_is_read_too(tiny: Path) -> None:
    segs = read_seglst(tiny / "segments.seglst.json")
    write_timed(tiny / "ref.stm", segs, "stm")
    (tiny / "segments.seglst.json").unlink()
    card = (tiny / "dataset.yaml").read_text().replace("segments.seglst.json", "ref.stm")
    (tiny / "dataset.yaml").write_text(card)
    assert load_dataset(tiny).segments == segs


def _past_end(e: list) -> None:
    e[1]["end_time"] = 99.0


def _negative(e: list) -> None:
    e[0]["end_time"] = e[0]["start_time"] - 0.1


def _self_overlap(e: list) -> None:
    e[1]["speaker"] = "LJ"


def _unknown_session(e: list) -> None:
    e[1]["session_id"] = "s2"


def _no_words(e: list) -> None:
    for x in e:
        x["words"] = ""


def _unsorted(e: list) -> None:
    e.append(dict(e[0], start_time=0.0, end_time=0.1, words="x"))


@pytest.mark.parametrize(
    ("edit", "where", "pattern"),
    [
        (_past_end, ":3:", "ends at 99 s, past the end of the audio of 's1'"),
        (_negative, ":2:", "before it starts"),
        (_self_overlap, ":3:", "speaker 'LJ' of session 's1' overlaps itself"),
        (_unknown_session, ":3:", "session 's2' is not a recording of the dataset"),
        (_no_words, ":2:", "session 's1' has no reference words"),
        (_unsorted, ":4:", "segments out of order"),
    ],
)
def test_bad_segments_are_named_by_file_and_line(
    tiny: Path, edit, where: str, pattern: str
) -> None:
    _rewrite(tiny, edit)
    msg = _only_error(tiny)
    assert f"segments.seglst.json{where}" in msg and pattern in msg
    assert any(pattern in str(p) for p in validate(tiny))


def test_text_must_be_the_segments_words_in_time_order(tiny: Path) -> None:
    meta = tiny / "metadata.tsv"
    meta.write_text(meta.read_text().replace("comparatively modern.", "modern."))
    msg = _only_error(tiny)
    assert "metadata.tsv:2:" in msg and "[longform-text]" in msg


def test_missing_segments_file_says_what_to_write(tiny: Path) -> None:
    (tiny / "segments.seglst.json").unlink()
    assert "segments file is missing" in _only_error(tiny)


@pytest.mark.parametrize("where", ["/etc/passwd.json", "../outside.json", "sub/s.json"])
def test_segments_file_must_lie_beside_metadata(tiny: Path, where: str) -> None:
    card = (tiny / "dataset.yaml").read_text()
    (tiny / "dataset.yaml").write_text(
        card.replace("segments: segments.seglst.json", f"segments: {where}")
    )
    msg = _only_error(tiny)
    assert "dataset.yaml" in msg and "is not a file in the dataset folder" in msg


def test_write_seglst_then_load_keeps_segments(tiny: Path) -> None:
    segs = read_seglst(tiny / "segments.seglst.json")
    write_timed(tiny / "segments.seglst.json", segs, "seglst")
    assert load_dataset(tiny).segments == segs


def test_a_perturbed_longform_set_keeps_its_segments_and_speed_is_refused(tmp_path: Path) -> None:
    from asrbench.perturb.derive import derive_dataset
    from asrbench.perturb.dsp import PerturbError

    parent = load_dataset(DATASETS / "mini_long_en")
    first = parent.utterances[0].id
    out = derive_dataset(parent.root, "gaussian_noise:3", out=tmp_path / "noisy", utt_ids=[first])
    noisy = load_dataset(out.path)
    assert noisy.longform and [u.id for u in noisy.utterances] == [first]
    assert noisy.segments == [s for s in parent.segments if s.session_id == first]
    with pytest.raises(PerturbError, match=rf"changes the length of long-form recording {first}"):
        derive_dataset(parent.root, "speed_up:2", out=tmp_path / "fast", utt_ids=[first])
    assert not (tmp_path / "fast").exists()
