"""sclite's alignment, exactly (`ScorerConfig(align="sclite")`, `--align sclite`).

NIST sclite (SCTK 2.4, Debian `sctk`) does not minimise the number of edits: it minimises a
weighted cost, substitution 4, deletion 3, insertion 3, a match 0, and, with `-D`, 2 for
leaving out an optionally deletable word (a parenthesised word, on either side), which it then
counts as correct. Among paths of equal weighted cost it walks back from the end of both
sequences preferring the diagonal (match or substitution), then an insertion, then a deletion.
Both the weights and that order were checked against the binary on tens of thousands of random
pairs over 3-5 word vocabularies (every other order of the three moves, and walking back from
the start, give different counts on some pairs); `tests/scoring/test_sclite_exact.py` keeps
checking it on 5,000 pairs with optional words.

The default aligner (`scoring.align`) takes the fewest edits instead; the two differ on 3 to 4
of 1,000 such random pairs (docs/SCORING.md), sclite's count never the lower. This module is
plain Python, one pair at a time: slower than the batched DP, used only in the exact mode.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

SUB, DEL, INS, OPT = 4, 3, 3, 2  # sclite's weights; OPT: skipping an optional word (`-D`)


def _skip_costs(n: int, optional: Sequence[bool] | None, cost: int) -> list[int]:
    if optional is None:
        return [cost] * n
    return [OPT if o else cost for o in optional]


def _table(
    ref: Sequence[Hashable], hyp: Sequence[Hashable], dc: list[int], ic: list[int]
) -> list[list[int]]:
    """The weighted-cost table: rows[i][j] aligns ref[:i] with hyp[:j]."""
    prev = [0]
    for c in ic:
        prev.append(prev[-1] + c)
    rows = [prev]
    for r, d in zip(ref, dc, strict=True):
        row = [prev[0] + d]
        for j, h in enumerate(hyp):
            row.append(min(prev[j] + (0 if r == h else SUB), prev[j + 1] + d, row[j] + ic[j]))
        rows.append(row)
        prev = row
    return rows


def sclite_align(
    ref: Sequence[Hashable],
    hyp: Sequence[Hashable],
    ref_optional: Sequence[bool] | None = None,
    hyp_optional: Sequence[bool] | None = None,
) -> tuple[str, int]:
    """sclite's alignment of two token sequences: its op string and weighted cost.

    Letters: C, S, D, I; `O` an optional reference word left out, `o` an optional hypothesis
    word left out (sclite counts both as correct). Tokens compare with `==`."""
    dc = _skip_costs(len(ref), ref_optional, DEL)
    ic = _skip_costs(len(hyp), hyp_optional, INS)
    rows = _table(ref, hyp, dc, ic)
    i, j = len(ref), len(hyp)
    out: list[str] = []
    while i or j:
        here = rows[i][j]
        if i and j:
            same = ref[i - 1] == hyp[j - 1]
            if here == rows[i - 1][j - 1] + (0 if same else SUB):
                out.append("C" if same else "S")
                i, j = i - 1, j - 1
                continue
        if j and here == rows[i][j - 1] + ic[j - 1]:
            out.append("o" if ic[j - 1] == OPT else "I")
            j -= 1
        else:
            out.append("O" if dc[i - 1] == OPT else "D")
            i -= 1
    out.reverse()
    return "".join(out), rows[-1][-1]


def sclite_counts(codes: str) -> tuple[int, int, int, int]:
    """(C, S, D, I) as sclite reports them: omitted optional words count as correct."""
    s, d, i = codes.count("S"), codes.count("D"), codes.count("I")
    return len(codes) - s - d - i, s, d, i
