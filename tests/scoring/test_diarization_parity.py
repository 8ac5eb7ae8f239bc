"""DER, JER and speaker-count error (scoring.diarization) against pyannote.metrics 4.2.0, the
reference implementation: a seeded generated corpus (200 sessions, 1 to 6 speakers, overlaps,
collars, overlap scored or skipped) and the embedded long-form sets against perturbed copies
give the same components per session, to float rounding (1e-9 s)."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest

from scoring.diarization import score_diarization
from scoring.segments import Segment

pyannote_core = pytest.importorskip("pyannote.core")
pyannote_metrics = pytest.importorskip("pyannote.metrics.diarization")

TOL = 1e-9  # seconds (and JER units): float rounding of sums taken in another order
DATASETS = Path(__file__).resolve().parents[2] / "datasets"


def _session(rng: random.Random, sid: str, n_spk: int, prefix: str) -> list[Segment]:
    """Speaker turns on a millisecond grid, as RTTM writes them: no speaker overlaps itself,
    speakers overlap each other (up to ~30 % of the time), silences between."""
    out = []
    for k in range(n_spk):
        t = rng.randint(0, 3000) / 1000
        for _ in range(rng.randint(1, 8)):
            dur = rng.randint(200, 6000) / 1000
            out.append(Segment(sid, f"{prefix}{k}", t, round(t + dur, 3), ""))
            t = round(t + dur + rng.randint(1, 8000) / 1000, 3)
    return out


def _hypothesis(rng: random.Random, ref: list[Segment], sid: str) -> list[Segment]:
    """A system's guess: reference turns with moved boundaries, speakers split, merged or
    renamed, some turns dropped, some invented."""
    n_hyp = max(1, len({s.speaker for s in ref}) + rng.randint(-2, 3))
    names = {s.speaker: f"h{rng.randrange(n_hyp)}" for s in ref}
    out: dict[str, list[tuple[float, float]]] = {}
    for s in ref:
        if rng.random() < 0.1:
            continue
        a = max(0.0, round(s.start_time + rng.randint(-400, 400) / 1000, 3))
        b = max(a + 0.05, round(s.end_time + rng.randint(-400, 400) / 1000, 3))
        spk = names[s.speaker] if rng.random() < 0.85 else f"h{rng.randrange(n_hyp)}"
        out.setdefault(spk, []).append((a, round(b, 3)))
    for _ in range(rng.randint(0, 3)):
        a = rng.randint(0, 40000) / 1000
        out.setdefault(f"h{rng.randrange(n_hyp)}", []).append((a, round(a + 1.5, 3)))
    return [Segment(sid, spk, a, b, "") for spk, spans in out.items() for a, b in _disjoint(spans)]


def _disjoint(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """One speaker's turns made disjoint with a gap (pyannote counts a self-overlap twice,
    test_diarization.py; parity is on inputs without one)."""
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _annotation(segs: list[Segment]):
    ann = pyannote_core.Annotation()
    for s in segs:
        ann[pyannote_core.Segment(s.start_time, s.end_time), len(ann)] = s.speaker
    return ann


def _oracle(ref: list[Segment], hyp: list[Segment], collar: float, skip: bool) -> dict:
    """pyannote's components; its collar is the whole width, md-eval's (ours) one side. Each
    speaker's turns merged (`support()`): pyannote's DER would count a self-overlap twice,
    the one convention that differs (scoring/diarization.py); a no-op on the generated
    corpus, whose speakers never overlap themselves."""
    der = pyannote_metrics.DiarizationErrorRate(collar=2 * collar, skip_overlap=skip)
    jer = pyannote_metrics.JaccardErrorRate(collar=2 * collar, skip_overlap=skip)
    count = pyannote_metrics.DiarizationSpeakerCountError()
    r, h = _annotation(ref).support(), _annotation(hyp).support()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "uem was approximated": the default we follow
        d = der(r, h, detailed=True)
        j = jer(r, h, detailed=True)
        c = count(r, h, detailed=True)
    return {
        "total": d["total"],
        "missed": d["missed detection"],
        "false_alarm": d["false alarm"],
        "confusion": d["confusion"],
        "jer_error": j["speaker error"],
        "jer_speakers": j["speaker count"],
        "speaker_count_error": c["error"],
    }


def _differing(pairs, collar: float, skip: bool) -> list[str]:
    refs = [s for r, _ in pairs for s in r]
    hyps = [s for _, h in pairs for s in h]
    ours = score_diarization(refs, hyps, collar=collar, skip_overlap=skip, bootstrap=(0, 0.95, 0))
    bad = []
    for (ref, hyp), s in zip(pairs, ours.sessions, strict=True):
        want = _oracle(ref, hyp, collar, skip)
        got = {k: getattr(s, k) for k in want}
        if any(abs(got[k] - want[k]) > TOL for k in want):
            bad.append(f"{s.session_id}: ours {got} pyannote {want}")
    return bad


def _corpus(seed: int, n: int) -> list[tuple[list[Segment], list[Segment]]]:
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        sid = f"s{i:03d}"
        ref = _session(rng, sid, rng.randint(1, 6), "spk")
        hyp = _hypothesis(rng, ref, sid) if i % 25 else []  # some sessions with no hypothesis
        pairs.append((ref, hyp))
    return pairs


@pytest.mark.parametrize("skip", [False, True], ids=["overlap-scored", "overlap-skipped"])
@pytest.mark.parametrize("collar", [0.0, 0.25, 0.5])
def test_generated_corpus_matches_pyannote(collar: float, skip: bool) -> None:
    """200 generated sessions: 0 differing beyond float rounding, per component."""
    assert _differing(_corpus(41, 200), collar, skip) == []


def _perturbed(rng: random.Random, ref: list[Segment]) -> list[Segment]:
    """A reference's diarization as a system might return it: boundaries moved by up to
    0.5 s, speakers renamed, one turn in ten dropped, one in ten given to another speaker."""
    names = sorted({s.speaker for s in ref})
    out = []
    for s in ref:
        if rng.random() < 0.1:
            continue
        a = max(0.0, s.start_time + rng.uniform(-0.5, 0.5))
        b = max(a + 0.1, s.end_time + rng.uniform(-0.5, 0.5))
        spk = rng.choice(names) if rng.random() < 0.1 else s.speaker
        out.append(Segment(s.session_id, f"sys_{spk.lower()}", a, b, ""))
    return out


@pytest.mark.parametrize("dataset", ["mini_meeting_en", "mini_long_en"])
def test_embedded_sets_against_perturbed_copies_match_pyannote(dataset: str) -> None:
    """The embedded long-form references (SegLST, scoring.timed's reader) against seeded
    perturbed copies, every collar and overlap setting: 0 differing sessions."""
    from scoring.timed import read_timed

    segs = read_timed(DATASETS / dataset / "segments.seglst.json")
    rng = random.Random(41)
    pairs = []
    for sid in dict.fromkeys(s.session_id for s in segs):
        ref = [s for s in segs if s.session_id == sid]
        pairs.append((ref, _perturbed(rng, ref)))
    for collar in (0.0, 0.25, 0.5):
        for skip in (False, True):
            assert _differing(pairs, collar, skip) == [], (collar, skip)
