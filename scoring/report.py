"""Readable reports as text: the alignment file, sclite-style `pra` and `sys`, a summary table.

Text producers only: they return strings and write nothing, so the caller decides where and how
files are written (the platform writes them atomically, see asrbench/results/reports.py).
Output order follows the utterances given, so the same result gives the same bytes.

Each utterance is laid out once (its alignment columns and their widths) and that layout
serves both `alignment.txt` and `hyp.pra`; `columns()` is the same walk for other consumers.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Sequence
from typing import TypeVar

from scoring.metrics import Metrics, UtteranceResult

LAYOUT_KINDS = ("alignment", "pra")
_Gap = TypeVar("_Gap", str, None)


def width(text: str) -> int:
    """Display width: East Asian wide and full-width characters count 2."""
    if text.isascii():  # the common case, and 20x faster than looking at each character
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _positions(codes: str, op: str) -> list[int]:
    """Columns holding `op`; edits are rare, so str.find beats a scan of every column."""
    out: list[int] = []
    p = codes.find(op)
    while p >= 0:
        out.append(p)
        p = codes.find(op, p + 1)
    return out


def columns(u: UtteranceResult) -> tuple[list[str | None], list[str | None]]:
    """The reference and hypothesis token of each alignment column (None at a gap).

    Same columns as `u.ops`, built from the gaps (rare) rather than column by column.
    """
    return _gapped(u, None)


def _gapped(u: UtteranceResult, gap: _Gap) -> tuple[list[str | _Gap], list[str | _Gap]]:
    """`columns`, with `gap` at the gaps."""
    codes = u.codes
    ref: list[str | _Gap] = list(u.ref)
    hyp: list[str | _Gap] = list(u.hyp)
    if "I" in codes or "o" in codes:  # o: an optional hypothesis word left out (no ref token)
        for p in sorted(_positions(codes, "I") + _positions(codes, "o")):  # ascending
            ref.insert(p, gap)
    if "D" in codes or "O" in codes:  # an omitted optional word has no hypothesis token
        for p in sorted(_positions(codes, "D") + _positions(codes, "O")):
            hyp.insert(p, gap)
    return ref, hyp


def _line(label: str, cells: Sequence[str], widths: Sequence[int]) -> str:
    return (label + " ".join(map(str.ljust, cells, widths))).rstrip()


def _pad_line(label: str, cells: Sequence[str], widths: Sequence[int]) -> str:
    return (
        label + " ".join(c + " " * (w - width(c)) for c, w in zip(cells, widths, strict=True))
    ).rstrip()


def _marks(u: UtteranceResult) -> list[str] | None:
    """HYP# cells: `#` under hypothesis tokens from a chosen alternative, else None if none."""
    alt: set[int] = set()
    for start, end, _, _ in u.alternatives:
        alt.update(range(start, end))
    if not alt:
        return None
    out, j = [], 0
    for op in u.codes:
        if op == "D" or op == "O":
            out.append("")
            continue
        out.append("#" if j in alt else "")
        j += 1
    return out if any(out) else None


def _omitted(codes: str, edit: str, ref: list[str], hyp: list[str]) -> str:
    """An optional word left out, sclite's `(word)` over a blank, not an error: a reference
    word (O), or, in the exact sclite mode, a hypothesis word (o). Returns the EDIT cells."""
    for p in _positions(codes, "O"):
        ref[p], hyp[p] = f"({ref[p]})", ""
    for p in _positions(codes, "o"):
        ref[p], hyp[p] = "", f"({hyp[p]})"
    return edit.replace("O", " ").replace("o", " ")


def _layout(u: UtteranceResult, want: Collection[str]) -> dict[str, list[str]]:
    """The REF/HYP/(HYP#)/EDIT rows of one utterance for each kind in `want`."""
    codes = u.codes
    ref, hyp = _gapped(u, "")  # every gap is filled below
    ins, dels = _positions(codes, "I"), _positions(codes, "D")
    errors = (
        sorted([*ins, *dels, *_positions(codes, "S")]) if codes.count("C") != len(codes) else []
    )
    marks = _marks(u) if u.alternatives else None
    edit = codes.replace("C", " ")  # a blank cell pads like an empty one (every width >= 1)
    if "O" in codes or "o" in codes:
        edit = _omitted(codes, edit, ref, hyp)
    out: dict[str, list[str]] = {}
    if "".join(u.ref).isascii() and "".join(u.hyp).isascii():
        # ASCII (the common case): width is length, upper() keeps it, so one set of widths
        # and one EDIT row serve both reports; padding is str.ljust.
        for p in ins:
            ref[p] = "*" * len(hyp[p])
        for p in dels:
            hyp[p] = "*" * len(ref[p])
        widths = list(map(max, map(len, ref), map(len, hyp)))
        ref_line = _line("REF:  ", ref, widths)
        hyp_line = _line("HYP:  ", hyp, widths)
        edit_line = _line("", edit, widths)
        if "alignment" in want:
            rows = [ref_line, hyp_line]
            if marks is not None:
                rows.append(_line("HYP#: ", marks, widths))
            rows.append("EDIT: " + edit_line if edit_line else "EDIT:")
            out["alignment"] = rows
        if "pra" in want:
            if errors:
                up_ref, up_hyp = list(ref), list(hyp)
                for p in errors:
                    up_ref[p] = up_ref[p].upper()
                    up_hyp[p] = up_hyp[p].upper()
                ref_line = _line("REF:  ", up_ref, widths)
                hyp_line = _line("HYP:  ", up_hyp, widths)
            out["pra"] = [ref_line, hyp_line, "Eval: " + edit_line if edit_line else "Eval:"]
        return out
    # Other scripts: display widths (East Asian wide = 2), and upper() may change a token's
    # width (ß -> SS), so `pra` gets its own cells and widths from the same columns.
    for kind in want:
        upper = kind == "pra"
        r_cells, h_cells = list(ref), list(hyp)
        if upper:
            for p in errors:
                r_cells[p] = r_cells[p].upper()
                h_cells[p] = h_cells[p].upper()
        for p in ins:
            r_cells[p] = "*" * width(h_cells[p])
        for p in dels:
            h_cells[p] = "*" * width(r_cells[p])
        labelled: list[tuple[str, Sequence[str]]] = [("REF:  ", r_cells), ("HYP:  ", h_cells)]
        if marks is not None and not upper:
            labelled.append(("HYP#: ", marks))
        labelled.append(("Eval: " if upper else "EDIT: ", edit))
        widths = [max(width(row[c]) for _, row in labelled) for c in range(len(codes))]
        out[kind] = [_pad_line(label, row, widths) for label, row in labelled]
    return out


