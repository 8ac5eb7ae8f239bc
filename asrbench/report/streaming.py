"""The streaming page's content from stored streaming cells (ops/stream, docs/STREAMING.md).

Shown: per model x dataset x feed (chunk size, speed), the final WER with its CI beside the
latencies with theirs (first partial, end of speech to final, word emission and cursor lag
where the record has them), stability, RTF under pacing and the feed's own accuracy; a Pareto
view of WER against end-of-speech latency (the points no other point beats on both); and per
utterance, the event timeline: when each partial and final arrived against how much audio had
been sent. Each cell carries its latency guard (streaming/guard.py: whether the latencies are
the model's, and why not) and, where a batch cell of the same model and dataset is stored, its
WER beside the streamed finals'.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asrbench.report.charts import COLOURS, layout, pct, style
from asrbench.results.summary import Summary

TIMELINE_UTTS = 6  # utterances with an event timeline per streaming cell
# row key -> (stream.json pooled key, its value, its CI): latencies are means over utterances,
# the interim cursor lag the duration-weighted mean (docs/STREAMING.md)
LATENCIES = {
    "first_partial_s": ("first_partial_s", "mean", "ci"),
    "eos_final_s": ("eos_final_s", "mean", "ci"),
    "word_latency_s": ("word_latency_s", "mean", "mean_ci"),
    "cursor_lag_s": ("cursor_lag_interim_s", "weighted_mean", "weighted_mean_ci"),
    "cursor_lag_final_s": ("cursor_lag_final_s", "mean", "mean_ci"),
    "rtf": ("rtf", "mean", "ci"),
}


def _stat(pooled: dict[str, Any], key: str, value: str, ci_key: str) -> dict[str, Any] | None:
    """{mean, low, high, n} of one pooled figure, None where the record lacks it."""
    s = pooled.get(key)
    if not isinstance(s, dict) or s.get(value) is None:
        return None
    ci = s.get(ci_key) or {}
    return {"mean": s[value], "low": ci.get("low"), "high": ci.get("high"), "n": s.get("n")}


def guard(rec: Any) -> dict[str, Any]:
    """The cell's latency guard as the page shows it: `attributable` (None: a record written
    before the guard) and the reasons (rule, why, what to do)."""
    g = rec.latency_guard or {}
    return {
        "attributable": g.get("attributable") if g else None,
        "reasons": [
            {"rule": r.get("rule"), "why": r.get("why"), "do": r.get("do")}
            for r in g.get("reasons") or []
        ],
        "unjudged": list(g.get("unjudged") or []),
    }


def batch(cell: Any) -> dict[str, Any] | None:
    """The batch cell of the same model and dataset (ops/benchmark), shown beside the
    streamed finals' WER: its WER, CI and utterance count; None without one."""
    m = cell.summary.metrics if cell is not None else None
    if m is None:
        return None
    ci = m.ter_ci
    return {
        "wer": m.ter,
        "wer_ci": [ci.low, ci.high] if ci and ci.low is not None else None,
        "n_utts": m.n_utts,
        "sample": cell.summary.selection.is_sample,
    }


def row(path: Path, rec: Any, summary: Summary | None, batch_cell: Any = None) -> dict[str, Any]:
    """One streaming cell as the page's table row (`batch_cell`: the stored batch cell of
    the same model and dataset, if any)."""
    m = summary.metrics if summary else None
    ci = m.ter_ci if m else None
    stab = rec.pooled.get("stability_revised") or {}
    return {
        "model": rec.model,
        "dataset": rec.dataset,
        "cell": path.parent.name,
        "path": str(path),
        "chunk_ms": rec.chunk_ms,
        "speed": rec.speed,
        "runner": rec.runner,
        "n_utts": rec.n_utts,
        "n_failed": rec.n_failed,
        "wer": m.ter if m else None,
        "wer_ci": [ci.low, ci.high] if ci and ci.low is not None else None,
        **{k: _stat(rec.pooled, *spec) for k, spec in LATENCIES.items()},
        "revised": stab.get("value"),
        "lateness_p99_s": (rec.pacing.get("lateness_s") or {}).get("p99"),
        "overhead_p99_s": rec.overhead_s.get("p99"),
        "guard": guard(rec),
        "batch": batch(batch_cell),
    }


