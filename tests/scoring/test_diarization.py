"""DER, JER and the speaker-count error (scoring.diarization, `ops/score --metric der|jer`):
values worked by hand, the documented conventions on bad input (a speaker overlapping
itself, unknown hypothesis speakers, 40 hypothesis speakers, a session with no scored
speech) and the one-line errors of malformed files. Parity with pyannote.metrics on many
sessions: test_diarization_parity.py."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from scoring.diarization import score_diarization, score_session
from scoring.errors import ScoringError
from scoring.segments import Segment


def _turns(sid: str, *spans: tuple[str, float, float]) -> list[Segment]:
    return [Segment(sid, spk, a, b, "") for spk, a, b in spans]


def _rttm(path: Path, segs: list[Segment]) -> Path:
    lines = [
        f"SPEAKER {s.session_id} 1 {s.start_time} {s.end_time - s.start_time:.3f} <NA> <NA> "
        f"{s.speaker} <NA> <NA>"
        for s in segs
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


REF = _turns("s1", ("A", 0.0, 5.0), ("B", 4.0, 8.0))


def test_der_and_jer_worked_by_hand() -> None:
    """Reference A 0-5, B 4-8 (1 s of overlap); hypothesis x 0-4.5, y 4.5-9.
    Mapping A->x (4.5 s together), B->y (3.5 s). Stretches: 0-4 A/x correct; 4-4.5 A,B / x:
    1 missed; 4.5-5 A,B / y: 1 missed; 5-8 B/y correct; 8-9 -/y: 1 s false alarm.
    Total 9 s, errors 2 s: DER 2/9. JER: A 1 - 4.5/5, B 1 - 3.5/5 (union 4-9): (0.1 + 0.3)/2."""
    hyp = _turns("s1", ("x", 0.0, 4.5), ("y", 4.5, 9.0))
    s = score_session("s1", REF, hyp, collar=0.0, skip=False)
    assert (s.total, s.missed, s.false_alarm, s.confusion) == (9.0, 1.0, 1.0, 0.0)
    assert s.der == pytest.approx(2 / 9)
    assert s.jer == pytest.approx((0.1 + 0.3) / 2)
    assert s.mapping == (("A", "x"), ("B", "y"))
    # the collar (md-eval's: 0.25 s each side of 0, 4, 5, 8) and the overlap left out:
    # 0.25-3.75 A/x and 5.25-7.75 B/y correct, 8.25-9 false alarm: 0.75 / 6
    skipped = score_session("s1", REF, hyp, collar=0.25, skip=True)
    assert skipped.total == pytest.approx(6.0)
    assert skipped.der == pytest.approx(0.75 / 6)


def test_speaker_overlapping_itself_is_merged_not_counted_twice() -> None:
    """One speaker's overlapping turns (A 0-5 and A 3-8) are one speaker speaking 0-8, as
    md-eval and pyannote's JER take them; pyannote's DER counts 3-5 twice (2 s missed for a
    hypothesis that is exactly right). Documented in docs/SCORING.md."""
    core = pytest.importorskip("pyannote.core")
    metrics = pytest.importorskip("pyannote.metrics.diarization")
    ref = _turns("s1", ("A", 0.0, 5.0), ("A", 3.0, 8.0))
    hyp = _turns("s1", ("x", 0.0, 8.0))
    s = score_session("s1", ref, hyp, collar=0.0, skip=False)
    assert (s.total, s.errors, s.jer) == (8.0, 0.0, 0.0)
    raw = core.Annotation()
    for i, seg in enumerate(ref):
        raw[core.Segment(seg.start_time, seg.end_time), i] = seg.speaker
    h = core.Annotation()
    h[core.Segment(0.0, 8.0)] = "x"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counted_twice = metrics.DiarizationErrorRate()(raw, h, detailed=True)
        merged = metrics.DiarizationErrorRate()(raw.support(), h, detailed=True)
    assert (counted_twice["total"], counted_twice["missed detection"]) == (10.0, 2.0)
    assert (merged["total"], merged["missed detection"]) == (s.total, s.missed)


def test_unknown_hypothesis_speakers_are_mapped_by_time() -> None:
    """Hypothesis labels never need to match the reference's: a perfect diarization under
    other names scores 0."""
    hyp = _turns("s1", ("SPEAKER_07", 0.0, 5.0), ("guest", 4.0, 8.0))
    s = score_session("s1", REF, hyp, collar=0.0, skip=False)
    assert (s.errors, s.jer, s.speaker_count_error) == (0.0, 0.0, 0)
    assert s.mapping == (("A", "SPEAKER_07"), ("B", "guest"))


def test_forty_hypothesis_speakers_are_scored_not_refused() -> None:
    """An over-segmenting system (each 0.2 s its own speaker): 2 of 40 map, the rest is
    confusion; JER stays under 1, the speaker-count error says 38."""
    hyp = _turns("s1", *[(f"h{k:02d}", k * 0.2, (k + 1) * 0.2) for k in range(40)])
    s = score_session("s1", REF, hyp, collar=0.0, skip=False)
    assert (s.ref_speakers, s.hyp_speakers, s.speaker_count_error) == (2, 40, 38)
    assert s.missed == pytest.approx(1.0)  # 4-5: two reference speakers, one hypothesis
    assert s.total == pytest.approx(9.0)
    assert s.confusion == pytest.approx(9.0 - 1.0 - 0.4)  # all but the two mapped 0.2 s
    assert 0.9 < s.jer < 1.0


def test_session_with_no_scored_speech_has_no_der_but_its_false_alarm_counts() -> None:
    """Session s2's only reference time is overlap, and --skip-overlap leaves it out: its DER
    is undefined (None, not 0 or pyannote's 1.0); its hypothesis' 2 s still count as false
    alarm in the pooled DER."""
    refs = REF + _turns("s2", ("A", 0.0, 1.0), ("B", 0.0, 1.0))
    hyps = _turns("s1", ("x", 0.0, 5.0), ("y", 4.0, 8.0)) + _turns("s2", ("x", 1.0, 3.0))
    result = score_diarization(refs, hyps, skip_overlap=True, bootstrap=(50, 0.95, 0))
    s1, s2 = result.sessions
    assert (s2.total, s2.false_alarm, s2.der, s2.jer) == (0.0, 2.0, None, None)
    assert result.der == pytest.approx(2.0 / s1.total)
    assert result.describe()["undefined_sessions"] == 1


def test_hypothesis_session_missing_from_reference_is_an_error() -> None:
    stray = [Segment("other", "x", 0.0, 1.0, "", line=3)]
    with pytest.raises(ScoringError, match=r"hyp\.rttm:3: session 'other' is not in the reference"):
        score_diarization(REF, stray, sources=("ref.rttm", "hyp.rttm"))


def test_ops_score_der_writes_sessions_and_summary(cli, tmp_path: Path) -> None:
    ref = _rttm(tmp_path / "ref.rttm", REF)
    hyp = _rttm(tmp_path / "hyp.rttm", _turns("s1", ("x", 0.0, 4.5), ("y", 4.5, 9.0)))
    code, out, err = cli("score", ref, hyp, "--metric", "der", "--out", tmp_path / "o")
    assert code == 0, err
    assert "DER / JER" in out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    session = summary["session"]
    assert session["format"] == "asrbench-diarization-v1"
    assert (session["metric"], session["collar"], session["skip_overlap"]) == ("der", 0.0, False)
    assert session["der"] == pytest.approx(2 / 9)
    assert session["intervals"]["der"]["replicates"] == 1000
    assert summary["metrics"] is None and summary["reference_free"] is False
    assert summary["scorer"]["session"] == {"metric": "der", "collar": 0.0, "skip_overlap": False}
    (line,) = (tmp_path / "o" / "sessions.jsonl").read_text().splitlines()
    assert json.loads(line)["mapping"] == [["A", "x"], ["B", "y"]]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "SPEAKER s1 1 0.0 abc <NA> <NA> A <NA> <NA>",
            "ref.rttm:2: duration 'abc' is not a number",
        ),
        ("SPEAKER s1 1 0.5", "ref.rttm:2: an RTTM SPEAKER line needs"),
        ("SPEAKR s1 1 0.5 1.0 <NA> <NA> A <NA> <NA>", "ref.rttm:2: 'SPEAKR' is not an RTTM line"),
        ("SPEAKER s1 1 -1 1.0 <NA> <NA> A <NA> <NA>", "ref.rttm:2: negative start time"),
    ],
)
def test_malformed_rttm_is_one_line_naming_file_and_line(
    cli, tmp_path: Path, line: str, message: str
) -> None:
    ref = tmp_path / "ref.rttm"
    ref.write_text("SPEAKER s1 1 0 1 <NA> <NA> A <NA> <NA>\n" + line + "\n", encoding="utf-8")
    hyp = _rttm(tmp_path / "hyp.rttm", REF)
    code, _, err = cli("score", ref, hyp, "--metric", "der", "--out", tmp_path / "o")
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metric", "der", "--collar", "61"], "--collar 61: give seconds from 0 to 60"),
        (["--metric", "cpwer", "--skip-overlap"], "--skip-overlap applies to --metric der or jer"),
        (
            ["--metric", "dre"],
            "--metric must be one of wer, cpwer, tcpwer, orcwer, tcorcwer, der, jer",
        ),
    ],
)
def test_bad_options_are_one_line(cli, tmp_path: Path, args: list[str], message: str) -> None:
    ref = _rttm(tmp_path / "ref.rttm", REF)
    code, _, err = cli("score", ref, ref, *args, "--out", tmp_path / "o")
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_collar_default_is_the_metrics_own(cli, tmp_path: Path) -> None:
    """--collar unset: 0 for DER/JER (pyannote's, DIHARD's), 5 s for tcpWER (MeetEval's)."""
    ref = tmp_path / "ref.seglst.json"
    ref.write_text(
        json.dumps([{**s.to_seglst(), "words": "hello there"} for s in REF]), encoding="utf-8"
    )
    for metric, want in (("der", 0.0), ("tcpwer", 5.0)):
        code, _, err = cli("score", ref, ref, "--metric", metric, "--out", tmp_path / metric)
        assert code == 0, err
        summary = json.loads((tmp_path / metric / "summary.json").read_text())
        assert summary["session"]["collar"] == want


def test_a_reference_against_itself_has_no_negative_jer() -> None:
    """Float sums of overlaps gave one mini_meeting_en session a JER of -1e-17 against
    itself, printed `-0.00`: a speaker's JER is never below 0."""
    from asrbench.settings import REPO_ROOT
    from scoring.meeting import read_segments

    segs = read_segments(REPO_ROOT / "datasets" / "mini_meeting_en" / "segments.seglst.json")
    result = score_diarization(segs, segs)
    jers = [s.jer for s in result.sessions] + [result.jer]
    assert all(j is not None and 0.0 <= j < 1e-12 for j in jers), jers


def test_bad_input_through_ops_score_is_a_documented_score(cli, tmp_path: Path) -> None:
    """Through the CLI: a reference speaker overlapping itself (merged), hypothesis labels
    the reference does not know (mapped by time), 40 hypothesis speakers (scored), and a
    session the hypothesis has no turn in (all missed) are scores, exit 0; a hypothesis
    session the reference lacks is one line, exit 2 (docs/SCORING.md, "Bad input, decided")."""
    ref = _rttm(
        tmp_path / "ref.rttm",
        _turns("s1", ("A", 0.0, 5.0), ("A", 3.0, 8.0), ("B", 9.0, 12.0))
        + _turns("s2", ("A", 0.0, 4.0))
        + _turns("s3", ("A", 0.0, 2.0), ("B", 2.0, 4.0)),
    )
    hyp = _rttm(
        tmp_path / "hyp.rttm",
        _turns("s1", ("SPEAKER_07", 0.0, 8.0), ("guest", 9.0, 12.0))
        + _turns("s3", *[(f"h{k:02d}", k * 0.1, (k + 1) * 0.1) for k in range(40)]),
    )
    code, out, err = cli("score", ref, hyp, "--metric", "der", "--out", tmp_path / "o")
    assert code == 0, err
    rows = [json.loads(x) for x in (tmp_path / "o" / "sessions.jsonl").read_text().splitlines()]
    s1, s2, s3 = rows
    assert (s1["total"], s1["der"], s1["mapping"]) == (
        11.0,
        0.0,
        [["A", "SPEAKER_07"], ["B", "guest"]],
    )
    assert (s2["missed"], s2["der"], s2["hyp_speakers"]) == (4.0, 1.0, 0)
    assert (s3["hyp_speakers"], s3["speaker_count_error"]) == (40, 38)
    assert s3["der"] == pytest.approx((4.0 - 0.2) / 4.0)  # 2 of 40 map, 0.1 s each
    stray = _rttm(tmp_path / "stray.rttm", _turns("s9", ("x", 0.0, 1.0)))
    code, _, err = cli("score", ref, stray, "--metric", "der", "--out", tmp_path / "o2")
    assert code == 2 and "stray.rttm:1: session 's9' is not in the reference" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