def layout_texts(
    utts: Sequence[UtteranceResult], kinds: Collection[str] = LAYOUT_KINDS
) -> dict[str, str]:
    """The per-utterance reports named in `kinds` ("alignment", "pra"), each utterance laid
    out once for all of them."""
    unknown = set(kinds) - set(LAYOUT_KINDS)
    if unknown:
        raise ValueError(f"unknown layout report(s) {sorted(unknown)}; use {LAYOUT_KINDS}")
    want = [k for k in LAYOUT_KINDS if k in kinds]
    if not want:
        return {}
    out: dict[str, list[str]] = {k: [] for k in want}
    align, pra = out.get("alignment"), out.get("pra")
    for u in utts:
        rows = _layout(u, want) if u.codes else {}
        if align is not None:
            ter = "undefined" if u.ter is None else f"{u.ter:.4f}"
            align.append(f"id: {u.id}")
            align.append(
                f"counts: C={u.cor} S={u.sub} D={u.dele} I={u.ins} TER={ter} mTER={u.mter:.4f}"
                + ("  (hypothesis missing)" if u.missing else "")
            )
            align.extend(rows.get("alignment", ()))
            for _, _, chosen, written in u.alternatives:
                align.append(f"ALT: {written!r} -> {chosen!r}")
            align.append("")
        if pra is not None:
            pra.append(f"id: ({u.id})")
            pra.append(f"Scores: (#C #S #D #I) {u.cor} {u.sub} {u.dele} {u.ins}")
            pra.extend(rows.get("pra", ()))
            pra.append("")
    return {k: "\n".join(lines) for k, lines in out.items()}


def alignment_text(utts: Sequence[UtteranceResult]) -> str:
    """The readable alignment file: REF / HYP / HYP# / EDIT rows per utterance."""
    return layout_texts(utts, ("alignment",))["alignment"]


def pra_text(utts: Sequence[UtteranceResult]) -> str:
    """sclite-style `pra`: per utterance id, Scores (#C #S #D #I), REF/HYP/Eval rows."""
    return layout_texts(utts, ("pra",))["pra"]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def sys_text(metrics: Metrics, name: str = "hyp") -> str:
    """sclite-style `sys` summary table (Sum/Avg row, percentages of reference words)."""
    m = metrics
    n = m.n_ref or 1
    head = "| SPKR    | # Snt  # Wrd | Corr    Sub    Del    Ins    Err  S.Err |"
    line = "|" + "-" * (len(head) - 2) + "|"
    row = (
        f"| Sum/Avg | {m.n_utts:5d} {m.n_ref:6d} | {100 * m.cor / n:5.1f} "
        f"{100 * m.sub / n:6.1f} {100 * m.dele / n:6.1f} {100 * m.ins / n:6.1f} "
        f"{100 * m.errors / n:6.1f} {_pct(m.ser):>6} |"
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
            f"unit: {m.tokens_name}; {m.name} {_pct(m.ter)}%  MER {_pct(m.mer)}%  "
            f"WIL {_pct(m.wil)}%  WIP {_pct(m.wip)}%",
            "",
        ]
    )


def table_text(metrics: Metrics) -> str:
    """Human-readable summary."""
    m = metrics
    rows = [
        (f"TER ({m.name})", _pct(m.ter), m.ter_ci),
        ("mTER", _pct(m.mter), m.mter_ci),
        ("mTER_utt", _pct(m.mter_utt), m.mter_utt_ci),
        ("SER", _pct(m.ser), None),
        ("MER", _pct(m.mer), None),
        ("WIL", _pct(m.wil), None),
        ("WIP", _pct(m.wip), None),
    ]
    out = [f"{'metric':<10} {'value %':>9}  {'CI':>22}"]
    for name, val, ci in rows:
        interval = f"[{_pct(ci.low)}, {_pct(ci.high)}]" if ci and ci.low is not None else ""
        out.append(f"{name:<10} {val:>9}  {interval:>22}")
    out.append("")
    out.append(
        f"utterances {m.n_utts}  unit {m.tokens_name}  reference {m.n_ref}  hypothesis {m.n_hyp}"
    )
    out.append(f"C {m.cor}  S {m.sub}  D {m.dele}  I {m.ins}  errors {m.errors}")
    out.append(
        f"coverage {_pct(m.coverage)}% ({m.n_missing} missing or empty hypotheses, "
        "counted as deletions)"
    )
    if m.n_empty_ref:
        out.append(
            f"{m.n_empty_ref} empty reference(s): their TER is undefined (null), their "
            "hypothesis tokens count as insertions in the pooled rates"
        )
    return "\n".join(out) + "\n"
