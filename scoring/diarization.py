"""Diarization scoring (who spoke when): DER, JER and the speaker-count error per session.

Inputs are speaker turns, `scoring.segments.Segment`s from any reader of `scoring.timed`
(RTTM, SegLST, STM; words are ignored, STM's IGNORE_TIME_SEGMENT_IN_SCORING turns dropped),
reference and hypothesis; a session is a recording. The definitions are pyannote.metrics'
(`DiarizationErrorRate`, `JaccardErrorRate`, `DiarizationSpeakerCountError`, 4.2.0), checked
session by session in tests/scoring/test_diarization_parity.py:

* The scored time is everything (pyannote's UEM default: the union of both files' extents)
  minus the *collar* around every reference turn boundary, and, with `skip_overlap`, minus the
  time where two or more reference speakers speak at once. `collar` is NIST md-eval's: seconds
  on EACH side of a boundary (md-eval `-c 0.25`), which is pyannote's `collar=0.5` (its collar
  is the whole width, centred on the boundary).
* The speaker mapping is one to one and maximises the overlap of mapped speakers (Hungarian,
  as pyannote's `HungarianMapper`); a pair with no overlap is no pair.
* In every stretch with `r` reference and `h` hypothesis speakers of whom `c` are mapped pairs:
  missed `max(0, r - h)`, false alarm `max(0, h - r)`, confusion `min(r, h) - c`, total `r`
  (seconds times speakers). DER = (missed + false alarm + confusion) / total.
* JER (DIHARD II): per reference speaker, 1 - |ref & hyp| / |ref | hyp| with its mapped
  hypothesis speaker (1 when unmapped); a session's JER is their mean. Hypothesis speakers
  left unmapped cost nothing in JER (they are false alarm or confusion in DER).
* Speaker-count error: |hypothesis speakers - reference speakers| of the whole session.

One convention differs from pyannote, on purpose: overlapping (or touching) turns of ONE
speaker are merged first (as md-eval does, and as pyannote's own JER does). pyannote's DER
counts such a stretch twice (a reference speaker "speaking twice at once": 2 s of missed speech
for 1 s of audio); here it is one speaker speaking. Parity holds on inputs without self-overlap,
and on merged inputs.

Pooling over sessions is pyannote's `abs(metric)`: DER is the sum of the sessions' errors over
the sum of their totals, JER the mean over every reference speaker of every session (a session
weighs by its speakers). A session whose scored reference time is 0 (no speech left after the
collar and overlap removal) has no DER of its own (null, never 0 nor pyannote's 1.0): its false
alarm still counts in the pooled DER. Intervals resample whole sessions (`scoring.stats`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring.errors import ScoringError
from scoring.meeting import _sessions, hungarian  # one grouping and one solver for sessions
from scoring.segments import Segment
from scoring.stats import bootstrap_ci

DIARIZATION_FORMAT = "asrbench-diarization-v1"  # summary.json `session.format`, sessions.jsonl
DIARIZATION_METRICS = ("der", "jer")  # ops/score --metric: both are always computed
DEFAULT_COLLAR = 0.0  # pyannote's and DIHARD's; NIST RT used 0.25 (md-eval -c 0.25)
MAX_COLLAR = 60.0  # a collar wider than a minute hides whole turns: a typo
# pyannote.core drops segments shorter than this (Segment.__bool__): float slivers of cropping
# (1.1 - 0.25 against 0.85) are not a speaker's time
_PRECISION = 1e-6
CI_METHOD = "bootstrap over sessions (recordings), percentile"


@dataclass(frozen=True)
class DiarizationSession:
    """One session's durations (seconds; speaker-weighted where speakers overlap), its JER
    parts and speaker counts; `mapping` pairs (reference speaker, hypothesis speaker)."""

    session_id: str
    total: float
    missed: float
    false_alarm: float
    confusion: float
    jer_error: float  # sum over the scored reference speakers of their JER
    jer_speakers: int  # reference speakers left after the collar and overlap removal
    ref_speakers: int
    hyp_speakers: int
    mapping: tuple[tuple[str, str], ...] = ()

    @property
    def errors(self) -> float:
        return self.missed + self.false_alarm + self.confusion

    @property
    def der(self) -> float | None:
        """None where no reference time is scored: undefined, not 0 (see the module doc)."""
        return self.errors / self.total if self.total > 0 else None

    @property
    def jer(self) -> float | None:
        return self.jer_error / self.jer_speakers if self.jer_speakers else None

    @property
    def speaker_count_error(self) -> int:
        return abs(self.hyp_speakers - self.ref_speakers)

    def to_dict(self) -> dict:
        return {
            "session_id": self.session_id,
            "total": self.total,
            "missed": self.missed,
            "false_alarm": self.false_alarm,
            "confusion": self.confusion,
            "der": self.der,
            "jer": self.jer,
            "jer_speakers": self.jer_speakers,
            "ref_speakers": self.ref_speakers,
            "hyp_speakers": self.hyp_speakers,
            "speaker_count_error": self.speaker_count_error,
            "mapping": [list(p) for p in self.mapping],
        }


@dataclass(frozen=True)
class DiarizationScore:
    """Every session scored; the pooled rates are pyannote's `abs(metric)`."""

    sessions: tuple[DiarizationSession, ...]
    collar: float
    skip_overlap: bool
    intervals: dict

    def total(self, name: str) -> float:
        return float(sum(getattr(s, name) for s in self.sessions))

    @property
    def der(self) -> float | None:
        total = self.total("total")
        return self.total("errors") / total if total > 0 else None

    @property
    def jer(self) -> float | None:
        n = self.total("jer_speakers")
        return self.total("jer_error") / n if n else None

    @property
    def speaker_count_error(self) -> float:
        """Mean absolute error in speakers per session (pyannote's, not normalised)."""
        return self.total("speaker_count_error") / len(self.sessions)

    def describe(self, metric: str = "der") -> dict:
        """summary.json's `session` object in diarization mode (docs/RESULTS.md); `metric` is
        the one asked for (both are always computed and recorded)."""
        return {
            "format": DIARIZATION_FORMAT,
            "metric": metric,
            "collar": self.collar,
            "skip_overlap": self.skip_overlap,
            "n_sessions": len(self.sessions),
            "der": self.der,
            "jer": self.jer,
            "total": self.total("total"),
            "missed": self.total("missed"),
            "false_alarm": self.total("false_alarm"),
            "confusion": self.total("confusion"),
            "speaker_count_error": self.speaker_count_error,
            "undefined_sessions": sum(s.der is None for s in self.sessions),
            "intervals": self.intervals,
            "ci_method": CI_METHOD,
        }


