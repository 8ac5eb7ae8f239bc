"""Writing results: per-utterance JSONL, a readable alignment file, summary.json, a table, and
sclite-style `pra` / `sys` files. Every file is written to a temporary name and then renamed,
so a reader never sees half a file; output order follows the reference, so reruns are
byte-identical.
"""

from __future__ import annotations

import json
import os
import tempfile
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scoring.metrics import UtteranceResult
    from scoring.scorer import ScoreResult


def atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file in the same folder and os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def width(text: str) -> int:
    """Display width: East Asian wide and full-width characters count 2."""
    if text.isascii():  # the common case, and 20x faster than looking at each character
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, w: int) -> str:
    return text + " " * (w - width(text))


def _rows(
    u: UtteranceResult, upper_errors: bool = False
) -> tuple[list[str], list[str], list[str], list[str]]:
    """Columns of REF, HYP, HYP# (chosen alternatives) and EDIT for one utterance."""
    alt_cols: set[int] = set()
    for start, end, _, _ in u.alternatives:
        alt_cols.update(range(start, end))
    ref_row: list[str] = []
    hyp_row: list[str] = []
    mark_row: list[str] = []
    edit_row: list[str] = []
    ref, hyp = u.ref, u.hyp
    i = j = 0
    for op in u.codes:  # the columns of `u.ops`, without building the tuples
        if op == "D":
            r = ref[i]
            i += 1
            if upper_errors:
                r = r.upper()
            ref_row.append(r)
            hyp_row.append("*" * max(1, width(r)))
            mark_row.append("")
            edit_row.append(op)
            continue
        h = hyp[j]
        if op == "I":
            if upper_errors:
                h = h.upper()
            ref_row.append("*" * max(1, width(h)))
        else:
            r = ref[i]
            i += 1
            if upper_errors and op != "C":
                r, h = r.upper(), h.upper()
            ref_row.append(r)
        hyp_row.append(h)
        mark_row.append("#" if j in alt_cols else "")
        edit_row.append("" if op == "C" else op)
        j += 1
    return ref_row, hyp_row, mark_row, edit_row


def _layout(label_rows: list[tuple[str, list[str]]]) -> list[str]:
    lab = max(len(label) for label, _ in label_rows) + 1
    rows = [row for _, row in label_rows]
    if all(("".join(row)).isascii() for row in rows):
        # ASCII (the common case): display width is the length, padding is str.ljust.
        widths = [max(map(len, col)) for col in zip(*rows, strict=True)]
        return [
            ((label + ":").ljust(lab + 1) + " ".join(map(str.ljust, row, widths))).rstrip()
            for label, row in label_rows
        ]
    n = len(rows[0])
    widths = [max(width(row[c]) for row in rows) for c in range(n)]
    return [
        (_pad(label + ":", lab + 1) + " ".join(_pad(row[c], widths[c]) for c in range(n))).rstrip()
        for label, row in label_rows
    ]


def alignment_text(utts: list[UtteranceResult]) -> str:
    """The readable alignment file: REF / HYP / HYP# / EDIT rows per utterance."""
    out = []
    for u in utts:
        ref, hyp, mark, edit = _rows(u)
        ter = "undefined" if u.ter is None else f"{u.ter:.4f}"
        out.append(f"id: {u.id}")
        out.append(
            f"counts: C={u.cor} S={u.sub} D={u.dele} I={u.ins} TER={ter} mTER={u.mter:.4f}"
            + ("  (hypothesis missing)" if u.missing else "")
        )
        rows = [("REF", ref), ("HYP", hyp)]
        if any(mark):
            rows.append(("HYP#", mark))
        rows.append(("EDIT", edit))
        if ref:
            out.extend(_layout(rows))
        for _, _, chosen, written in u.alternatives:
            out.append(f"ALT: {written!r} -> {chosen!r}")
        out.append("")
    return "\n".join(out)


