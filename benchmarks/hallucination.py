"""Hallucination on non-speech, per model, from stored results (issue 29, item 4).

Reads the hypotheses of `ops/benchmark -m MODEL -d nonspeech_clips` runs through the one
results reader (`asrbench.results.store`) and prints per model: words per minute of
non-speech with its bootstrap interval over clips, the share of clips with any output (and its
interval), both by CONTENT group (silence / noise / music, with the group sizes), and the
worst clip's text. Words are counted by `scoring.hallucination` (the scorer's normalisation:
markers such as `[Music]`, interjections and punctuation are no words).

With `--longform DATASET` it also runs the long-form checks on the stored session
hypotheses of a long-form dataset (`datasets/mini_long_en`): dropped stretches (>= 10 s of
reference speech with no hypothesis word), repeated n-gram loops, per session.

    ops/benchmark -m pocketsphinx_en -d nonspeech_clips --runner docker   # once per model
    .venv/bin/python benchmarks/hallucination.py [-m MODEL ...] [--results results]
        [--longform mini_long_en] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asrbench.dataset import load_dataset  # noqa: E402
from asrbench.results.store import StoredCell, scan  # noqa: E402
from asrbench.scorers import get_scorer  # noqa: E402
from asrbench.settings import settings  # noqa: E402
from scoring.hallucination import (  # noqa: E402
    GroupFigures,
    NonSpeechFigures,
    clip_outputs,
    nonspeech_figures,
    session_checks,
)

LOCAL = ["pocketsphinx_en", "whisper_tiny_en", "whisper_base", "whispercpp_tiny_en"]
LOCAL += ["moonshine_base_en"]


def _cells(results: Path, models: list[str], dataset: str) -> list[StoredCell]:
    found = scan(results, models or None, [dataset])
    for line in found.problems:
        print(f"# {line}", file=sys.stderr)
    cells = [c for (_, d), c in sorted(found.cells.items()) if d == dataset]
    plain = {m for m in models if not any(ch in m for ch in "*?[")}  # patterns: no check
    missing = sorted(plain - {c.model for c in cells})
    for m in missing:
        print(f"# {m}: no stored result on {dataset}; run ops/benchmark -m {m} -d {dataset}")
    return cells


def _hyps(cell: StoredCell) -> tuple[dict[str, str | None], list[str]]:
    """Hypotheses by clip, and the clips whose transcription failed (left out, not silent)."""
    recs = cell.records()
    failed = sorted(i for i, r in recs.items() if r.get("failed"))
    return {i: r.get("hyp") for i, r in recs.items() if i not in failed}, failed


def nonspeech(cell: StoredCell, ds, reps: int) -> tuple[NonSpeechFigures, list[str]]:
    hyps, failed = _hyps(cell)
    utts = [u for u in ds.utterances if u.id in hyps]
    seconds = {u.id: u.duration for u in utts}
    contents = {u.id: u.extra.get("CONTENT", "") for u in utts}
    scorer = get_scorer(ds.language)
    clips = clip_outputs(hyps, seconds, contents, scorer.normalize)
    return nonspeech_figures(clips, reps=reps), failed


def _ci(lo_hi: tuple[float, float] | None, scale: float = 1.0) -> str:
    if lo_hi is None:
        return "[-]"
    return f"[{lo_hi[0] * scale:.1f}, {lo_hi[1] * scale:.1f}]"


def _group_cell(g: GroupFigures | None) -> str:
    if g is None:
        return "-"
    return f"{g.words_per_min:.1f} ({g.clips_with_output}/{g.clips})"


def row(model: str, figs: NonSpeechFigures, failed: list[str]) -> str:
    o = figs.overall
    by = {g.group: g for g in figs.groups}
    worst = o.worst_text.replace("|", "\\|").strip()
    worst = (worst[:70] + "...") if len(worst) > 70 else worst
    cells = [
        model,
        f"{o.clips}" + (f" ({len(failed)} failed)" if failed else ""),
        f"{o.words_per_min:.1f} {_ci(o.words_per_min_ci)}",
        f"{100 * o.share_with_output:.0f} % {_ci(o.share_ci, 100)}",
        *(_group_cell(by.get(k)) for k in ("silence", "noise", "music")),
        f'{o.worst_id}: "{worst}"' if o.worst_words else "(none)",
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| model | clips | words/min [95 % CI] | clips with output [95 % CI] | silence | noise "
    "| music | worst clip |\n|---|---|---|---|---|---|---|---|"
)


def longform(results: Path, models: list[str], dataset: str) -> list[dict]:
    ds = load_dataset(settings().datasets_dir / dataset, check_audio=False)
    scorer = get_scorer(ds.language)
    out = []
    for cell in _cells(results, models, ds.id):
        hyps, failed = _hyps(cell)
        for u in ds.utterances:
            refs = [s for s in ds.segments if s.session_id == u.id]
            if u.id in failed or not refs:
                continue
            got = session_checks(scorer, refs, hyps.get(u.id) or "", duration=u.duration)
            out.append({"model": cell.model, **got.to_dict()})
            drops = "; ".join(
                f"{d.start_time:.1f}-{d.end_time:.1f} s ({d.words} words: {d.text}...)"
                for d in got.dropped
            )
            loops = "; ".join(
                f"{lp.ngram!r} x{lp.repeats} (reference: x{lp.ref_repeats})" for lp in got.loops
            )
            print(
                f"| {cell.model} | {u.id} | {got.ref_words} | {got.hyp_words} "
                f"| {len(got.dropped)} ({got.dropped_seconds:.1f} s) {drops} "
                f"| {len(got.loops)} {loops} |"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-m", "--model", action="append", default=[], help="model (repeatable)")
    ap.add_argument("-d", "--dataset", default="nonspeech_clips", help="reference-free dataset")
    ap.add_argument(
        "--results", type=Path, help="results root (default $ASRBENCH_RESULTS, else results/)"
    )
    ap.add_argument("--reps", type=int, default=1000, help="bootstrap replicates")
    ap.add_argument("--longform", help="also check stored sessions of this long-form dataset")
    ap.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = ap.parse_args(argv)
    models = args.model or LOCAL
    args.results = args.results or settings().results
    ds = load_dataset(settings().datasets_dir / args.dataset, check_audio=False)
    print(f"{args.dataset}: {len(ds)} clips, {ds.total_duration / 60:.2f} min\n")
    print(HEADER)
    figures = {}
    for cell in _cells(args.results, models, ds.id):
        figs, failed = nonspeech(cell, ds, args.reps)
        figures[cell.model] = {**figs.to_dict(), "failed": failed, "sample": cell.is_sample}
        print(row(cell.model, figs, failed))
    print("\nsilence / noise / music: words per minute (clips with output / clips in the group)")
    out: dict = {"nonspeech": figures}
    if args.longform:
        print("\n| model | session | ref words | hyp words | dropped >= 10 s | loops |")
        print("|---|---|---|---|---|---|")
        out["longform"] = longform(args.results, models, args.longform)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
