"""Where fstalign's alignment of a call and the platform's count different errors (issue 42 item 4).

Reads fstalign's side-by-side alignment of each call (`fstalign wer ... --output-sbs`, as
`benchmarks/earnings21_table.py` runs it, with `--sbs` there) beside the platform's alignment
of the same call (`ops/score --preset fstalign`'s `utterances.jsonl`, its `ops`). Both hold the
hypothesis's words in the same order, so they are cut into stretches after every run of 3
hypothesis words that both pair as correct with 3 consecutive reference words; a stretch whose
errors differ is a place. Each place is printed with both alignments and a first cause:
- `last word`: the file's last stretch, where fstalign deletes and inserts (in either order)
  the last word that the platform substitutes (fstalign's rule for a file's last word);
- `not minimal`: the same reference tokens on both sides, fewer errors on one: that side's
  path is not a least-cost one through these tokens;
- `hyphen, ...`: the same words, one side reading a hyphenated reference word as its parts
  (fstalign's hyphen synonym): `fstalign split` (fstalign reads the parts where the whole
  word costs less), `synonym not taken` (the hypothesis holds every part here, fstalign
  kept the whole word), `partial match` (the platform reads the parts where only some of them
  match here, which fstalign's composition does not take: the preset's rule offers a synonym
  where the hypothesis holds its words anywhere in the stretch, `scoring/synonyms.py`),
  `cut-off` (one side reads a cut-off, "and-", as its stem);
- `other reading`: the two sides read other reference tokens (another reading of a normalisation
  sidecar's entity): to be read by hand.
Prints a row per call (errors both ways, places by cause) and a row per place.

    .venv/bin/python benchmarks/fstalign_places.py --sbs DIR --utterances FILE
        [--calls 4341191,...] [--json OUT]

--sbs: a folder of `CALL.sbs.txt` files (fstalign's `--output-sbs`); --utterances: the
platform's `utterances.jsonl` for the same system (one utterance per call, id = the call).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NamedTuple

RUN = 3  # correct hypothesis words in a row that end a stretch
MERGE = 20  # stretches a place may take in to reach the same reference words on both sides


class Op(NamedTuple):
    """One alignment row: the reference token (None: inserted), the hypothesis token (None:
    deleted), and whether it is an error."""

    ref: str | None
    hyp: str | None
    err: bool


def read_sbs(text: str) -> list[Op]:
    """fstalign's side-by-side rows (`ref<TAB>hyp<TAB>ERR<TAB>class<TAB>tags`), up to the
    error groups that follow the dashed line."""
    rows = []
    for line in text.split("\n---")[0].splitlines()[1:]:
        cols = line.split("\t")
        ref, hyp = cols[0].strip(), cols[1].strip()
        rows.append(
            Op(None if ref == "<ins>" else ref, None if hyp == "<del>" else hyp, cols[2] == "ERR")
        )
    return rows


def read_ops(ops: list[list]) -> list[Op]:
    """The platform's `ops` (`[kind, ref, hyp]`, kind C, S, D or I) as rows."""
    return [Op(r, h, kind != "C") for kind, r, h in ops]


def _stretches(rows: list[Op]) -> dict[int, list[Op]]:
    """Rows grouped by the number of hypothesis words before them; a stretch ends after a
    correct hypothesis word (its key: that word's index + 1)."""
    out: dict[int, list[Op]] = {}
    seen = 0
    for op in rows:
        out.setdefault(seen, []).append(op)
        if op.hyp is not None:
            seen += 1
    return out


def places(fst: list[Op], mine: list[Op]) -> list[dict]:
    """The places where the errors differ. Both sides are cut after each run of RUN hypothesis
    words that both pair as correct (`_anchored`); a stretch whose errors differ opens a place,
    which takes in the next stretches until both sides have read the same reference words
    (one side may delete a repeated passage where the other deletes its other copy), at most
    MERGE of them."""
    a, b = _stretches(fst), _stretches(mine)
    n_hyp = sum(op.hyp is not None for op in fst)
    if n_hyp != sum(op.hyp is not None for op in mine):
        raise SystemExit("the two alignments hold different hypotheses")
    sync = [k + 1 for k in range(RUN - 1, n_hyp) if _anchored(a, k) and _anchored(b, k)]
    out: list[dict] = []
    place: dict | None = None
    start = 0
    for end in [*sync, n_hyp + 1]:
        fa = [op for k in range(start, end) for op in a.get(k, [])]
        fb = [op for k in range(start, end) for op in b.get(k, [])]
        if place is None and _errors(fa) != _errors(fb):
            place = {"hyp_word": start, "fstalign": [], "platform": [], "stretches": 0}
        if place is not None:
            place["fstalign"] += fa
            place["platform"] += fb
            place["stretches"] += 1
            place["last"] = end > n_hyp
            if _words(place["fstalign"]) == _words(place["platform"]) or (
                place["stretches"] > MERGE or place["last"]
            ):
                if _errors(place["fstalign"]) != _errors(place["platform"]):
                    out.append(place)
                place = None
        start = end
    return out


def _errors(rows: list[Op]) -> int:
    return sum(op.err for op in rows)


def _words(rows: list[Op]) -> str:
    """The reference words read, hyphens and spaces aside ("long-term" reads as "long term")."""
    return "".join(op.ref for op in rows if op.ref is not None).replace("-", "").lower()