def pra_text(utts: list[UtteranceResult]) -> str:
    """sclite-style `pra`: per utterance id, Scores (#C #S #D #I), REF/HYP/Eval rows."""
    out = []
    for u in utts:
        ref, hyp, _, edit = _rows(u, upper_errors=True)
        out.append(f"id: ({u.id})")
        out.append(f"Scores: (#C #S #D #I) {u.cor} {u.sub} {u.dele} {u.ins}")
        if ref:
            out.extend(_layout([("REF", ref), ("HYP", hyp), ("Eval", edit)]))
        out.append("")
    return "\n".join(out)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def sys_text(result: ScoreResult, name: str = "hyp") -> str:
    """sclite-style `sys` summary table (Sum/Avg row, percentages of reference words)."""
    s = result.metrics.to_dict()
    n = s["n_ref"] or 1
    head = "| SPKR    | # Snt  # Wrd | Corr    Sub    Del    Ins    Err  S.Err |"
    line = "|" + "-" * (len(head) - 2) + "|"
    ser = _pct(s["ser"])
    row = (
        f"| Sum/Avg | {s['n_utts']:5d} {s['n_ref']:6d} | {100 * s['cor'] / n:5.1f} "
        f"{100 * s['sub'] / n:6.1f} {100 * s['del'] / n:6.1f} {100 * s['ins'] / n:6.1f} "
        f"{100 * s['errors'] / n:6.1f} {ser:>6} |"
    )
    return "\n".join(
        [
            ",-" + "-" * (len(head) - 4) + "-.",
            f"| {name:<{len(head) - 4}} |",
            line,
            head,
            line,
            row,
            "`" + "-" * (len(head) - 2) + "'",
            "",
        ]
    )


def table_text(result: ScoreResult) -> str:
    """Human-readable summary."""
    s = result.metrics.to_dict()
    unit = "CER" if s["unit"] == "char" else "WER"
    ci = s.get("ci", {})
    rows = [
        (f"TER ({unit})", _pct(s["ter"]), ci.get("ter")),
        ("mTER", _pct(s["mter"]), ci.get("mter")),
        ("SER", _pct(s["ser"]), None),
    ]
    out = [f"{'metric':<10} {'value %':>9}  {'CI':>22}"]
    for name, val, c in rows:
        interval = (
            f"[{_pct(c['low'])}, {_pct(c['high'])}]" if c and c.get("low") is not None else ""
        )
        out.append(f"{name:<10} {val:>9}  {interval:>22}")
    out.append("")
    out.append(
        f"utterances {s['n_utts']}  reference {s['unit']}s {s['n_ref']}  "
        f"hypothesis {s['unit']}s {s['n_hyp']}"
    )
    out.append(f"C {s['cor']}  S {s['sub']}  D {s['del']}  I {s['ins']}  errors {s['errors']}")
    out.append(
        f"coverage {_pct(s['coverage'])}% ({s['n_missing']} missing or empty hypotheses, "
        "counted as deletions)"
    )
    if s.get("n_empty_ref"):
        out.append(f"{s['n_empty_ref']} empty reference(s): TER undefined there, mTER defined")
    return "\n".join(out) + "\n"


def write_all(result: ScoreResult, out_dir: Path) -> dict[str, Path]:
    """Write every report file into `out_dir`; returns the paths by kind."""
    paths = {
        "utterances": out_dir / "utterances.jsonl",
        "alignment": out_dir / "alignment.txt",
        "summary": out_dir / "summary.json",
        "table": out_dir / "table.txt",
        "pra": out_dir / "hyp.pra",
        "sys": out_dir / "hyp.sys",
    }
    lines = [
        json.dumps(u.to_dict(), ensure_ascii=False, allow_nan=False) for u in result.utterances
    ]
    atomic_write(paths["utterances"], "".join(x + "\n" for x in lines))
    atomic_write(paths["alignment"], alignment_text(result.utterances))
    summary = {"metrics": result.metrics.to_dict(), "config": result.config}
    atomic_write(
        paths["summary"],
        json.dumps(summary, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n",
    )
    atomic_write(paths["table"], table_text(result))
    atomic_write(paths["pra"], pra_text(result.utterances))
    atomic_write(paths["sys"], sys_text(result))
    return paths
