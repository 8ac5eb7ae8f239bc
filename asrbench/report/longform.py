"""Long-form cells in the report: a per-recording timeline of errors, as a small inline SVG.

Where in a recording the model drifted (substitutions), hallucinated (insertions, loops) or
went silent (deletions, dropped stretches), from the cell's stored alignment (`ops` in
utterances.jsonl: one record per recording, aligned over the whole session) placed on the
recording's time axis through the dataset's reference segments: each reference word gets the
pseudo-time of MeetEval's `character_based` split of its segment (`scoring.hallucination.
ref_words`), an insertion the time of the reference word before it. Dropped stretches and loops
are `scoring.hallucination`'s own rules (`dropped_stretches`, `find_loops`) applied to the
stored alignment, so the timeline and `benchmarks/hallucination.py` agree.

Nothing is rerun; the segments file is read from the dataset folder recorded in run.json, and a
cell whose folder or segments cannot be read gets a note instead of a timeline.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asrbench.report.collect import Cell
from asrbench.results.leaderboard import is_longform
from asrbench.results.timed import TIMED_FILE, as_transcript, read_hyp_timed

__all__ = ["Timeline", "is_longform", "svg", "timeline", "timelines"]

WIDTH, HEIGHT, AXIS = 760, 96, 18  # SVG size (px) and the height of the time axis under it
BIN_S_MIN = 5.0  # error bars per bin of at least 5 s (about 60 bins over the recording)
OP_COLOURS = {"S": "#E69F00", "D": "#0072B2", "I": "#009E73"}  # the hues of the report's keys


@dataclass(frozen=True)
class Timeline:
    """One recording: error counts per time bin, dropped stretches and loops, with times."""

    id: str
    duration: float
    bin_s: float
    bins: tuple[tuple[int, int, int], ...]  # (S, D, I) per bin
    speech: tuple[tuple[float, float], ...]  # reference segments (start, end)
    dropped: tuple[tuple[float, float, int, str], ...]  # start, end, words, first words
    loops: tuple[tuple[float, int, str, int], ...]  # time, repeats, n-gram, reference's repeats
    # from hyp.timed.jsonl, when the cell has one (segmented cells; docs/RESULTS.md):
    output: tuple[tuple[float, float], ...] | None = None  # spans the model wrote text for
    pause_words: int | None = None  # hypothesis words timed inside reference pauses (>= 1 s)
    svg: str = field(default="", compare=False)


def segments_of(cell: Cell) -> tuple[dict[str, list], str | None]:
    """({recording: its reference segments}, None) or ({}, why there are none)."""
    from asrbench.longform.segments import segments_file
    from scoring.errors import ScoringError
    from scoring.meeting import read_segments

    folder = cell.run.dataset_folder if cell.run else None
    if not folder:
        return {}, "no dataset folder recorded in run.json: no timeline"
    path = segments_file(Path(folder), cell.dataset_meta)
    try:
        segs = read_segments(path)
    except (OSError, ScoringError, ValueError) as exc:
        return {}, f"{path}: cannot read the reference segments ({exc}); no timeline"
    out: dict[str, list] = {}
    for s in segs:
        out.setdefault(s.session_id, []).append(s)
    return out, None


def _scorer(cell: Cell):
    from asrbench.scorers import get_scorer

    sc = cell.summary.scorer or {}
    opts = cell.run.scorer_options if cell.run else {}
    return get_scorer(
        str(sc.get("lang") or "en"), {k: v for k, v in opts.items() if k != "bootstrap"}
    )


def _ref_times(ops: list, segments: list, normalize) -> list[tuple[float, float]]:
    """A (start, end) per reference token of `ops`; by relative position when the per-segment
    normalisation gives another count than the session's (as scoring.hallucination does)."""
    from scoring.hallucination import ref_words

    _, times = ref_words(segments, normalize)
    n = sum(1 for op in ops if op[0] != "I")
    if not times:  # a session whose reference normalises to nothing: all at its start
        return [(segments[0].start_time, segments[0].start_time)] * n
    if len(times) == n:
        return list(times)
    m = len(times)
    return [times[min(m - 1, (i * m) // max(1, n))] for i in range(n)]


def _op_times(ops: list, times: list[tuple[float, float]]) -> list[float]:
    """One time per op: its reference word's midpoint; an insertion, the end of the word before."""
    out, r = [], 0
    for op in ops:
        if op[0] == "I":
            out.append(times[r - 1][1] if r > 0 else (times[0][0] if times else 0.0))
        else:
            a, b = times[r] if r < len(times) else (0.0, 0.0)
            out.append((a + b) / 2)
            r += 1
    return out


def _timed_output(timed: dict[str, Any] | None, segments: list, normalize, duration):
    """(spans with output, words in pauses) from one hyp.timed.jsonl record, or (None, None)."""
    from scoring.hallucination import hyp_points, pauses, words_in_pauses

    if not timed:
        return None, None
    hyp_segments, hyp_words = as_transcript(timed, segments[0].session_id)
    spans = tuple((g.start_time, g.end_time) for g in hyp_segments if g.words)
    items: list = hyp_words or hyp_segments
    found = words_in_pauses(pauses(segments, duration=duration), hyp_points(items, normalize))
    return spans, sum(p.words for p in found)


def timeline(
    rec: dict[str, Any],
    segments: list,
    normalize,
    duration: float | None,
    timed: dict[str, Any] | None = None,
) -> Timeline:
    """The timeline of one recording from its stored record and reference segments (and its
    timed hypothesis, where the cell has one)."""
    from scoring.hallucination import dropped_stretches, find_loops, most_in_a_row

    ops = rec["ops"]
    times = _ref_times(ops, segments, normalize)
    when = _op_times(ops, times)
    end = max([duration or 0.0, *(s.end_time for s in segments)])
    bin_s = max(BIN_S_MIN, end / 60)
    n_bins = max(1, int(end // bin_s) + 1)
    bins = [[0, 0, 0] for _ in range(n_bins)]
    for op, t in zip(ops, when, strict=True):
        if op[0] in "SDI":
            bins[min(n_bins - 1, int(t // bin_s))]["SDI".index(op[0])] += 1
    codes = "".join(op[0] for op in ops)
    refs = [op[1] for op in ops if op[0] != "I"]
    dropped = [
        (d.start_time, d.end_time, d.words, d.text) for d in dropped_stretches(codes, times, refs)
    ]
    hyp_idx = [i for i, op in enumerate(ops) if op[0] != "D"]
    loops = [
        (when[hyp_idx[lp.start]], lp.repeats, lp.ngram, most_in_a_row(refs, lp.ngram.split()))
        for lp in find_loops([ops[i][2] for i in hyp_idx])
    ]
    output, pause_words = _timed_output(timed, segments, normalize, duration)
    tl = Timeline(
        id=str(rec["id"]),
        duration=end,
        bin_s=bin_s,
        bins=tuple((s, d, i) for s, d, i in bins),
        speech=tuple((s.start_time, s.end_time) for s in segments),
        dropped=tuple(dropped),
        loops=tuple(loops),
        output=output,
        pause_words=pause_words,
    )
    return Timeline(**{**tl.__dict__, "svg": svg(tl)})


def timelines(cell: Cell) -> tuple[list[Timeline], str | None]:
    """Every recording of a long-form cell (in ID order), or ([], why not)."""
    utts = cell.utterances()
    if utts is None or cell.summary.metrics is None:
        return [], cell.utts_problem or "no alignment stored: no timeline"
    by_rec, why = segments_of(cell)
    if why:
        return [], why
    normalize = _scorer(cell).normalize
    # the one reader of hyp.timed.jsonl; {} without one: the timeline is drawn without it
    timed, _ = read_hyp_timed(cell.folder / TIMED_FILE)
    out = []
    for rec in sorted(utts, key=lambda u: u["id"]):
        segs = by_rec.get(rec["id"])
        if segs and rec.get("ops") is not None:
            out.append(
                timeline(rec, segs, normalize, rec.get("duration"), timed.get(str(rec["id"])))
            )
    return out, None


def _x(t: float, duration: float) -> float:
    return round(WIDTH * t / max(duration, 1e-9), 1)


def svg(tl: Timeline) -> str:
    """The timeline as inline SVG: reference speech as a grey band (and above it, light blue,
    the spans the model wrote text for, where timed), stacked S/D/I bars per bin, dropped
    stretches as red bands and loops as purple triangles, each with a <title> tooltip."""
    plot = HEIGHT - AXIS
    peak = max([1, *(sum(b) for b in tl.bins)])
    parts = [
        f'<svg class="timeline" data-id="{html.escape(tl.id)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="errors over time in '
        f'{html.escape(tl.id)}">'
    ]
    for a, b in tl.speech:
        parts.append(
            f'<rect class="speech" x="{_x(a, tl.duration)}" y="{plot - 4}" '
            f'width="{max(0.5, _x(b, tl.duration) - _x(a, tl.duration))}" height="4" fill="#bbb"/>'
        )
    for a, b, n, text in tl.dropped:
        parts.append(
            f'<rect class="dropped" x="{_x(a, tl.duration)}" y="0" '
            f'width="{_x(b, tl.duration) - _x(a, tl.duration)}" height="{plot - 4}" '
            f'fill="#D55E00" fill-opacity="0.18"><title>dropped {a:.1f}-{b:.1f} s: {n} words '
            f'("{html.escape(text)} ...")</title></rect>'
        )
    for a, b in tl.output or ():
        parts.append(
            f'<rect class="output" x="{_x(a, tl.duration)}" y="{plot - 9}" '
            f'width="{max(0.5, _x(b, tl.duration) - _x(a, tl.duration))}" height="3" '
            f'fill="#56B4E9"><title>model output {a:.1f}-{b:.1f} s</title></rect>'
        )
    parts += _bars(tl, plot - 10 if tl.output else plot - 6, peak)
    for t, reps, gram, ref_reps in tl.loops:
        x = _x(t, tl.duration)
        said = f"; the reference says it x{ref_reps}" if ref_reps > 1 else ""
        parts.append(
            f'<path class="loop" d="M{x - 5} 0 L{x + 5} 0 L{x} 9 Z" fill="#CC79A7">'
            f'<title>loop at {t:.1f} s: "{html.escape(gram)}" x{reps}{said}</title></path>'
        )
    parts += _axis(tl.duration, plot)
    parts.append("</svg>")
    return "".join(parts)


def _bars(tl: Timeline, height: float, peak: int) -> list[str]:
    out, w = [], _x(tl.bin_s, tl.duration)
    for k, counts in enumerate(tl.bins):
        y = height
        for code, n in zip("SDI", counts, strict=True):
            if not n:
                continue
            h = round(height * n / peak, 1)
            y -= h
            out.append(
                f'<rect class="op-{code}" x="{_x(k * tl.bin_s, tl.duration)}" y="{round(y, 1)}" '
                f'width="{max(1.0, w - 1)}" height="{h}" fill="{OP_COLOURS[code]}">'
                f"<title>{k * tl.bin_s:.0f}-{(k + 1) * tl.bin_s:.0f} s: {n} {code}</title></rect>"
            )
    return out


def _axis(duration: float, y: float) -> list[str]:
    step = next(s for s in (10, 30, 60, 300, 600, 1800, 3600, 10**9) if duration / s <= 10)
    out = [f'<line x1="0" y1="{y}" x2="{WIDTH}" y2="{y}" stroke="#666"/>']
    t = 0
    while t <= duration:
        x = min(_x(t, duration), WIDTH - 12)
        label = f"{t // 60}:{t % 60:02d}" if step >= 60 or duration > 120 else f"{t}s"
        out.append(f'<text x="{x}" y="{y + 13}" font-size="10" fill="#333">{label}</text>')
        t += step
    return out
