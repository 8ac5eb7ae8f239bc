"""Long-form cells in the report: a per-recording timeline of errors, as a small inline SVG.

Where in a recording the model drifted (substitutions), hallucinated (insertions, loops) or
went silent (deletions, dropped stretches). The timeline's numbers (S/D/I per time bin, the
reference's speech, dropped stretches, loops, timed output) are computed when the benchmark
writes the cell and stored in its `timeline.json` (asrbench/results/derived.py, which places
the stored alignment on the recording's time axis through the dataset's reference segments);
this module only draws them. A cell stored before that record existed gets a note naming the
command that writes it (`ops/report --backfill`); the dataset folder is never opened here.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from asrbench.report.collect import Cell
from asrbench.results.leaderboard import is_longform
from asrbench.results.records import (
    BACKFILL,
    TIMELINE_FILE,
    RecordError,
    TimelineRecord,
    read_record,
)

__all__ = ["Timeline", "is_longform", "svg", "timelines"]

WIDTH, HEIGHT, AXIS = 760, 96, 18  # SVG size (px) and the height of the time axis under it
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

    @classmethod
    def from_stored(cls, d: dict) -> Timeline:
        """One recording of timeline.json, drawn."""

        def rows(v: list | None) -> tuple | None:
            return None if v is None else tuple(tuple(x) for x in v)

        tl = cls(
            id=str(d["id"]),
            duration=d["duration"],
            bin_s=d["bin_s"],
            bins=rows(d["bins"]) or (),
            speech=rows(d["speech"]) or (),
            dropped=rows(d["dropped"]) or (),
            loops=rows(d["loops"]) or (),
            output=rows(d["output"]),
            pause_words=d["pause_words"],
        )
        return Timeline(**{**tl.__dict__, "svg": svg(tl)})


def timelines(cell: Cell) -> tuple[list[Timeline], str | None]:
    """Every recording of a long-form cell (in ID order) as stored, or ([], why not)."""
    utts = cell.utterances()
    if utts is None or cell.summary.metrics is None:
        return [], cell.utts_problem or "no alignment stored: no timeline"
    path = cell.folder / TIMELINE_FILE
    if not path.is_file():
        return [], (
            f"{path}: missing (the cell was written before asrbench stored its timeline); run "
            f"`{BACKFILL}` to write it from the stored alignment and the dataset's segments"
        )
    try:
        rec = read_record(path, TimelineRecord.from_dict)
        found = [Timeline.from_stored(d) for d in rec.recordings]
    except RecordError as exc:
        return [], str(exc)
    except (KeyError, TypeError, ValueError) as exc:
        return [], f"{path}: malformed timeline ({type(exc).__name__}: {exc}); run `{BACKFILL}`"
    if rec.note:
        return [], rec.note
    return found, None


def _x(t: float, duration: float, width: float = WIDTH) -> float:
    return round(width * t / max(duration, 1e-9), 1)


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


def _axis(duration: float, y: float, x0: float = 0.0, width: float = WIDTH) -> list[str]:
    """The time axis under a plot of `width` px starting at `x0` (the speaker timelines have
    their labels to the left of it)."""
    step = next(s for s in (10, 30, 60, 300, 600, 1800, 3600, 10**9) if duration / s <= 10)
    out = [f'<line x1="{x0:g}" y1="{y}" x2="{x0 + width:g}" y2="{y}" stroke="#666"/>']
    t = 0
    while t <= duration:
        x = min(_x(t, duration, width), width - 12)
        x = round(x0 + x, 1) if x0 else x  # the error timeline's bytes as before
        label = f"{t // 60}:{t % 60:02d}" if step >= 60 or duration > 120 else f"{t}s"
        out.append(f'<text x="{x}" y="{y + 13}" font-size="10" fill="#333">{label}</text>')
        t += step
    return out
