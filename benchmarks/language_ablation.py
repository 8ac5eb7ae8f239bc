"""How much of the TER on a non-English set moves with each normalisation step, by example.

Reads stored benchmark cells (`ops/benchmark` writes `<results>/<model>/<dataset>/`, whose
`utterances.jsonl` keeps every raw reference and hypothesis, and `summary.json` the dataset's
language) and re-scores them with the platform's scorer (`asrbench.scorers.get_scorer`, the
cell's language and options) once with its default configuration and once per variant: each
step switched off alone (leave-one-out: NSW, COMPOUNDS, the DAE list, CASE, PUNC) and the
options that are off by default switched on (diacritics="strip"). No model runs.

For each variant: TER, its difference from the default, and every utterance whose error count
or reference length changed, with both normalised texts: the ablation by example. The cumulative
ladder of `asrbench/results/derived.py` (each cell's ablation.json: raw, +CASE, +PUNC, ...)
answers another question (what each step adds on top of the previous ones); this one asks what
each step is worth in the final configuration.

    .venv/bin/python benchmarks/language_ablation.py results/whisper_base/mini_fr \\
        [--cell ...] [--examples 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (label, ScorerConfig options of the variant, what it measures)
VARIANTS: list[tuple[str, dict, str]] = [
    ("-NSW", {"nsw": False}, "numbers and symbols per language (nemo, else num2words)"),
    ("-COMPOUNDS", {"compounds": False}, "a word joined on one side, split on the other"),
    ("-DAE list", {"alternatives": ""}, "the curated alternatives_<lang>.txt rules"),
    ("-CASE", {"case": False}, "script-correct case folding"),
    ("-PUNC", {"punc": False}, "punctuation removal (and with it ELISION)"),
    ("+DIACRITICS strip", {"diacritics": "strip"}, "optional diacritics removed (off by default)"),
]


@dataclass(frozen=True)
class Cell:
    """One stored benchmark cell: its raw texts and the scorer language and options it used."""

    name: str
    lang: str
    options: dict
    refs: dict[str, str]
    hyps: dict[str, str]


def load_cell(folder: Path) -> Cell:
    """A cell folder's `utterances.jsonl` and the scorer's language from `summary.json`."""
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    scorer = summary.get("scorer") or {}
    refs, hyps = {}, {}
    with (folder / "utterances.jsonl").open(encoding="utf-8") as f:
        for line in f:
            u = json.loads(line)
            refs[u["id"]] = u.get("ref") or ""
            if u.get("hyp") is not None:
                hyps[u["id"]] = u["hyp"]
    name = f"{summary.get('model')} on {summary.get('dataset')}"
    opts = {k: v for k, v in (scorer.get("options") or {}).items() if k != "bootstrap"}
    return Cell(name, str(scorer.get("lang") or "en"), opts, refs, hyps)


def _score(cell: Cell, extra: dict) -> tuple[list, dict]:
    from asrbench.scorers import get_scorer

    scorer = get_scorer(cell.lang, {**cell.options, **extra, "bootstrap": 0})
    result = scorer.score(cell.refs, cell.hyps)
    return result.utterances, result.config


def _ter(utts: list) -> tuple[int, int]:
    return sum(u.sub + u.ins + u.dele for u in utts), sum(len(u.ref) for u in utts)


def ablate(cell: Cell, examples: int) -> dict:
    """The default and every variant of one cell, with the utterances each variant moves."""
    from asrbench.errors import InputError
    from scoring.errors import ScoringError

    t0 = time.perf_counter()
    base, config = _score(cell, {})
    err, n = _ter(base)
    rows = [{"variant": "default", "errors": err, "n_ref": n, "ter": err / max(n, 1)}]
    for label, opts, what in VARIANTS:
        try:
            utts, _ = _score(cell, opts)
        except (InputError, ScoringError) as exc:  # an option this scorer does not have
            rows.append({"variant": label, "what": what, "skipped": str(exc)})
            continue
        e, m = _ter(utts)
        moved = []
        for b, v in zip(base, utts, strict=True):
            if (b.sub + b.ins + b.dele, len(b.ref)) != (v.sub + v.ins + v.dele, len(v.ref)):
                moved.append(
                    {
                        "id": b.id,
                        "errors": [b.sub + b.ins + b.dele, v.sub + v.ins + v.dele],
                        "default": [" ".join(b.ref), " ".join(b.hyp)],
                        "variant": [" ".join(v.ref), " ".join(v.hyp)],
                    }
                )
        rows.append(
            {
                "variant": label,
                "what": what,
                "errors": e,
                "n_ref": m,
                "ter": e / max(m, 1),
                "delta_pp": 100 * (e / max(m, 1) - err / max(n, 1)),
                "utterances_moved": len(moved),
                "examples": moved[:examples],
            }
        )
    return {
        "cell": cell.name,
        "lang": cell.lang,
        "steps": config.get("steps"),
        "rows": rows,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def markdown(report: dict) -> str:
    """The ablation of one cell as a Markdown table, then its examples."""
    lines = [
        f"#### {report['cell']} ({report['lang']}; steps: {', '.join(report['steps'] or [])})",
        "",
        "| variant | TER | errors / ref words | Δ TER (pp) | utterances moved |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in report["rows"]:
        if "skipped" in r:
            lines.append(f"| {r['variant']} | skipped: {r['skipped']} | | | |")
        elif r["variant"] == "default":
            lines.append(f"| default | {100 * r['ter']:.2f}% | {r['errors']} / {r['n_ref']} | | |")
        else:
            lines.append(
                f"| {r['variant']} | {100 * r['ter']:.2f}% | {r['errors']} / {r['n_ref']} | "
                f"{r['delta_pp']:+.2f} | {r['utterances_moved']} |"
            )
    for r in report["rows"]:
        for ex in r.get("examples", []):
            lines.append(
                f"- {r['variant']} `{ex['id']}`: errors {ex['errors'][0]} -> {ex['errors'][1]}; "
                f"default ref `{ex['default'][0]}` / hyp `{ex['default'][1]}`; "
                f"variant ref `{ex['variant'][0]}` / hyp `{ex['variant'][1]}`"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("cells", nargs="+", type=Path, help="stored cell folders (model/dataset)")
    ap.add_argument("--examples", type=int, default=5, help="examples per variant (default 5)")
    ap.add_argument("--json", type=Path, help="write every report (all examples) here")
    args = ap.parse_args(argv)
    reports = []
    for folder in args.cells:
        if not (folder / "utterances.jsonl").is_file():
            print(f"{folder}: no utterances.jsonl; run `ops/benchmark` for it first")
            return 2
        report = ablate(load_cell(folder), 10**6 if args.json else args.examples)
        reports.append(report)
        shown = {
            **report,
            "rows": [
                {**r, "examples": r.get("examples", [])[: args.examples]} for r in report["rows"]
            ],
        }
        print(markdown(shown), end="\n\n")
    if args.json:
        from asrbench.fsio import atomic_write_text

        atomic_write_text(args.json, json.dumps(reports, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