def pareto_front(rows: list[dict[str, Any]]) -> set[int]:
    """Indices of the rows no other row beats on both WER and end-of-speech latency (lower
    is better on both; a tie on both keeps both)."""
    pts = [
        (i, r["wer"], r["eos_final_s"]["mean"])
        for i, r in enumerate(rows)
        if r["wer"] is not None and r["eos_final_s"]
    ]
    front = set()
    for i, w, lat in pts:
        beaten = any(
            (w2 <= w and l2 <= lat) and (w2 < w or l2 < lat) for j, w2, l2 in pts if j != i
        )
        if not beaten:
            front.add(i)
    return front


def pareto_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """WER % against end-of-speech-to-final latency, both with their 95 % CIs; the Pareto
    front joined by a line."""
    front = pareto_front(rows)
    data = []
    for i, r in enumerate(rows):
        lat = r["eos_final_s"]
        if r["wer"] is None or not lat:
            continue
        y = pct(r["wer"])
        ci = r["wer_ci"]
        name = f"{r['model']} ({r['dataset']}, {r['chunk_ms']} ms)"
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name + (" *" if i in front else ""),
                "x": [round(lat["mean"], 4)],
                "y": [y],
                "error_x": _bar(lat["mean"], lat["low"], lat["high"], 1.0),
                "error_y": _bar(r["wer"], ci[0] if ci else None, ci[1] if ci else None, 100.0),
                **style(i),
                "hovertemplate": f"{name}<br>%{{x:.3f}} s, %{{y:.2f}} %<extra></extra>",
            }
        )
    on = sorted((rows[i]["eos_final_s"]["mean"], pct(rows[i]["wer"])) for i in front)
    if len(on) > 1:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Pareto front",
                "x": [round(p[0], 4) for p in on],
                "y": [p[1] for p in on],
                "line": {"dash": "dot", "color": "#777", "width": 1},
                "hoverinfo": "skip",
            }
        )
    return {
        "data": data,
        "layout": layout("end of speech to final (s, 95 % CI)", "final WER % (95 % CI)"),
    }


def _bar(v: float, lo: float | None, hi: float | None, scale: float) -> dict[str, Any]:
    if lo is None or hi is None:
        return {"visible": False}
    return {
        "type": "data",
        "symmetric": False,
        "array": [round(max(hi - v, 0.0) * scale, 4)],
        "arrayminus": [round(max(v - lo, 0.0) * scale, 4)],
        "visible": True,
        "thickness": 1.5,
        "width": 4,
    }


def timelines(events: Path, limit: int = TIMELINE_UTTS) -> list[tuple[str, dict[str, Any]]]:
    """(utterance ID, figure) for the first `limit` utterances of an events.jsonl: audio sent
    against wall time (a step line), and each event at the audio it had consumed when it
    arrived (hover: its text)."""
    out: list[tuple[str, dict[str, Any]]] = []
    try:
        lines = events.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines[:limit]:
        try:
            u = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(u, dict) and u.get("events") is not None and u.get("t0") is not None:
            out.append((str(u.get("id")), timeline(u)))
    return out


def timeline(u: dict[str, Any]) -> dict[str, Any]:
    """One utterance's event timeline (see `timelines`)."""
    t0, chunk = float(u["t0"]), float(u.get("chunk_s") or 0.0)
    sends = [round(float(t) - t0, 4) for t in u.get("sends") or []]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "audio sent",
            "x": sends,
            "y": [round(chunk * (k + 1), 4) for k in range(len(sends))],
            "line": {"shape": "hv", "color": "#999", "width": 1.5},
            "hovertemplate": "%{x:.2f} s: %{y:.2f} s of audio sent<extra></extra>",
        }
    ]
    for i, kind in enumerate(("partial", "final")):
        evs = [e for e in u["events"] if e.get("type") == kind]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": kind,
                "x": [round(float(e["mono_recv"]) - t0, 4) for e in evs],
                "y": [e.get("audio_s") for e in evs],
                "text": [str(e.get("text") or "") for e in evs],
                "marker": {
                    "symbol": "circle" if kind == "partial" else "diamond",
                    "size": 6 if kind == "partial" else 11,
                    "color": COLOURS[i],
                },
                "hovertemplate": "%{x:.2f} s, audio %{y:.2f} s<br>%{text}<extra>"
                + kind
                + "</extra>",
            }
        )
    return {"data": data, "layout": layout("wall time since the first chunk (s)", "audio (s)")}