def score_diarization(
    refs: Sequence[Segment],
    hyps: Sequence[Segment],
    *,
    collar: float = DEFAULT_COLLAR,
    skip_overlap: bool = False,
    sources: tuple[str | Path, str | Path] = ("reference", "hypothesis"),
    bootstrap: tuple[int, float, int] = (1000, 0.95, 0),
) -> DiarizationScore:
    """DER and JER of `hyps` against `refs` per session and pooled; `bootstrap` is
    (replicates, level, seed) for the intervals over sessions; `sources` name the files in
    errors."""
    if not 0 <= collar <= MAX_COLLAR:
        raise ScoringError(
            f"collar (--collar) must be 0 to {MAX_COLLAR:g} seconds on each side of a reference "
            f"boundary (md-eval's -c), not {collar!r}"
        )
    ref_by, hyp_by = _sessions(_turns(refs), _turns(hyps), *sources)
    sessions = tuple(
        score_session(sid, ref_by[sid], hyp_by[sid], collar, skip_overlap) for sid in ref_by
    )
    reps, level, seed = bootstrap

    def column(name: str) -> np.ndarray:
        return np.array([getattr(s, name) for s in sessions], dtype=np.float64)

    # whole sessions resampled: DER's parts are seconds, JER's are per reference speaker
    intervals = {
        "der": bootstrap_ci(column("errors"), column("total"), reps, level, seed),
        "jer": bootstrap_ci(column("jer_error"), column("jer_speakers"), reps, level, seed),
    }
    return DiarizationScore(sessions, collar, skip_overlap, intervals)


