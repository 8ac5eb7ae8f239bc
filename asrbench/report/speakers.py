"""Speaker timelines on a long-form cell's page: who spoke when, reference against hypothesis.

Per recording of a cell whose reference and hypothesis name speakers (a diarizer, an ASR model
combined with one), one inline SVG (no script, as the error timeline in longform.py): a row per
reference speaker, then a row per hypothesis speaker, on one time axis. A hypothesis speaker
that DER's optimal mapping pairs with a reference speaker has that speaker's colour and its
label says so (`spk0 = A`); one left unpaired is grey and labelled `unmapped`, so the picture
reads without colour too. Each turn has a tooltip, the figure an `aria-label`, and a table
beside it gives every speaker's turns and seconds in words. The numbers are stored in the
cell's `speakers.json` (asrbench/results/speaker_view.py); nothing is scored here.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from asrbench.report.charts import COLOURS
from asrbench.report.collect import Cell
from asrbench.report.longform import _axis, _x
from asrbench.results.records import (
    BACKFILL,
    SPEAKERS_FILE,
    RecordError,
    SpeakersRecord,
    read_record,
)
from asrbench.results.speaker_view import CPWER

WIDTH, LABEL_W, ROW_H, GAP, AXIS = 760, 150, 14, 4, 18  # px
PLOT_W = WIDTH - LABEL_W - 12  # room for the last tick's label
UNMAPPED = "#999999"


@dataclass(frozen=True)
class SpeakerTimeline:
    """One recording as stored, its drawing and the rows of its text alternative."""

    rec: dict[str, Any]
    svg: str
    rows: list[dict[str, Any]]


def speaker_timelines(cell: Cell) -> tuple[list[SpeakerTimeline], str | None]:
    """Every recording of speakers.json drawn, or ([], why not): a cell with DER in its
    session metrics but no speakers.json was written before the record existed."""
    path = cell.folder / SPEAKERS_FILE
    if not path.is_file():
        if "der" in (cell.summary.session_metrics or {}):
            return [], (
                f"{path}: missing (the cell was written before asrbench stored its speakers); "
                f"run `{BACKFILL}` to write it"
            )
        return [], None
    try:
        rec = read_record(path, SpeakersRecord.from_dict)
        return [_drawn(r) for r in rec.recordings], rec.note
    except RecordError as exc:
        return [], str(exc)
    except (KeyError, TypeError, ValueError) as exc:
        return [], f"{path}: malformed speakers record ({type(exc).__name__}: {exc}); {BACKFILL}"


def _colours(rec: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """Reference speakers in sorted order take the palette's colours; a mapped hypothesis
    speaker its reference speaker's, an unmapped one grey."""
    ref = sorted({r[0] for r in rec["ref"]})
    ref_c = {s: COLOURS[i % len(COLOURS)] for i, s in enumerate(ref)}
    to_ref = {h: r for r, h in rec["mapping"]}
    hyp_c = {h: ref_c.get(to_ref.get(h, ""), UNMAPPED) for h in {x[0] for x in rec["hyp"]}}
    return ref_c, hyp_c


def _rows(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """Each speaker's row: side, name, label, colour, its turns and seconds (reference speakers
    sorted, then hypothesis speakers by their mapped reference speaker, unmapped last)."""
    ref_c, hyp_c = _colours(rec)
    to_ref = {h: r for r, h in rec["mapping"]}
    ref_order = sorted(ref_c)

    def turns(side: str, spk: str) -> list[list[float]]:
        return [[a, b] for s, a, b in rec[side] if s == spk]

    rows: list[dict[str, Any]] = [
        {"side": "reference", "speaker": s, "label": f"ref {s}", "colour": ref_c[s], "mapped": None}
        | {"turns": turns("ref", s)}
        for s in ref_order
    ]
    rank = {h: ref_order.index(r) for h, r in to_ref.items()}
    for h in sorted(hyp_c, key=lambda h: (h not in rank, rank.get(h, 0), h)):
        label = f"hyp {h} = {to_ref[h]}" if h in to_ref else f"hyp {h} (unmapped)"
        rows.append(
            {"side": "hypothesis", "speaker": h, "label": label, "colour": hyp_c[h]}
            | {"mapped": to_ref.get(h), "turns": turns("hyp", h)}
        )
    for r in rows:
        r["seconds"] = sum(b - a for a, b in r["turns"])
    return rows


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f} %"


def _drawn(rec: dict[str, Any]) -> SpeakerTimeline:
    rows = _rows(rec)
    return SpeakerTimeline(rec, svg(rec, rows), rows)


def svg(rec: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The recording's speakers as inline SVG: one labelled row per speaker, a bar per turn
    (with a <title>), the reference rows above a rule, the hypothesis rows below it."""
    duration = float(rec["duration"])
    n_ref = sum(r["side"] == "reference" for r in rows)
    plot = len(rows) * (ROW_H + GAP) + GAP * 2
    height = plot + AXIS
    rid = html.escape(str(rec["id"]))
    cp = rec.get(CPWER) or {}
    label = (
        f"speaker timeline of {rid}: {rec['ref_speakers']} reference and {rec['hyp_speakers']} "
        f"hypothesis speakers; DER {_rate(rec['der'])}, JER {_rate(rec['jer'])}"
        + (f", cpWER {_rate(cp.get('rate'))}" if cp else "")
    )
    parts = [
        f'<svg class="speaker-timeline" data-id="{rid}" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-label="{html.escape(label)}">'
    ]
    for k, row in enumerate(rows):
        y = GAP + k * (ROW_H + GAP) + (GAP * 2 if k >= n_ref else 0)
        name = html.escape(row["label"])
        parts.append(
            f'<text class="spk-label" x="0" y="{y + ROW_H - 3}" font-size="11" fill="#222">'
            f"{name}</text>"
        )
        for a, b in row["turns"]:
            x = round(LABEL_W + _x(a, duration, PLOT_W), 1)
            w = max(0.5, round(_x(b, duration, PLOT_W) - _x(a, duration, PLOT_W), 1))
            parts.append(
                f'<rect class="turn {row["side"][:3]}" data-speaker="{html.escape(row["speaker"])}"'
                f' x="{x}" y="{y}" width="{w}" height="{ROW_H}" fill="{row["colour"]}">'
                f"<title>{name}: {a:.1f}-{b:.1f} s</title></rect>"
            )
    rule = GAP + n_ref * (ROW_H + GAP) + GAP / 2
    parts.append(
        f'<line x1="0" y1="{rule}" x2="{WIDTH}" y2="{rule}" stroke="#999" stroke-dasharray="3 3"/>'
    )
    parts += _axis(duration, plot, LABEL_W, PLOT_W)
    parts.append("</svg>")
    return "".join(parts)