def _anchored(stretches: dict[int, list[Op]], k: int) -> bool:
    """Hypothesis words k-RUN+1..k all correct, with no reference word deleted between them:
    a run that pins both sides to the same reference words (one correct word alone may be
    paired with another copy of it: "and and" against "and")."""
    run = range(k - RUN + 1, k + 1)
    return all(not _hyp_op(stretches[j]).err for j in run) and all(
        len(stretches[j]) == 1 for j in run[1:]
    )


def _hyp_op(ops: list[Op]) -> Op:
    """The row that holds the stretch's hypothesis word (the last one: deletions come before)."""
    return [op for op in ops if op.hyp is not None][-1]


def cause(place: dict) -> str:
    """A first reading of a place (the module docstring says what each cause means)."""
    fst, mine = place["fstalign"], place["platform"]
    if (
        place["last"]
        and len(fst) >= 2
        and {fst[-1].ref is None, fst[-2].ref is None} == {True, False}  # an I and a D,
        and {fst[-1].hyp is None, fst[-2].hyp is None} == {True, False}  # in either order
        and mine[-1].err
        and mine[-1].ref is not None
        and mine[-1].hyp is not None
    ):
        return "last word"
    refs = [[op.ref.lower() for op in side if op.ref is not None] for side in (fst, mine)]
    if refs[0] == refs[1]:
        return "not minimal"
    if _words(fst) != _words(mine):
        return "other reading"
    # the same words, one side reading a hyphenated word as its parts (fstalign's synonym)
    if len(refs[0]) == len(refs[1]):  # a cut-off ("and-") read as its stem on one side
        return "hyphen, cut-off"
    if len(refs[0]) > len(refs[1]):
        return "hyphen, fstalign split"
    return "hyphen, synonym not taken" if _parts_matched(fst, mine) else "hyphen, partial match"


def _parts_matched(fst: list[Op], mine: list[Op]) -> bool:
    """Whether the platform pairs every part of a hyphenated word that fstalign kept whole
    with the same hypothesis word (fstalign takes a synonym path only where all of it
    matches)."""
    for word in (op.ref.lower() for op in fst if op.ref and "-" in op.ref.strip("-")):
        parts = [p for p in word.split("-") if p]
        for i in range(len(mine) - len(parts) + 1):
            run = mine[i : i + len(parts)]
            if [(op.ref or "").lower() for op in run] == parts:
                return not any(op.err for op in run)
    return False


def _show(rows: list[Op], most: int = 24) -> str:
    """The rows as `ref/hyp` where an error (`*`: none), a correct word as itself; a long place
    shown by its ends."""
    cells = [f"{op.ref or '*'}/{op.hyp or '*'}" if op.err else (op.ref or "") for op in rows]
    if len(cells) > most:
        cells = [*cells[: most // 2], f"... ({len(cells) - most} rows) ...", *cells[-most // 2 :]]
    return " ".join(cells)


def call_places(sbs: Path, ops: list[Op]) -> tuple[int, int, list[dict]]:
    """One call: fstalign's errors, the platform's, and the places with their causes."""
    fst = read_sbs(sbs.read_text(encoding="utf-8"))
    found = places(fst, ops)
    for p in found:
        p["cause"] = cause(p)
    return _errors(fst), _errors(ops), found


def _summary(call: str, fe: int, pe: int, found: list[dict]) -> str:
    """A call's row: its errors both ways and, per cause, the places and their errors' sum."""
    by: dict[str, list[int]] = {}
    for p in found:
        n = by.setdefault(p["cause"], [0, 0])
        n[0] += 1
        n[1] += _errors(p["platform"]) - _errors(p["fstalign"])
    causes = ", ".join(f"{c} {n} ({d:+d})" for c, (n, d) in sorted(by.items())) or "-"
    return f"| {call} | {fe} | {pe} | {pe - fe:+d} | {causes} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sbs", type=Path, required=True, help="folder of CALL.sbs.txt")
    ap.add_argument("--utterances", type=Path, required=True, help="the platform's jsonl")
    ap.add_argument("--calls", default="", help="comma-separated; default: every sbs file")
    ap.add_argument("--json", type=Path, help="write the places as JSON")
    args = ap.parse_args()
    wanted = [c for c in args.calls.split(",") if c] or sorted(
        p.name.split(".")[0] for p in args.sbs.glob("*.sbs.txt")
    )
    ops = {}
    for line in args.utterances.read_text(encoding="utf-8").splitlines():
        u = json.loads(line)
        if u["id"] in wanted:
            ops[u["id"]] = read_ops(u["ops"])
    missing = [c for c in wanted if c not in ops]
    if missing:
        sys.exit(f"{args.utterances}: no utterance {missing[0]}; --calls names the calls scored")
    rows, summary, dump = [], [], {}
    for call in wanted:
        fe, pe, found = call_places(args.sbs / f"{call}.sbs.txt", ops[call])
        summary.append(_summary(call, fe, pe, found))
        rows += [
            f"| {call} | {p['hyp_word']} | {p['cause']} | {_errors(p['fstalign'])} / "
            f"{_errors(p['platform'])} | {_show(p['fstalign'])} | {_show(p['platform'])} |"
            for p in found
        ]
        dump[call] = found
    print("| call | fstalign errors | platform errors | diff | places by cause (errors) |")
    print("|---|---|---|---|---|")
    print("\n".join(summary) + "\n")
    print("| call | hyp word | cause | errors (fstalign / platform) | fstalign | platform |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