def _turns(segs: Sequence[Segment]) -> list[Segment]:
    """Speaker turns: STM's ignored stretches are not speech."""
    from scoring.timed import is_ignored

    return [s for s in segs if not is_ignored(s)]


def merge_turns(segs: Sequence[Segment]) -> dict[str, np.ndarray]:
    """Each speaker's turns as sorted, disjoint [start, end] rows: overlapping or touching
    turns of one speaker merged (md-eval's rule; see the module doc), empty turns dropped.
    Speakers in sorted order: pyannote's, so that equal-overlap mappings are broken alike."""
    by: dict[str, list[tuple[float, float]]] = {}
    for s in segs:
        if s.end_time - s.start_time > 0:
            by.setdefault(s.speaker, []).append((s.start_time, s.end_time))
    out = {}
    for spk, spans in sorted(by.items()):  # label order breaks ties in the mapping, as pyannote
        spans.sort()
        merged = [list(spans[0])]
        for a, b in spans[1:]:
            if a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        out[spk] = np.array(merged, dtype=np.float64)
    return out


def _active(spans: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Whether each point lies inside one of the disjoint sorted spans."""
    idx = np.searchsorted(spans[:, 0], points, side="right") - 1
    ok = idx >= 0
    ok[ok] = spans[idx[ok], 1] > points[ok]
    return ok


def _collars(ref: dict[str, np.ndarray], collar: float) -> np.ndarray:
    """The union of [t - collar, t + collar] over every reference turn boundary, as disjoint
    sorted spans (pyannote: a segment of width 2 * collar centred on t)."""
    if collar <= 0 or not ref:
        return np.zeros((0, 2))
    times = np.sort(np.concatenate([s.ravel() for s in ref.values()]))
    spans = np.column_stack([times - collar, times + collar])
    starts, ends = [spans[0, 0]], [spans[0, 1]]
    for a, b in spans[1:]:
        if a <= ends[-1]:
            ends[-1] = max(ends[-1], b)
        else:
            starts.append(a)
            ends.append(b)
    return np.column_stack([starts, ends])


@dataclass(frozen=True)
class _Grid:
    """The session cut at every boundary: each stretch's scored duration and who speaks."""

    weight: np.ndarray  # (K,) seconds scored in each stretch (0 where excluded)
    ref: np.ndarray  # (K, R) bool
    hyp: np.ndarray  # (K, H) bool


def _grid(ref: dict[str, np.ndarray], hyp: dict[str, np.ndarray], collar, skip_overlap) -> _Grid:
    excluded = _collars(ref, collar)
    cuts = [x.ravel() for x in (*ref.values(), *hyp.values(), excluded)]
    times = np.unique(np.concatenate(cuts)) if cuts else np.zeros(0)
    mids = (times[:-1] + times[1:]) / 2
    r = np.column_stack([_active(s, mids) for s in ref.values()] or [np.zeros(len(mids), bool)])
    h = np.column_stack([_active(s, mids) for s in hyp.values()] or [np.zeros(len(mids), bool)])
    keep = ~_active(excluded, mids) if len(excluded) else np.ones(len(mids), bool)
    if skip_overlap:
        keep &= r.sum(axis=1) < 2
    return _Grid(np.where(keep, np.diff(times), 0.0), r[:, : len(ref)], h[:, : len(hyp)])


def _scored(g: _Grid) -> tuple[_Grid, np.ndarray, np.ndarray]:
    """The grid without the speakers left with no scored time (all inside collars or
    skipped overlap): pyannote drops their labels before mapping, and the mapping's ties are
    broken by position, so the matrices must be the same shape."""
    ref_kept = g.weight @ g.ref > _PRECISION
    hyp_kept = g.weight @ g.hyp > _PRECISION
    return _Grid(g.weight, g.ref[:, ref_kept], g.hyp[:, hyp_kept]), ref_kept, hyp_kept


def _hungarian(cooc: np.ndarray) -> list[tuple[int, int]]:
    """pyannote's HungarianMapper: the one-to-one pairs of greatest total overlap, dropping
    pairs that do not overlap at all."""
    if not cooc.size:
        return []
    rows, cols = hungarian(-cooc)
    return [(r, c) for r, c in zip(rows, cols, strict=True) if cooc[r, c] > 0]


def score_session(
    sid: str, refs: Sequence[Segment], hyps: Sequence[Segment], collar: float, skip: bool
) -> DiarizationSession:
    """One session's DER parts, JER parts and speaker counts (the module doc's definitions)."""
    ref, hyp = merge_turns(refs), merge_turns(hyps)
    g, ref_kept, hyp_kept = _scored(_grid(ref, hyp, collar, skip))
    r_names = [n for n, k in zip(ref, ref_kept.tolist(), strict=True) if k]
    h_names = [n for n, k in zip(hyp, hyp_kept.tolist(), strict=True) if k]
    cooc = (g.ref * g.weight[:, None]).T @ g.hyp  # seconds each pair speaks together
    pairs = _hungarian(cooc)
    n_r, n_h = g.ref.sum(axis=1), g.hyp.sum(axis=1)
    correct = np.zeros(len(g.weight))
    for r, c in pairs:
        correct += g.ref[:, r] & g.hyp[:, c]
    w = g.weight
    jer_error, jer_speakers = _jer(g, cooc)
    return DiarizationSession(
        sid,
        total=float(w @ n_r),
        missed=float(w @ np.maximum(n_r - n_h, 0)),
        false_alarm=float(w @ np.maximum(n_h - n_r, 0)),
        confusion=float(w @ (np.minimum(n_r, n_h) - correct)),
        jer_error=jer_error,
        jer_speakers=jer_speakers,
        ref_speakers=len(ref),
        hyp_speakers=len(hyp),
        mapping=tuple((r_names[r], h_names[c]) for r, c in pairs),
    )


def _jer(g: _Grid, cooc: np.ndarray) -> tuple[float, int]:
    """The sum of the scored reference speakers' JER and their number (`_scored` has left out
    a speaker whose time is all inside collars or skipped overlap, as pyannote does)."""
    ref_time = g.weight @ g.ref
    hyp_time = g.weight @ g.hyp
    mapped = dict(_hungarian(cooc))
    error, n = 0.0, 0
    for r, t in enumerate(ref_time.tolist()):
        n += 1
        c = mapped.get(r)
        if c is None:
            error += 1.0
            continue
        both = float(cooc[r, c])
        union = t + float(hyp_time[c]) - both
        # |ref ^ hyp| >= 0 by definition; the float sums can give -1e-17 (shown as -0.00)
        error += max(0.0, t + float(hyp_time[c]) - 2 * both) / union
    return error, n


def sessions_table(result: DiarizationScore) -> str:
    """The per-session table (sessions.txt): seconds, DER, JER, speakers and mapping."""
    head = f"DER / JER (collar {result.collar:g} s each side" + (
        ", overlap skipped)" if result.skip_overlap else ", overlap scored)"
    )
    rows = [
        head,
        f"{'session':<24} {'total s':>9} {'miss s':>8} {'fa s':>8} {'conf s':>8} {'DER %':>7} "
        f"{'JER %':>7} {'spk r/h':>8}  speakers (ref->hyp)",
    ]

    def pct(x: float | None) -> str:
        return f"{100 * x:>7.2f}" if x is not None else f"{'-':>7}"

    for s in result.sessions:
        pairs = " ".join(f"{r}->{h}" for r, h in s.mapping)
        rows.append(
            f"{s.session_id:<24} {s.total:>9.2f} {s.missed:>8.2f} {s.false_alarm:>8.2f} "
            f"{s.confusion:>8.2f} {pct(s.der)} {pct(s.jer)} "
            f"{f'{s.ref_speakers}/{s.hyp_speakers}':>8}  {pairs}"
        )
    rows.append(
        f"{'all':<24} {result.total('total'):>9.2f} {result.total('missed'):>8.2f} "
        f"{result.total('false_alarm'):>8.2f} {result.total('confusion'):>8.2f} "
        f"{pct(result.der)} {pct(result.jer)}  speaker-count error "
        f"{result.speaker_count_error:.2f} per session"
    )
    return "\n".join(rows) + "\n"
