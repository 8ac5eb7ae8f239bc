"""Session-level scoring of timed transcripts: session WER, cpWER, tcpWER and ORC-WER.

Inputs are lists of `scoring.segments.Segment` (STM, SegLST, RTTM readers in `scoring.timed`;
CTM words through `words_to_segments`), reference and hypothesis; a session is a recording.

* ``wer``: all reference words of a session in time order (segments by start time) against
  all hypothesis words, through the `Scorer` as one long utterance: its normalisation, DAE and
  aligner (the long-pair path of `scoring.align`). Speakers are ignored.
* ``cpwer`` (concatenated minimum-permutation WER, CHiME-6): each speaker's words in time
  order; reference and hypothesis speakers are paired by the assignment with the fewest
  errors (Hungarian, `scipy.optimize.linear_sum_assignment` over the edit distances, as
  MeetEval does; a speaker left unpaired is scored against nothing: all deletions or all
  insertions); the paired texts are then scored by the `Scorer` (normalisation, DAE).
* ``tcpwer`` (time-constrained cpWER, MeetEval): as cpWER, but a reference and a hypothesis
  word may be matched or substituted only when their times overlap, the hypothesis word's
  widened by the collar on both sides (default 5 s, always recorded). Word times come from the
  segment times as MeetEval's defaults make them: the reference's `character_based` (the
  segment split in proportion to each word's characters), the hypothesis's
  `character_based_points` (the centre of that share). The Scorer normalises each segment;
  DAE does not apply (a time-constrained alignment has no alternative paths).
* ``orcwer`` (optimal reference combination, MeetEval's): hypothesis speakers unknown or
  untrusted (streams: speaker labels, else CTM channels); every reference segment goes whole to
  one stream, the assignment with the fewest errors over all streams (exact, `_orc_assign`);
  the streams' assigned texts are then scored by the `Scorer`.
* ``tcorcwer`` (time-constrained ORC-WER, MeetEval's): as ORC-WER, but a word is matched or
  substituted only by one whose time overlaps (tcpWER's times and collar), which bounds each
  segment's states to the stream positions near it in time (`scoring.tcorc`); each stream's
  assigned words are then aligned as tcpWER aligns them (no DAE).

Corpus rates pool the sessions: the sum of errors over the sum of reference words. Intervals
resample whole sessions (`scoring.stats.bootstrap_metrics`), never segments or words: words of
one recording are not independent.

Counts equal MeetEval's (`meeteval` 0.4.3: cpwer, tcpwer, orcwer, tcorcwer) on the same
tokens (tests/scoring/test_meeteval_parity.py, tests/scoring/test_tcorc.py): the same errors
and reference lengths per session; the split into substitutions, deletions and insertions is
this scorer's (fewest substitutions among the paths of fewest edits), which may differ from
kaldialign's on ties.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from scoring.align import FIRST_WORD, MAX_CELLS, align_timed, levenshtein
from scoring.errors import ScoringError
from scoring.metrics import Counts, Metrics
from scoring.segments import Segment, TimedWord

DEFAULT_COLLAR = 5.0
# A collar longer than any session pairs words anywhere in it (tcpWER becomes cpWER); beyond a
# day it is a typo, and times widened by an absurd one lose their precision (1e308 + t == 1e308).
MAX_COLLAR = 86_400.0
MAX_SPEAKERS = 20  # per session, as MeetEval: more is almost always a mistake in the input
SESSION_FORMAT = "asrbench-sessions-v1"  # summary.json's `session` field, sessions.jsonl
CI_METHOD = "bootstrap over sessions (recordings), percentile"


@dataclass(frozen=True)
class SessionScore:
    """One session's counts; `assignment` pairs (reference speaker, hypothesis speaker),
    None on the side of a speaker left unpaired (cpWER and tcpWER only)."""

    session_id: str
    errors: int
    n_ref: int
    n_hyp: int
    sub: int
    dele: int
    ins: int
    assignment: tuple[tuple[str | None, str | None], ...] = ()
    missed_speakers: int = 0
    falarm_speakers: int = 0
    # cpWER and tcpWER: (reference speaker, errors, reference words) of each reference speaker,
    # the errors of its pair (an unpaired hypothesis speaker's insertions belong to no one)
    speakers: tuple[tuple[str, int, int], ...] = ()

    @property
    def rate(self) -> float:
        return self.errors / self.n_ref if self.n_ref else float("nan")

    @property
    def counts(self) -> Counts:
        """The session as one pooling unit (a session with no hypothesis words is missing; the
        reference is never empty: `_check_words`)."""
        c = Counts.one(self.sub, self.ins, self.dele, self.n_ref, self.n_hyp)
        return replace(c, n_missing=int(not self.n_hyp), n_empty_ref=0)

    def to_dict(self) -> dict:
        return {
            "session_id": self.session_id,
            "errors": self.errors,
            "n_ref": self.n_ref,
            "n_hyp": self.n_hyp,
            "sub": self.sub,
            "del": self.dele,
            "ins": self.ins,
            "rate": self.rate,
            "assignment": [list(p) for p in self.assignment],
            "missed_speakers": self.missed_speakers,
            "falarm_speakers": self.falarm_speakers,
            "speakers": [list(x) for x in self.speakers],
        }


@dataclass(frozen=True)
class MeetingScore:
    """Every session scored with one metric; `metrics` pools them (a session counts as one
    `n_utts`), its intervals from resampling sessions."""

    metric: str
    sessions: tuple[SessionScore, ...]
    metrics: Metrics
    collar: float | None = None  # tcpWER only

    def total(self, name: str) -> int:
        return sum(getattr(s, name) for s in self.sessions)

    @property
    def rate(self) -> float:
        n_ref = self.total("n_ref")
        return self.total("errors") / n_ref if n_ref else float("nan")

    def describe(self) -> dict:
        """What summary.json records beside the metrics (its `session` field)."""
        return {
            "format": SESSION_FORMAT,
            "metric": self.metric,
            "collar": self.collar,
            "n_sessions": len(self.sessions),
            "missed_speakers": self.total("missed_speakers"),
            "falarm_speakers": self.total("falarm_speakers"),
        }


def pooled_sessions(sessions: Sequence[SessionScore], unit: str, cfg) -> Metrics:
    """The platform's Metrics over sessions, with bootstrap intervals that resample whole
    sessions (`cfg`: the ScorerConfig's replicates, level and seed)."""
    met = Metrics.from_counts(unit, Counts.total(s.counts for s in sessions))
    units = ([s.errors for s in sessions], [s.n_ref for s in sessions], [s.n_hyp for s in sessions])
    return met.bootstrapped(units, cfg, CI_METHOD)


def speaker_rates(sessions: Sequence[SessionScore], cfg) -> dict[str, dict]:
    """Per-speaker WER (cpWER's and tcpWER's pairs): each reference speaker's errors over its
    words, pooled over the sessions it speaks in, with a bootstrap interval resampling those
    sessions (`cfg`: replicates, level, seed). A label is one speaker across sessions, as the
    reference names them; one session gives a point, not an interval."""
    from scoring.stats import bootstrap_ci

    parts: dict[str, list[tuple[int, int]]] = {}
    for s in sessions:
        for spk, n_err, n_words in s.speakers:
            parts.setdefault(spk, []).append((n_err, n_words))
    out = {}
    for spk, rows in sorted(parts.items()):
        errors, n_ref = (np.array(x, dtype=np.float64) for x in zip(*rows, strict=True))
        out[spk] = {
            "rate": float(errors.sum() / n_ref.sum()) if n_ref.sum() else None,
            "errors": int(errors.sum()),
            "n_ref": int(n_ref.sum()),
            "n_sessions": len(rows),
            "ci": bootstrap_ci(errors, n_ref, cfg.bootstrap, cfg.confidence, cfg.seed),
        }
    return out


def words_to_segments(words: Iterable[TimedWord]) -> list[Segment]:
    """CTM words as one-word segments (speaker: the word's, "" where the CTM has none)."""
    return [
        Segment(w.session_id, w.speaker, w.start_time, w.end_time, w.word, w.channel, "", w.line)
        for w in words
    ]


def score_sessions(
    scorer,
    refs: Sequence[Segment],
    hyps: Sequence[Segment],
    metric: str = "cpwer",
    *,
    collar: float = DEFAULT_COLLAR,
    sources: tuple[str | Path, str | Path] = ("reference", "hypothesis"),
) -> MeetingScore:
    """Score `hyps` against `refs` per session with `metric` (a key of SESSION_METRICS) and the
    `scoring.Scorer` `scorer`; intervals by the scorer's bootstrap settings. `sources` name
    the reference and hypothesis files in errors (with the segments' lines)."""
    ref_source, hyp_source = sources
    if metric not in SESSION_METRICS:
        raise ScoringError(f"metric must be one of {', '.join(SESSION_METRICS)}, not {metric!r}")
    how = SESSION_METRICS[metric]
    if how.collar and not 0 <= collar <= MAX_COLLAR:
        raise ScoringError(
            f"collar (--collar) must be 0 to {MAX_COLLAR:g} seconds (a day), not {collar!r}"
        )
    ref_by, hyp_by = _sessions(refs, hyps, ref_source, hyp_source)
    if how.speakers:
        _check_speakers(hyp_by, hyp_source)
    sessions = how.score(scorer, ref_by, hyp_by, collar)
    _check_words(sessions, ref_by, ref_source)
    cfg = scorer.config
    metrics = pooled_sessions(sessions, cfg.unit or "word", cfg)
    return MeetingScore(metric, tuple(sessions), metrics, collar if how.collar else None)


def _where(source: str | Path, seg: Segment) -> str:
    return f"{source}:{seg.line}" if seg.line else f"{source}"


def _sessions(
    refs: Sequence[Segment], hyps: Sequence[Segment], ref_source, hyp_source
) -> tuple[dict[str, list[Segment]], dict[str, list[Segment]]]:
    """Segments by session, each session's in time order (a stable sort by start, as MeetEval
    sorts); every hypothesis session must be a reference one."""
    if not refs:
        raise ScoringError(f"{ref_source}: the reference holds no segment; give the reference")
    ref_by: dict[str, list[Segment]] = {}
    for seg in refs:
        ref_by.setdefault(seg.session_id, []).append(seg)
    hyp_by: dict[str, list[Segment]] = {sid: [] for sid in ref_by}
    for seg in hyps:
        if seg.session_id not in ref_by:
            raise ScoringError(
                f"{_where(hyp_source, seg)}: session {seg.session_id!r} is not in the reference "
                f"{ref_source} (its sessions: {sorted(ref_by)[:5]}); score against the reference "
                "of the same recordings, or drop that session"
            )
        hyp_by[seg.session_id].append(seg)
    for by in (ref_by, hyp_by):
        for sid, segs in by.items():
            by[sid] = sorted(segs, key=lambda s: s.start_time)
    return ref_by, hyp_by


def _check_speakers(hyp_by: dict[str, list[Segment]], source) -> None:
    """cpWER and tcpWER need a speaker on every hypothesis segment, and few of them."""
    for sid, segs in hyp_by.items():
        seen: dict[str, Segment] = {}
        for seg in segs:
            if not seg.speaker.strip():
                raise ScoringError(
                    f"{_where(source, seg)}: session {sid!r} has a hypothesis segment with no "
                    "speaker (a CTM has none); cpWER and tcpWER need speaker labels: score "
                    "with --metric orcwer or wer, or give SegLST/STM with speakers"
                )
            seen.setdefault(seg.speaker, seg)
            if len(seen) > MAX_SPEAKERS:
                raise ScoringError(
                    f"{_where(source, seg)}: session {sid!r} has more than {MAX_SPEAKERS} "
                    "hypothesis speakers (as MeetEval, refused: usually a wrong speaker column "
                    "or session ID); check the file"
                )


def _check_words(sessions: list[SessionScore], ref_by: dict[str, list[Segment]], source) -> None:
    """A session with no reference word has no rate: refuse it (a zero would read as perfect)."""
    for s in sessions:
        if not s.n_ref:
            first = ref_by[s.session_id][0]
            raise ScoringError(
                f"{_where(source, first)}: session {s.session_id!r} has no reference word "
                "(after normalisation); give its transcript or leave the session out of both "
                "files"
            )


def _pair_id(sid: str, ref: str | None, hyp: str | None) -> str:
    """The Scorer utterance ID of one speaker pair: readable, since the Scorer's errors name
    it (e.g. a speaker's text too long for DAE's exact FST: `--no-dae`)."""
    return f"{sid} (reference speaker {ref or '-'}, hypothesis {hyp or '-'})"


def _text(segs: Iterable[Segment]) -> str:
    return " ".join(s.words for s in segs if s.words.strip())


def _by_speaker(segs: list[Segment]) -> dict[str, list[Segment]]:
    out: dict[str, list[Segment]] = {}
    for seg in segs:
        out.setdefault(seg.speaker, []).append(seg)
    return out


def _counts(sid: str, utts, assignment=(), missed: int = 0, falarm: int = 0) -> SessionScore:
    sub, dele, ins = (sum(getattr(u, x) for u in utts) for x in ("sub", "dele", "ins"))
    return SessionScore(
        sid,
        sub + dele + ins,
        sum(len(u.ref) for u in utts),
        sum(len(u.hyp) for u in utts),
        sub,
        dele,
        ins,
        tuple(assignment),
        missed,
        falarm,
    )


def _pair_speakers(pairs, utts) -> tuple[tuple[str, int, int], ...]:
    """Each paired or missed reference speaker's (label, errors, words), from its pair's
    scored utterance (`SessionScore.speakers`)."""
    return tuple(
        (r, u.sub + u.dele + u.ins, len(u.ref))
        for (r, _), u in zip(pairs, utts, strict=True)
        if r is not None
    )


def _session_wer(scorer, ref_by, hyp_by) -> list[SessionScore]:
    """Every session as one utterance of the Scorer (all sessions in one call)."""
    utts = scorer.utterances(
        {sid: _text(segs) for sid, segs in ref_by.items()},
        {sid: _text(segs) for sid, segs in hyp_by.items()},
    )
    return [_counts(u.id, [u]) for u in utts]


def hungarian(cost: np.ndarray) -> tuple[list[int], list[int]]:
    """The assignment of least total cost (scipy's `linear_sum_assignment`, rectangular
    allowed): the one speaker-assignment solver of cpWER, tcpWER, DER and JER."""
    try:
        from scipy.optimize import linear_sum_assignment
    except ImportError:  # a plain `pip install asrbench` keeps the scorer light
        raise ScoringError(
            "cpWER, tcpWER, DER and JER assign speakers with scipy, which is not installed: "
            "pip install 'asrbench[longform]' (or scipy)"
        ) from None
    rows, cols = linear_sum_assignment(cost)
    return rows.tolist(), cols.tolist()


def _assign(cost: np.ndarray, ref_spk: list[str], hyp_spk: list[str]):
    """MeetEval's assignment: the square matrix padded with empty speakers, then Hungarian."""
    if not cost.size:
        return []
    rows, cols = hungarian(cost)
    return [
        (ref_spk[r] if r < len(ref_spk) else None, hyp_spk[c] if c < len(hyp_spk) else None)
        for r, c in zip(rows, cols, strict=True)
    ]


def _padded_cost(ref_ids: list[list[int]], hyp_ids: list[list[int]], distance) -> np.ndarray:
    size = max(len(ref_ids), len(hyp_ids))
    empty: list[int] = []
    cost = np.zeros((size, size), dtype=np.int64)
    for r, c in itertools.product(range(size), range(size)):
        a = ref_ids[r] if r < len(ref_ids) else empty
        b = hyp_ids[c] if c < len(hyp_ids) else empty
        cost[r, c] = distance(r, c) if a and b else len(a) + len(b)
    return cost


def _ids(vocab: dict[str, int], tokens: list[str]) -> list[int]:
    return [vocab.setdefault(t, FIRST_WORD + len(vocab)) for t in tokens]


def _cpwer(scorer, ref_by, hyp_by) -> list[SessionScore]:
    """Assignments by edit distance on the normalised tokens, then every assigned pair of
    every session scored by the Scorer in one call."""
    refs: dict[str, str] = {}
    hyps: dict[str, str] = {}
    plans: list[tuple[str, list, int, int]] = []
    for sid, segs in ref_by.items():
        r_text, h_text = _speaker_texts(segs), _speaker_texts(hyp_by[sid])
        pairs = _cp_assign(scorer, r_text, h_text)
        for r, h in pairs:
            key = _pair_id(sid, r, h)
            refs[key] = r_text[r] if r is not None else ""
            hyps[key] = h_text[h] if h is not None else ""
        missed = max(0, len(r_text) - len(h_text))
        falarm = max(0, len(h_text) - len(r_text))
        plans.append((sid, pairs, missed, falarm))
    utts = iter(scorer.utterances(refs, hyps))
    out = []
    for sid, pairs, missed, falarm in plans:
        mine = list(itertools.islice(utts, len(pairs)))
        scored = _counts(sid, mine, pairs, missed, falarm)
        out.append(replace(scored, speakers=_pair_speakers(pairs, mine)))
    return out


def _speaker_texts(segs: list[Segment]) -> dict[str, str]:
    """Each speaker's words in time order, as one text."""
    return {spk: _text(x) for spk, x in _by_speaker(segs).items()}


def _cp_assign(scorer, r_text: dict[str, str], h_text: dict[str, str]):
    """cpWER's speaker pairs: Hungarian over the edit distances of the normalised tokens."""
    vocab: dict[str, int] = {}
    r_ids = [_ids(vocab, scorer.normalize(t)) for t in r_text.values()]
    h_ids = [_ids(vocab, scorer.normalize(t)) for t in h_text.values()]

    def distance(r: int, c: int) -> int:
        return levenshtein(r_ids[r], h_ids[c])

    cost = _padded_cost(r_ids, h_ids, distance)
    return _assign(cost, list(r_text), list(h_text))


def character_based(start: float, end: float, words: list[str]) -> list[tuple[float, float]]:
    """MeetEval's `character_based`: the segment split in proportion to word lengths (the
    same float operations, so the same times to the last bit)."""
    if len(words) <= 1:
        return [(start, end)] * len(words)
    ends = np.cumsum([len(w) for w in words]).tolist()
    per_char = (end - start) / ends[-1]
    return [
        (start + per_char * a, start + per_char * b)
        for a, b in zip([0, *ends[:-1]], ends, strict=True)
    ]


def _timed_words(scorer, segs: list[Segment], points: bool, collar: float):
    """Each segment's normalised tokens with pseudo-word times (hypothesis: points widened by
    the collar), in segment order."""
    tokens: list[str] = []
    times: list[tuple[float, float]] = []
    for seg in segs:
        words = scorer.normalize(seg.words)
        spans = character_based(seg.start_time, seg.end_time, words)
        if points:
            spans = [((a + b) / 2,) * 2 for a, b in spans]
            spans = [(a - collar, b + collar) for a, b in spans]
        tokens.extend(words)
        times.extend(spans)
    return tokens, np.array(times, dtype=np.float64).reshape(-1, 2)


def _tcpwer_session(scorer, sid: str, refs: list[Segment], hyps: list[Segment], collar: float):
    r_spk, h_spk = _by_speaker(refs), _by_speaker(hyps)
    r_names, h_names = list(r_spk), list(h_spk)
    r_words = [_timed_words(scorer, r_spk[s], False, 0.0) for s in r_names]
    h_words = [_timed_words(scorer, h_spk[s], True, collar) for s in h_names]
    vocab: dict[str, int] = {}
    r_ids = [np.array(_ids(vocab, t), dtype=np.int64) for t, _ in r_words]
    h_ids = [np.array(_ids(vocab, t), dtype=np.int64) for t, _ in h_words]
    k = max(map(len, r_ids + h_ids), default=0) + 2
    found: dict[tuple[int, int], tuple[str, int]] = {}

    def distance(r: int, c: int) -> int:
        found[r, c] = align_timed(r_ids[r], r_words[r][1], h_ids[c], h_words[c][1], k)
        return found[r, c][1] // k

    cost = _padded_cost([x.tolist() for x in r_ids], [x.tolist() for x in h_ids], distance)
    pairs = _assign(cost, r_names, h_names)
    sub = dele = ins = 0
    speakers = []
    for r, h in pairs:
        ri = r_names.index(r) if r is not None else None
        hi = h_names.index(h) if h is not None else None
        before = sub + dele + ins
        if ri is not None and hi is not None and (ri, hi) in found:
            ops = found[ri, hi][0]
            sub, dele, ins = sub + ops.count("S"), dele + ops.count("D"), ins + ops.count("I")
        else:
            dele += len(r_ids[ri]) if ri is not None else 0
            ins += len(h_ids[hi]) if hi is not None else 0
        if r is not None and ri is not None:
            speakers.append((r, sub + dele + ins - before, len(r_ids[ri])))
    return SessionScore(
        sid,
        sub + dele + ins,
        sum(map(len, r_ids)),
        sum(map(len, h_ids)),
        sub,
        dele,
        ins,
        tuple(pairs),
        max(0, len(r_names) - len(h_names)),
        max(0, len(h_names) - len(r_names)),
        tuple(speakers),
    )


def sessions_table(result: MeetingScore) -> str:
    """The per-session table (sessions.txt): counts, rate and speaker assignment."""
    name = SESSION_METRICS[result.metric].label
    head = f"{name}" + (f" (collar {result.collar:g} s)" if result.collar is not None else "")
    rows = [
        head,
        f"{'session':<24} {'ref':>7} {'hyp':>7} {'S':>6} {'D':>6} {'I':>6} {'rate %':>8}  "
        "speakers (ref->hyp)",
    ]
    for s in result.sessions:
        pairs = " ".join(f"{r or '-'}->{h or '-'}" for r, h in s.assignment)
        rows.append(
            f"{s.session_id:<24} {s.n_ref:>7} {s.n_hyp:>7} {s.sub:>6} {s.dele:>6} {s.ins:>6} "
            f"{100 * s.rate:>8.2f}  {pairs}"
        )
    return "\n".join(rows) + "\n"


def read_segments(path: str | Path, fmt: str | None = None) -> list[Segment]:
    """A timed file (STM, SegLST, RTTM, CTM: `scoring.timed`) as segments; CTM words become
    one-word segments."""
    from scoring.timed import read_timed

    items = read_timed(path, fmt)
    segs = [x for x in items if isinstance(x, Segment)]
    return segs if len(segs) == len(items) else words_to_segments(items)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- ORC-WER

# ORC-WER's table has one cell per combination of positions in the hypothesis streams, for
# every reference word: refused above this many (a product of stream lengths grows fast).
ORC_MAX_CELLS = MAX_CELLS  # the aligner's bound (scoring.align): one constant


def _stream(seg: Segment) -> str:
    """A hypothesis stream: its speaker label, else (CTM) its channel."""
    return seg.speaker if seg.speaker.strip() else f"channel {seg.channel}"


def _streams(hyps: list[Segment]) -> dict[str, list[Segment]]:
    """The hypothesis segments by stream (`_stream`), in order of first appearance."""
    streams: dict[str, list[Segment]] = {}
    for seg in hyps:
        streams.setdefault(_stream(seg), []).append(seg)
    return streams


def _placed(seg: Segment, stream: str | None) -> tuple[str, str | None]:
    """One line of an ORC assignment: the reference segment (speaker@start) and its stream."""
    return (f"{seg.speaker}@{seg.start_time:g}", stream)


def _orc_session(scorer, sid: str, refs: list[Segment], hyps: list[Segment]):
    """ORC-WER (MeetEval's `orcwer`): every reference segment goes whole to one hypothesis
    stream, the assignment with the fewest errors over all streams (exact: `_orc_assign`);
    the streams' texts so assigned are then scored by the Scorer."""
    streams = _streams(hyps)
    names = list(streams)
    vocab: dict[str, int] = {}
    h_ids = [np.array(_ids(vocab, scorer.normalize(_text(streams[n]))), np.int64) for n in names]
    utts = [(seg, np.array(_ids(vocab, scorer.normalize(seg.words)), np.int64)) for seg in refs]
    utts = [(seg, ids) for seg, ids in utts if len(ids)]
    n_words = sum(len(ids) for _, ids in utts)
    cells = n_words * int(np.prod([len(h) + 1 for h in h_ids]))
    if cells > ORC_MAX_CELLS:
        raise ScoringError(
            f"session {sid!r}: ORC-WER over {len(names)} hypothesis streams of "
            f"{[len(h) for h in h_ids]} words needs {cells:,} table cells (more than "
            f"{ORC_MAX_CELLS:,}); score it with --metric cpwer or tcpwer, or split the session"
        )
    k = n_words + sum(map(len, h_ids)) + 2
    chosen = _orc_assign([ids for _, ids in utts], h_ids, k) if names else [None] * len(utts)
    ref_text: dict[str, list[str]] = {n: [] for n in names}
    assignment = []
    for (seg, _), s in zip(utts, chosen, strict=True):
        if s is not None:
            ref_text[names[s]].append(seg.words)
        assignment.append(_placed(seg, names[s] if s is not None else None))
    keys = {n: f"{sid} (hypothesis stream {n})" for n in names}
    r = {keys[n]: " ".join(ref_text[n]) for n in names}
    h = {keys[n]: _text(streams[n]) for n in names}
    if not names:  # no hypothesis: every reference word deleted
        r, h = {sid: _text(refs)}, {}
    return r, h, assignment


def _orcwer(scorer, ref_by, hyp_by) -> list[SessionScore]:
    refs: dict[str, str] = {}
    hyps: dict[str, str] = {}
    plans = []
    for sid, segs in ref_by.items():
        r, h, assignment = _orc_session(scorer, sid, segs, hyp_by[sid])
        refs.update(r)
        hyps.update(h)
        plans.append((sid, len(r), assignment))
    utts = iter(scorer.utterances(refs, hyps))
    return [_counts(sid, list(itertools.islice(utts, n)), a) for sid, n, a in plans]


def _tcorc_session(scorer, sid: str, refs: list[Segment], hyps: list[Segment], collar: float):
    """Time-constrained ORC-WER (MeetEval's `tcorcwer`): every reference segment goes whole to
    one hypothesis stream, as ORC-WER, but a word is matched or substituted only by one whose
    time overlaps (tcpWER's pseudo-word times and collar); the assignment with the fewest
    errors (`scoring.tcorc`), then each stream's assigned words aligned as tcpWER aligns."""
    from scoring import tcorc

    streams = _streams(hyps)
    names = list(streams)
    vocab: dict[str, int] = {}

    def words(segs: list[Segment], points: bool) -> tcorc.Words:
        tokens, times = _timed_words(scorer, segs, points, collar if points else 0.0)
        return tcorc.Words(np.array(_ids(vocab, tokens), dtype=np.int64), times)

    h = [words(streams[n], True) for n in names]
    utts = [(seg, words([seg], False)) for seg in refs]
    utts = [(seg, w) for seg, w in utts if len(w.ids)]
    k = sum(len(w.ids) for _, w in utts) + sum(len(x.ids) for x in h) + 2
    chosen: list[int | None] = [None] * len(utts)
    if names and utts:
        bx = tcorc.boxes([w for _, w in utts], h)
        tcorc.check_size(sid, [w for _, w in utts], h, bx, names)
        chosen = list(tcorc.tcorc_assign([w for _, w in utts], h, bx, k))
    return _tcorc_counts(sid, utts, h, chosen, (names, k))


def _tcorc_counts(sid: str, utts, h, chosen, named) -> SessionScore:
    """Each stream's assigned segments (in time order) aligned with its words; a segment with
    no stream (no hypothesis) all deletions."""
    names, k = named
    ops = []
    for s in range(len(names)):
        mine = [w for (_, w), c in zip(utts, chosen, strict=True) if c == s]
        ref = np.concatenate([w.ids for w in mine]) if mine else np.zeros(0, np.int64)
        times = np.concatenate([w.times for w in mine]) if mine else np.zeros((0, 2))
        ops.append(align_timed(ref, times, h[s].ids, h[s].times, k)[0])
    unassigned = [w for (_, w), c in zip(utts, chosen, strict=True) if c is None]
    text = "".join(ops) + "D" * sum(len(w.ids) for w in unassigned)
    sub, dele, ins = text.count("S"), text.count("D"), text.count("I")
    assignment = tuple(
        _placed(seg, names[c] if c is not None else None)
        for (seg, _), c in zip(utts, chosen, strict=True)
    )
    n_ref = sum(len(w.ids) for _, w in utts)
    return SessionScore(
        sid, sub + dele + ins, n_ref, sum(len(x.ids) for x in h), sub, dele, ins, assignment
    )


def _tcorcwer(scorer, ref_by, hyp_by, collar: float) -> list[SessionScore]:
    return [_tcorc_session(scorer, sid, ref_by[sid], hyp_by[sid], collar) for sid in ref_by]


def _closure(x: np.ndarray, k: int) -> np.ndarray:
    """Insertions anywhere: the least of x[J'] + K * |J - J'| over J' <= J (per axis, a running
    minimum of x - K*j, then + K*j)."""
    for t in range(x.ndim):
        g = k * np.arange(x.shape[t], dtype=np.int64).reshape(
            [-1 if a == t else 1 for a in range(x.ndim)]
        )
        x = np.fmin.accumulate(x - g, axis=t) + g
    return x


def _along(d: np.ndarray, words: np.ndarray, hyp: np.ndarray, s: int, k: int) -> np.ndarray:
    """One reference utterance aligned along stream s from every state of `d` (the other
    streams' positions fixed): the edit recurrence word by word on the last axis."""
    x = np.moveaxis(d, s, -1)
    g = k * np.arange(x.shape[-1], dtype=np.int64)
    for w in words.tolist():
        new = x + k  # deletion
        np.minimum(new[..., 1:], x[..., :-1] + np.where(hyp == w, 0, k + 1), out=new[..., 1:])
        x = np.fmin.accumulate(new - g, axis=-1) + g  # insertions in stream s
    return np.moveaxis(x, -1, s)


def _orc_step(
    closed: np.ndarray, words: np.ndarray, hyps: list[np.ndarray], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """One utterance from the table before it (insertions closed): each state's best cost over
    the streams (ties: the first) and that stream."""
    best = choice = None
    for s, hyp in enumerate(hyps):
        e = _along(closed, words, hyp, s, k)
        if best is None or choice is None:
            best, choice = e, np.zeros(closed.shape, dtype=np.int16)
        else:
            better = e < best
            best = np.where(better, e, best)
            choice[better] = s
    assert best is not None and choice is not None
    return best, choice


def _orc_assign(utts: list[np.ndarray], hyps: list[np.ndarray], k: int) -> list[int | None]:
    """The stream of each utterance minimising K*E + S over all streams at once (MeetEval's
    ORC matching): the table over every combination of stream positions, one utterance at a
    time, each state taking the best stream (ties: the first); then walked back.

    Checkpointed: the forward pass keeps the table before every c-th utterance only (c about
    the square root of their number); the walk back recomputes one stretch of c utterances at
    a time from its checkpoint, the same arrays as one pass keeping all. Memory: about
    2 sqrt(U) tables instead of 3 U (U utterances), for a second forward pass's time."""
    shape = tuple(len(h) + 1 for h in hyps)
    start = np.full(shape, 1 << 60, dtype=np.int64)
    start[(0,) * len(shape)] = 0
    c = max(1, math.isqrt(len(utts) - 1) + 1) if utts else 1
    checkpoints = [_closure(start, k)]
    last = checkpoints[0]
    for u, words in enumerate(utts):
        last = _closure(_orc_step(last, words, hyps, k)[0], k)
        if (u + 1) % c == 0 and u + 1 < len(utts):
            checkpoints.append(last)
    pos = [len(h) for h in hyps]
    out: list[int | None] = [None] * len(utts)
    while checkpoints:  # the last stretch first; each checkpoint dropped once used
        a = len(checkpoints) - 1
        b = min(len(utts), (a + 1) * c)
        closed, best_of, choice_of = [checkpoints.pop()], [], []
        for words in utts[a * c : b]:
            best, choice = _orc_step(closed[-1], words, hyps, k)
            best_of.append(best)
            choice_of.append(choice)
            closed.append(_closure(best, k))
        chosen = _orc_walk(utts[a * c : b], hyps, k, (closed, best_of, choice_of), pos)
        out[a * c : b] = chosen
    return out


def _orc_walk(utts, hyps, k, tables, pos: list[int]) -> list[int | None]:
    """Back from `pos` (the end of these utterances, moved to their start): undo the
    insertions between utterances, read the utterance's stream, then redo its alignment along
    that stream to find where it started. `tables`: the stretch's closed tables (one more than
    its utterances), best costs and chosen streams."""
    closed, best_of, choice_of = tables
    out: list[int | None] = [None] * len(utts)
    for u in range(len(utts) - 1, -1, -1):
        d, p = closed[u + 1], best_of[u]
        while d[tuple(pos)] != p[tuple(pos)]:
            for t in range(len(pos)):
                back = pos.copy()
                back[t] -= 1
                if pos[t] and d[tuple(back)] + k == d[tuple(pos)]:
                    pos[:] = back
                    break
            else:  # pragma: no cover - the closure always has a predecessor
                raise RuntimeError("ORC back-trace lost its path")
        s = int(choice_of[u][tuple(pos)])
        out[u] = s
        pos[s] = _orc_start(closed[u], pos, s, utts[u], hyps[s], k)
    return out


def _orc_start(d: np.ndarray, pos: list[int], s: int, words, hyp, k: int) -> int:
    """Where in stream s the utterance's alignment ending at pos[s] began."""
    at = list(pos)
    at[s] = slice(None)  # type: ignore[call-overload]
    rows = [d[tuple(at)]]
    g = k * np.arange(len(hyp) + 1, dtype=np.int64)
    for w in words.tolist():
        x = rows[-1]
        new = x + k
        np.minimum(new[1:], x[:-1] + np.where(hyp == w, 0, k + 1), out=new[1:])
        rows.append(np.fmin.accumulate(new - g) + g)
    i, j = len(words), pos[s]
    while i > 0:
        sub = 0 if j and hyp[j - 1] == words[i - 1] else k + 1
        if j and rows[i][j] == rows[i - 1][j - 1] + sub:
            i, j = i - 1, j - 1
        elif rows[i][j] == rows[i - 1][j] + k:
            i -= 1
        else:
            j -= 1
    return j


@dataclass(frozen=True)
class SessionMetric:
    """A registered session metric: its display name, whether it needs a speaker on every
    hypothesis segment, whether it takes a collar, and the function scoring every session."""

    label: str
    score: Callable[..., list[SessionScore]]  # (scorer, ref_by, hyp_by, collar)
    speakers: bool = False
    collar: bool = False


def _tcpwer(scorer, ref_by, hyp_by, collar: float) -> list[SessionScore]:
    return [_tcpwer_session(scorer, sid, ref_by[sid], hyp_by[sid], collar) for sid in ref_by]


# Every session metric: the one place a new one is registered (docs/EXTENDING.md); the order
# is `ops/score --session`'s choices.
SESSION_METRICS: dict[str, SessionMetric] = {
    "wer": SessionMetric("WER", lambda sc, r, h, _collar: _session_wer(sc, r, h)),
    "cpwer": SessionMetric("cpWER", lambda sc, r, h, _collar: _cpwer(sc, r, h), speakers=True),
    "tcpwer": SessionMetric("tcpWER", _tcpwer, speakers=True, collar=True),
    "orcwer": SessionMetric("ORC-WER", lambda sc, r, h, _collar: _orcwer(sc, r, h)),
    "tcorcwer": SessionMetric("tcORC-WER", _tcorcwer, collar=True),
}


def supported_metrics(hyps: Sequence[Segment], timed: bool = True) -> tuple[str, ...]:
    """The session metrics a hypothesis supports (what a long-form cell reports): a speaker on
    every segment gives cpWER and, with times, tcpWER; otherwise ORC-WER and session WER (an
    empty hypothesis has no speakers)."""
    if hyps and all(s.speaker.strip() for s in hyps):
        return ("cpwer", "tcpwer") if timed else ("cpwer",)
    return ("orcwer", "wer")


def score_supported(
    scorer,
    refs: Sequence[Segment],
    hyps: Sequence[Segment],
    *,
    timed: bool = True,
    collar: float = DEFAULT_COLLAR,
) -> dict[str, MeetingScore | str]:
    """Every metric of `supported_metrics` scored by `score_sessions`, or, where that metric
    refuses the input (more than MAX_SPEAKERS speakers, an ORC table too large), the one-line
    reason: a cell reports what can be scored instead of failing after the model ran."""
    out: dict[str, MeetingScore | str] = {}
    for metric in supported_metrics(hyps, timed):
        try:
            out[metric] = score_sessions(scorer, refs, hyps, metric, collar=collar)
        except ScoringError as exc:
            out[metric] = str(exc)
    return out
