"""Byte-identical outputs before and after a scoring change (issue 43's "must show").

Scores the same inputs with `ops/score --reports all` from two checkouts (this one and
`--before`, e.g. a `git archive` of the commit before a change, with the same virtualenv) and
compares every output file's sha256; summary.json without its code digests (`result_key`,
`scorer.code`) and its input paths, which must differ. Inputs: the long pairs of
`benchmarks/scoring_scale.py` (default steps and `--preset raw`), its short-utterance corpus,
sclite's own test pair (tests/scoring/data/sctk) and every embedded dataset's references
against a copy with every seventh word dropped and every fifth upper-cased (each in its own
language: the non-ASCII normalisation paths). Exit status 1 when any file differs.

    .venv/bin/python benchmarks/score_outputs.py --before /tmp/before [--words 10000,30000]
        [--utts 3000]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asrbench.identity import bytes_sha256, canonical, file_sha256  # noqa: E402


def output_digests(out: Path) -> dict[str, str]:
    """Each output file's sha256 (summary.json's without the code digests and input paths)."""
    digests = {p.name: file_sha256(p) for p in sorted(out.iterdir()) if p.name != "summary.json"}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    summary.pop("result_key")
    summary["scorer"].pop("code")
    for side in summary["sources"].values():
        side.pop("path")
    digests["summary.json"] = bytes_sha256(canonical(summary))
    return digests


def _scale() -> object:
    spec = importlib.util.spec_from_file_location(
        "scoring_scale", ROOT / "benchmarks" / "scoring_scale.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(path: Path, texts: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}\t{v}\n" for k, v in texts.items()), encoding="utf-8")
    return path


def _altered(text: str) -> str:
    words = text.split()
    return " ".join(w.upper() if i % 5 == 4 else w for i, w in enumerate(words) if i % 7 != 6)


def inputs(tmp: Path, words: list[int], utts: int) -> dict[str, list[str]]:
    """name -> ops/score arguments (ref, hyp, options), every input file written under tmp."""
    scale = _scale()
    cases: dict[str, list[str]] = {}
    for n in words:
        refs, hyps = scale.long_pair(n)  # type: ignore[attr-defined]
        ref, hyp = _write(tmp / f"pair{n}.ref.tsv", refs), _write(tmp / f"pair{n}.hyp.tsv", hyps)
        cases[f"pair_{n}_default"] = [str(ref), str(hyp)]
        cases[f"pair_{n}_raw"] = [str(ref), str(hyp), "--preset", "raw"]
    if utts:
        refs, hyps = scale.corpus(utts)  # type: ignore[attr-defined]
        ref, hyp = _write(tmp / "short.ref.tsv", refs), _write(tmp / "short.hyp.tsv", hyps)
        cases[f"short_{utts}"] = [str(ref), str(hyp)]
    sctk = ROOT / "tests" / "scoring" / "data" / "sctk"
    cases["sctk_tests"] = [str(sctk / "tests.ref"), str(sctk / "tests.hyp")]
    for meta in sorted((ROOT / "datasets").glob("*/metadata.tsv")):
        with meta.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
        if not rows or "TEXT" not in rows[0]:
            continue
        refs = {r["ID"]: r["TEXT"] for r in rows}
        ds = meta.parent.name
        ref = _write(tmp / f"{ds}.ref.tsv", refs)
        hyp = _write(tmp / f"{ds}.hyp.tsv", {k: _altered(v) for k, v in refs.items()})
        lang = "en"
        yaml = (meta.parent / "dataset.yaml").read_text(encoding="utf-8")
        for line in yaml.splitlines():
            if line.startswith("language:"):
                lang = line.split(":", 1)[1].strip()
        cases[f"dataset_{ds}"] = [str(ref), str(hyp), "--lang", lang]
    return cases


def digests(checkout: Path, cases: dict[str, list[str]], tmp: Path) -> dict[str, dict[str, str]]:
    """Every case scored by `checkout`'s ops/score: name -> its output files' digests."""
    out: dict[str, dict[str, str]] = {}
    for name, args in cases.items():
        folder = tmp / name
        cmd = [str(checkout / "ops" / "score"), *args, "-o", str(folder), "--reports", "all"]
        done = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True)
        if done.returncode != 0:
            out[name] = {"exit": str(done.returncode), "stderr": done.stderr[-500:]}
        else:
            out[name] = output_digests(folder)
        print(name, "done", file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True, help="the other checkout")
    ap.add_argument("--words", default="10000,30000", help="long pairs' sizes")
    ap.add_argument("--utts", type=int, default=3000, help="short utterances (0: none)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        cases = inputs(tmp, [int(w) for w in args.words.split(",") if w], args.utts)
        (tmp / "before").mkdir()
        (tmp / "after").mkdir()
        before = digests(args.before.resolve(), cases, tmp / "before")
        after = digests(ROOT, cases, tmp / "after")
    differ = {k: (before[k], after[k]) for k in cases if before[k] != after[k]}
    print(json.dumps({"cases": len(cases), "differ": differ}, indent=2))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
