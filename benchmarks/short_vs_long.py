"""The same speech scored as short utterances and as long sessions (issue 29, Must show).

`cut`: writes a short-utterance dataset cut from a long-form dataset's sessions at their
reference segments (each segment one utterance, widened by `--pad` seconds into the pauses but
never past the middle of a pause), so the short and the long form hold the very same samples.

`compare`: for each model, from stored results only (`asrbench.results.store`), per session:
the session's WER (the long form), the pooled WER of its segments cut out (the short form), and
for lj_reading the pooled WER of mini_en's original LJ utterances; then per segment the errors
the session alignment puts on that segment's reference words against the errors of the cut
utterance, and where they differ (at a segment's first or last word: a boundary effect).

    .venv/bin/python benchmarks/short_vs_long.py cut --out /tmp/w2/mini_long_en_cut
    ops/benchmark -m whisper_tiny_en -d mini_en -d mini_long_en -d /tmp/w2/mini_long_en_cut
    .venv/bin/python benchmarks/short_vs_long.py compare -m whisper_tiny_en [--results results]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import soundfile as sf  # noqa: E402

from asrbench.dataset import load_dataset  # noqa: E402
from asrbench.results.store import scan  # noqa: E402
from asrbench.scorers import get_scorer  # noqa: E402
from asrbench.settings import settings  # noqa: E402
from scoring.hallucination import ref_words  # noqa: E402

CUT_ID = "mini_long_en_cut"


def _span(segs: list, k: int, pad: float) -> tuple[float, float]:
    """Segment k widened by `pad` on both sides, never past the middle of a pause."""
    seg = segs[k]
    lo, hi = seg.start_time - pad, seg.end_time + pad
    if k > 0:
        lo = max(lo, (segs[k - 1].end_time + seg.start_time) / 2)
    if k + 1 < len(segs):
        hi = min(hi, (seg.end_time + segs[k + 1].start_time) / 2)
    return lo, hi


def _card(ds, pad: float) -> str:
    src = ds.meta.get("id")
    return (
        f"id: {CUT_ID}\nname: {src} cut at its reference segments\n"
        f"language: {ds.language}\nsample_rate: {ds.sample_rate}\n"
        f"description: each reference segment of {src} cut out with up to {pad} s of its "
        "pauses (benchmarks/short_vs_long.py cut)\n"
        "licence: as the source; see its ATTRIBUTION.md\n"
        "columns:\n  SESSION: the session the segment was cut from\n"
    )


def cut(src: Path, out: Path, pad: float) -> None:
    ds = load_dataset(src)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    rows = ["ID\tAUDIO\tDURATION\tTEXT\tSESSION"]
    for utt in ds:
        segs = sorted(
            (s for s in ds.segments if s.session_id == utt.id), key=lambda s: s.start_time
        )
        audio, rate = sf.read(ds.audio_path(utt), dtype="int16")
        for k, seg in enumerate(segs):
            lo, hi = _span(segs, k, pad)
            a, b = max(0, round(lo * rate)), min(len(audio), round(hi * rate))
            uid = f"{utt.id}__{k:02d}"
            sf.write(out / "audio" / f"{uid}.wav", audio[a:b], rate, subtype="PCM_16")
            rows.append(f"{uid}\taudio/{uid}.wav\t{(b - a) / rate:.3f}\t{seg.words}\t{utt.id}")
    (out / "metadata.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (out / "dataset.yaml").write_text(_card(ds, pad), encoding="utf-8")
    print(f"wrote {len(rows) - 1} utterances to {out}")


def _pool(recs: list[dict]) -> tuple[int, int, int, int, int]:
    s, d, i, n = (sum(r[k] for r in recs) for k in ("sub", "del", "ins", "n_ref"))
    return s, d, i, s + d + i, n


def _fmt(t: tuple[int, int, int, int, int]) -> str:
    s, d, i, e, n = t
    return f"{100 * e / max(n, 1):5.2f} % ({e}/{n}: S{s} D{d} I{i})"


def _per_segment(ops: list, seg_of: list[int], n_segs: int) -> list[list[int]]:
    """Errors (S, D, I) of the session alignment per reference segment; an insertion goes to
    the segment of the reference word before it (the first segment at the start)."""
    out = [[0, 0, 0] for _ in range(n_segs)]
    r = 0
    for op in ops:
        code = op[0]
        k = (
            seg_of[min(r, len(seg_of) - 1)]
            if code != "I"
            else seg_of[max(0, min(r - 1, len(seg_of) - 1))]
        )
        if code in "SDI":
            out[k]["SDI".index(code)] += 1
        if code != "I":
            r += 1
    return out


def compare(results: Path, models: list[str], long_id: str, short: Path | None = None) -> None:
    found = scan(results, models, [long_id, CUT_ID, "mini_en"])
    if short is not None:  # the short forms stored under another root
        found.cells.update(scan(short, models, [CUT_ID, "mini_en"]).cells)
    ds = load_dataset(ROOT / "datasets" / long_id)
    scorer = get_scorer(ds.language)
    for m in models:
        cells = {d: c for (mm, d), c in found.cells.items() if mm == m}
        if long_id not in cells or CUT_ID not in cells:
            print(f"# {m}: run ops/benchmark -m {m} -d {long_id} -d <cut folder> first")
            continue
        long_recs = cells[long_id].records()
        cut_recs = cells[CUT_ID].records()
        print(f"\n## {m}")
        for sid, rec in sorted(long_recs.items()):
            segs = sorted(
                (s for s in ds.segments if s.session_id == sid), key=lambda s: s.start_time
            )
            pieces = [cut_recs[f"{sid}__{k:02d}"] for k in range(len(segs))]
            print(f"{sid}: session {_fmt(_pool([rec]))}; cut segments {_fmt(_pool(pieces))}")
            if sid == "lj_reading" and "mini_en" in cells:
                lj = [r for i, r in cells["mini_en"].records().items() if i.startswith("LJ")]
                print(f"  mini_en's {len(lj)} LJ utterances: {_fmt(_pool(lj))}")
            _segment_table(scorer, segs, rec, pieces)


def _segment_table(scorer, segs, rec: dict, pieces: list[dict]) -> None:
    seg_of: list[int] = []
    for k, seg in enumerate(segs):
        seg_of += [k] * len(ref_words([seg], scorer.normalize)[0])
    ops = rec["ops"]
    if len(seg_of) != sum(1 for o in ops if o[0] != "I"):
        print("  (per-segment split skipped: normalisation differs at segment joins)")
        return
    per = _per_segment(ops, seg_of, len(segs))
    for k, (p, s) in enumerate(zip(pieces, per, strict=True)):
        short = (p["sub"], p["del"], p["ins"])
        if tuple(s) != short:
            print(
                f"  seg {k:02d} ({segs[k].start_time:.1f}-{segs[k].end_time:.1f} s): "
                f"session S{s[0]} D{s[1]} I{s[2]} vs cut S{short[0]} D{short[1]} I{short[2]}"
                f" | cut hyp: {p['hyp'][:90]!r}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cut", help="write the cut short-utterance dataset")
    c.add_argument("--src", type=Path, default=ROOT / "datasets/mini_long_en")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--pad", type=float, default=0.2)
    p = sub.add_parser("compare", help="compare stored results of both forms")
    p.add_argument("-m", "--model", action="append", default=[])
    p.add_argument("--results", type=Path, default=None)
    p.add_argument("--long", default="mini_long_en")
    p.add_argument("--short-results", type=Path, default=None, help="root of the short forms")
    args = ap.parse_args()
    if args.cmd == "cut":
        cut(args.src, args.out, args.pad)
    else:
        root = args.results or settings().results
        compare(root, args.model or ["whisper_tiny_en"], args.long, args.short_results)


if __name__ == "__main__":
    main()
