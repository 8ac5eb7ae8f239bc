"""What the model x dataset page shows, computed from the cell's stored files.

Error-type totals come from the summary (the scorer's pooled counts); substitution pairs,
inserted and deleted words and the utterance list from `utterances.jsonl` (its `ops` alignment
columns). Utterances are ordered worst first: most edits, then highest TER, then ID.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from asrbench.report.collect import Cell

TOP = 20  # rows of each most-frequent list


def error_tables(utts: list[dict[str, Any]], top: int = TOP) -> dict[str, Any]:
    """Most frequent substitution pairs, inserted words and deleted words (ties: by text)."""
    subs: Counter[tuple[str, str]] = Counter()
    ins: Counter[str] = Counter()
    dels: Counter[str] = Counter()
    for u in utts:
        for op, ref, hyp in u["ops"]:
            if op == "S":
                subs[(ref, hyp)] += 1
            elif op == "I":
                ins[hyp] += 1
            elif op == "D":
                dels[ref] += 1

    def ranked(c: Counter) -> list:
        return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:top]

    return {
        "substitutions": [{"ref": r, "hyp": h, "count": n} for (r, h), n in ranked(subs)],
        "insertions": [{"word": w, "count": n} for w, n in ranked(ins)],
        "deletions": [{"word": w, "count": n} for w, n in ranked(dels)],
        "n_distinct": {"substitutions": len(subs), "insertions": len(ins), "deletions": len(dels)},
    }


def utterance_rows(
    cell: Cell, utts: list[dict[str, Any]], audio: dict[str, str], applied: dict[str, list[str]]
) -> list[dict[str, Any]]:
    """The utterance list the page's script renders, worst first (compact keys)."""
    rows = []
    for u in utts:
        scored = "ops" in u  # a reference-free cell stores hypotheses only
        errors = u["sub"] + u["ins"] + u["del"] if scored else 0
        rows.append(
            {
                "id": u["id"],
                "e": errors,
                "t": u.get("ter"),
                "m": u.get("mter"),
                "s": u.get("sub", 0),
                "i": u.get("ins", 0),
                "d": u.get("del", 0),
                "n": u.get("n_ref", 0),
                "ops": u["ops"] if scored else None,
                "ref": u.get("ref"),
                "hyp": u.get("hyp"),
                "rn": u.get("ref_norm") or "",
                "hn": u.get("hyp_norm") or "",
                "alt": [[a["written"], a["chosen"]] for a in u.get("alternatives") or []],
                "dur": u.get("duration"),
                "fail": u.get("failed"),
                "miss": bool(u.get("missing")),
                "a": audio.get(u["id"]),
                "steps": applied.get(u["id"], []),
            }
        )
    rows.sort(key=lambda r: (-r["e"], -(r["t"] if r["t"] is not None else -1.0), r["id"]))
    return rows


def breakdown(cell: Cell) -> dict[str, Any] | None:
    """Pooled counts and their shares of the reference words."""
    m = cell.summary.metrics
    if m is None:
        return None

    def share(x: int) -> float | None:
        return x / m.n_ref if m.n_ref else None

    return {
        "cor": m.cor,
        "sub": m.sub,
        "ins": m.ins,
        "del": m.dele,
        "n_ref": m.n_ref,
        "n_hyp": m.n_hyp,
        "sub_rate": share(m.sub),
        "ins_rate": share(m.ins),
        "del_rate": share(m.dele),
        "errors": m.errors,
    }
