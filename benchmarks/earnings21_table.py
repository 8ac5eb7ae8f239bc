"""The Earnings-21 table reproduced from the systems' outputs, and fstalign per file (issue 42).

For each system, `ops/score` on a folder of its NLP outputs against the NLP references with
their normalisation and wer_tags sidecars, `--preset fstalign --lenient --bootstrap 0` (one
process a system and subset: Eval-10 and/or all 44 calls), beside the values Earnings-21
publishes (`earnings21/transcripts/README.md`, fstalign's WER). Then fstalign itself on the
calls of the widest subset scored (all 44 with `--subsets all`) for `--fstalign-systems` (as
the dataset's authors ran it: NLP reference, `--ref-json`, `--wer-sidecar`), its JSON logs
kept in `--cache` so a rerun reads them, and the errors per file side by side (Eval-10 and the
other calls counted apart). Prints markdown tables: overall WER, entity classes, per file.

    .venv/bin/python benchmarks/earnings21_table.py [--repo DIR] [--subsets eval10,all]
        [--systems google,...] [--fstalign-systems google,rev/espnet/nlp] [--fstalign-calls N]
        [--cached-only] [--cache DIR] [--sbs]
        [--out DIR] [--json OUT]

--repo: a checkout of github.com/revdotcom/speech-datasets or its bare git directory.
--out: where `ops/score` writes (a system's subset already scored there is read, not rerun).
--sbs: fstalign's side-by-side alignments kept beside its logs (`CACHE/sbs/SYSTEM/CALL.sbs.txt`),
which `benchmarks/fstalign_places.py` reads beside the platform's `utterances.jsonl`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from fstalign_compare import MIRROR, Source  # noqa: E402  (the benchmarks' shared reader)

SYSTEMS = {  # output folder -> the published table's column
    "google": "Google",
    "amazon": "Amazon",
    "microsoft": "Microsoft",
    "speechmatics": "Speechmatics",
    "rev/kaldi/nlp": "Rev Kaldi",
    "rev/espnet/nlp": "Rev ESPNet",
    "kaldi_org/librispeech/nlp": "Kaldi.org Librispeech",
}
E21 = "earnings21"
KINDS = {  # the files of one call: (folder, suffix)
    "ref": (f"{E21}/transcripts/nlp_references", ".nlp"),
    "norm": (f"{E21}/transcripts/normalizations", ".norm.json"),
    "tags": (f"{E21}/transcripts/wer_tags", ".wer_tag.json"),
}
MIN_CLASS_WORDS = 100  # "where the class has enough tokens": compared only from this size


def published(src: Source) -> dict[str, dict[str, float]]:
    """The README's tables: row name -> {column: value} (Earnings21, Eval-10, each class)."""
    rows: dict[str, dict[str, float]] = {}
    cols: list[str] = []
    for line in src.text(f"{E21}/transcripts/README.md").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("||"):
            cols = [c.replace("<br />", " ") for c in cells]  # "||": the corner cell stripped
        elif line.startswith("|") and cols and not line.startswith("|--"):
            name = cells[0].strip("_")
            values = [c for c in cells[1:] if c.replace(".", "", 1).isdigit()]
            # the first table holding a row name wins; other tables' shapes are skipped
            if name not in rows and len(values) == len(cols) == len(cells) - 1:
                rows[name] = dict(zip(cols, map(float, values), strict=True))
    return rows


def stage(src: Source, calls: list[str], systems: list[str], root: Path) -> None:
    """The calls' references, sidecars and outputs as the folders `ops/score` takes."""
    for kind, (folder, suffix) in KINDS.items():
        (root / kind).mkdir(parents=True, exist_ok=True)
        for call in calls:
            path = root / kind / f"{call}{suffix}"
            if not path.is_file():
                path.write_text(src.text(f"{folder}/{call}{suffix}"), encoding="utf-8")
    for system in systems:
        out = root / "hyp" / system
        out.mkdir(parents=True, exist_ok=True)
        for call in calls:
            if not (out / f"{call}.nlp").is_file():
                text = src.text(f"{E21}/output/{system}/{call}.nlp")
                (out / f"{call}.nlp").write_text(text, encoding="utf-8")


def score_system(root: Path, system: str, out: Path) -> dict:
    """`ops/score --preset fstalign` on one system's folder (read back when already there):
    per file (S, D, I, |ref|), the entity classes pooled, and the process's seconds."""
    summary = out / "summary.json"
    seconds = None
    if not summary.is_file():
        cmd = [str(ROOT / "ops" / "score"), str(root / "ref"), str(root / "hyp" / system)]
        cmd += ["--norm", str(root / "norm"), "--wer-tags", str(root / "tags"), "--lenient"]
        cmd += ["--preset", "fstalign", "--bootstrap", "0", "-o", str(out)]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        seconds = time.perf_counter() - start
    files = {}
    for line in (out / "utterances.jsonl").read_text(encoding="utf-8").splitlines():
        u = json.loads(line)
        files[u["id"]] = {k: u[k] for k in ("sub", "del", "ins", "n_ref")}
    classes = json.loads(summary.read_text())["entities"]["classes"]
    return {
        "files": files,
        "classes": {c: (v["errors"], v["n_ref"]) for c, v in classes.items()},
        "seconds": seconds,
    }


def run_fstalign(
    binary: Path, root: Path, system: str, call: str, cache: Path, sbs: bool = False
) -> dict:
    """fstalign's JSON log for one call (cached: `cache/SYSTEM/CALL.json`); with `sbs`, its
    side-by-side alignment as well (`cache/sbs/SYSTEM/CALL.sbs.txt`, rerun where missing)."""
    name = system.replace("/", "_")
    log = cache / name / f"{call}.json"
    side = cache / "sbs" / name / f"{call}.sbs.txt"
    if not log.is_file() or (sbs and not side.is_file()):
        log.parent.mkdir(parents=True, exist_ok=True)
        cmd = [str(binary), "wer", "--ref", str(root / "ref" / f"{call}.nlp")]
        cmd += ["--hyp", str(root / "hyp" / system / f"{call}.nlp")]
        cmd += ["--ref-json", str(root / "norm" / f"{call}.norm.json")]
        cmd += ["--wer-sidecar", str(root / "tags" / f"{call}.wer_tag.json")]
        tmp = log.with_suffix(".tmp")
        if sbs:
            side.parent.mkdir(parents=True, exist_ok=True)
            cmd += ["--output-sbs", str(side.with_suffix(".tmp"))]
        subprocess.run([*cmd, "--json-log", str(tmp)], check=True, capture_output=True)
        if not tmp.is_file():  # fstalign's unset `version` flag: it printed and stopped
            sys.exit(f"fstalign wrote no log: {' '.join(cmd)}")
        tmp.rename(log)
        if sbs:
            side.with_suffix(".tmp").rename(side)
    return json.loads(log.read_text())["wer"]


def fstalign_counts(wer: dict, entity_types: dict[str, str]) -> dict:
    """(S, D, I, |ref|) of a call, and its entity classes: fstalign logs each wer_tag entity
    (`wer.wer_tag`), grouped here by the wer_tags sidecar's class as the published table is."""
    b = wer["bestWER"]
    classes: dict[str, list[int]] = {}
    for ident, v in wer.get("wer_tag", {}).items():
        cls = classes.setdefault(entity_types.get(ident, "?"), [0, 0])
        cls[0] += v["numErrors"]
        cls[1] += v["numWordsInReference"]
    return {
        "sub": b["substitutions"],
        "del": b["deletions"],
        "ins": b["insertions"],
        "n_ref": b["numWordsInReference"],
        "classes": classes,
    }


def fstalign_class_table(fst: dict, results: dict, subset: str) -> str:
    """Entity classes over the calls fstalign scored: fstalign's rate beside the platform's
    (the platform's from `ops/score` on the same calls' folder: all the subset's calls)."""
    lines = ["| system | class | fstalign | platform | diff |", "|---|---|---|---|---|"]
    for system in dict.fromkeys(s for s, _ in fst):
        pooled: dict[str, list[int]] = {}
        for (s, _), counts in fst.items():
            for cls, (e, n) in counts["classes"].items() if s == system else ():
                pooled.setdefault(cls, [0, 0])
                pooled[cls][0] += e
                pooled[cls][1] += n
        mine = results[(system, subset)]["classes"]
        for cls, (e, n) in sorted(pooled.items()):
            pe, pn = mine.get(cls, (0, 0))
            diff = f"{100 * (pe / pn - e / n):+.1f}" if n and pn else "-"
            mark = "" if n >= MIN_CLASS_WORDS else "*"
            lines.append(
                f"| {SYSTEMS[system]} | {cls} | {_pct(e, n)} ({e}/{n}{mark}) "
                f"| {_pct(pe, pn)} ({pe}/{pn}) | {diff} |"
            )
    return "\n".join(lines)


def _errors(counts: dict) -> int:
    return counts["sub"] + counts["del"] + counts["ins"]


def _pct(errors: float, n: float) -> str:
    return f"{100 * errors / n:.1f}" if n else "-"


def overall_table(results: dict, pub: dict) -> str:
    """Overall WER per system and subset (pooled, and the mean of the files), published beside."""
    lines = [
        "| system | subset | files | platform WER (pooled) | mean of files | published | diff |",
        "|---|---|---|---|---|---|---|",
    ]
    for (system, subset), r in results.items():
        files = r["files"].values()
        errors = sum(f["sub"] + f["del"] + f["ins"] for f in files)
        n = sum(f["n_ref"] for f in files)
        mean = sum((f["sub"] + f["del"] + f["ins"]) / f["n_ref"] for f in files) / len(files)
        row = "Earnings21" if subset == "all" else "Eval-10"
        p = pub.get(row, {}).get(SYSTEMS[system])
        diff = f"{100 * errors / n - p:+.1f}" if p is not None else "-"
        lines.append(
            f"| {SYSTEMS[system]} | {subset} | {len(r['files'])} | {_pct(errors, n)} "
            f"({errors}/{n}) | {100 * mean:.1f} | {p if p is not None else '-'} | {diff} |"
        )
    return "\n".join(lines)


def class_table(results: dict, pub: dict, subset: str) -> str:
    """Entity classes: the platform's rate (reference words) beside the published one."""
    systems = [s for s, sub in results if sub == subset]
    names = sorted({c for s in systems for c in results[(s, subset)]["classes"]})
    head = "| class | " + " | ".join(SYSTEMS[s] for s in systems) + " |"
    lines = [head, "|---" * (len(systems) + 1) + "|"]
    for name in names:
        cells = []
        for s in systems:
            errors, n = results[(s, subset)]["classes"].get(name, (0, 0))
            p = pub.get(name, {}).get(SYSTEMS[s])
            mark = "" if n >= MIN_CLASS_WORDS else "*"
            cells.append(f"{_pct(errors, n)} / {p if p is not None else '-'} ({n}{mark})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def file_table(results: dict, fst: dict, subset: str, eval10: list[str]) -> str:
    """Per file: fstalign's (S, D, I, |ref|) beside the platform's, and the difference."""
    lines = [
        "| system | call | fstalign S/D/I (errors/ref) | platform S/D/I (errors/ref) | "
        "errors diff | ref diff |",
        "|---|---|---|---|---|---|",
    ]
    for (system, call), f in fst.items():
        p = results[(system, subset)]["files"][call]
        fe, pe = _errors(f), _errors(p)
        lines.append(
            f"| {SYSTEMS[system]} | {call} | {f['sub']}/{f['del']}/{f['ins']} ({fe}/{f['n_ref']})"
            f" | {p['sub']}/{p['del']}/{p['ins']} ({pe}/{p['n_ref']}) | {pe - fe:+d} "
            f"| {p['n_ref'] - f['n_ref']:+d} |"
        )
    for system in dict.fromkeys(s for s, _ in fst):
        calls = [c for s, c in fst if s == system]
        pairs = [(fst[(system, c)], results[(system, subset)]["files"][c]) for c in calls]
        fe, fn, pe, pn = (
            sum(x[k]["sub"] + x[k]["del"] + x[k]["ins"] if e else x[k]["n_ref"] for x in pairs)
            for k, e in ((0, True), (0, False), (1, True), (1, False))
        )
        lines.append(
            f"| {SYSTEMS[system]} | pooled ({len(calls)}) | {_pct(fe, fn)} % ({fe}/{fn}) "
            f"| {_pct(pe, pn)} % ({pe}/{pn}) | {pe - fe:+d} | {pn - fn:+d} |"
        )
    return "\n".join(lines) + "\n\n" + _equal_counts(results, fst, subset, eval10)


def _equal_counts(results: dict, fst: dict, subset: str, eval10: list[str]) -> str:
    """Per system, Eval-10 and the other calls apart: the calls whose errors (and S/D/I, and
    |ref|) equal fstalign's, and the errors' sum of absolute differences."""
    lines = ["| system | calls | errors equal | S/D/I equal | |ref| equal | sum of abs. diffs |"]
    lines.append("|---|---|---|---|---|---|")
    for system in dict.fromkeys(s for s, _ in fst):
        mine = results[(system, subset)]["files"]
        for part, inside in (("Eval-10", True), ("other", False)):
            pairs = [
                (f, mine[c]) for (s, c), f in fst.items() if s == system and (c in eval10) == inside
            ]
            if not pairs:
                continue
            same = [
                sum(_errors(f) == _errors(p) for f, p in pairs),
                sum(all(f[k] == p[k] for k in ("sub", "del", "ins")) for f, p in pairs),
                sum(f["n_ref"] == p["n_ref"] for f, p in pairs),
                sum(abs(_errors(f) - _errors(p)) for f, p in pairs),
            ]
            lines.append(
                f"| {SYSTEMS[system]} | {part} {len(pairs)} | " + " | ".join(map(str, same)) + " |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repo", type=Path, default=MIRROR)
    ap.add_argument("--subsets", default="eval10", help="eval10, all, or both")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--fstalign-systems", default="google,rev/espnet/nlp")
    ap.add_argument(
        "--fstalign-calls", type=int, help="fstalign on the first N calls of the widest subset"
    )
    ap.add_argument(
        "--cached-only", action="store_true", help="compare the calls whose fstalign log is cached"
    )
    ap.add_argument(
        "--fstalign", type=Path, default=ROOT / ".cache" / "tools" / "fstalign" / "bin" / "fstalign"
    )
    ap.add_argument(
        "--sbs",
        action="store_true",
        help="keep fstalign's side-by-side alignments (CACHE/sbs/SYSTEM/CALL.sbs.txt) for "
        "benchmarks/fstalign_places.py",
    )
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "earnings21" / "fstalign")
    ap.add_argument("--out", type=Path, default=ROOT / ".cache" / "earnings21" / "scored")
    ap.add_argument("--json", type=Path, help="write the figures as JSON")
    args = ap.parse_args()
    src = Source(args.repo)
    eval10 = src.eval10()
    refs = [p.rsplit("/", 1)[1].split(".")[0] for p in _listing(src, KINDS["ref"][0])]
    systems = [s for s in args.systems.split(",") if s]
    subsets = {"eval10": eval10, "all": refs}
    results: dict = {}
    for subset in args.subsets.split(","):
        root = args.out / subset / "inputs"
        stage(src, subsets[subset], systems, root)
        for system in systems:
            out = args.out / subset / system.replace("/", "_")
            results[(system, subset)] = r = score_system(root, system, out)
            took = "read back" if r["seconds"] is None else f"{r['seconds']:.1f} s"
            print(f"scored {system} {subset}: {took}", file=sys.stderr, flush=True)
    pub = published(src)
    print(overall_table(results, pub) + "\n")
    for subset in args.subsets.split(","):
        print(
            f"Entity classes, {subset}: platform / published (reference words; * < "
            f"{MIN_CLASS_WORDS})\n\n" + class_table(results, pub, subset) + "\n"
        )
    # fstalign on the widest subset scored (its logs are per call, shared by both subsets)
    subset = "all" if "all" in args.subsets.split(",") else "eval10"
    fst = {}
    if args.fstalign_systems:
        fst = fstalign_calls(args, subset, subsets[subset][: args.fstalign_calls])
        print(file_table(results, fst, subset, eval10) + "\n")
        if fst and all(len([1 for s, _ in fst if s == x]) == len(subsets[subset]) for x, _ in fst):
            print(
                f"Entity classes, {subset}: fstalign / platform\n\n"
                + fstalign_class_table(fst, results, subset)
            )
    if args.json:
        dump = {"results": {f"{s}|{sub}": r for (s, sub), r in results.items()}}
        dump["fstalign"] = {f"{s}|{c}": v for (s, c), v in fst.items()}
        args.json.write_text(json.dumps(dump, indent=1, sort_keys=True) + "\n")


def fstalign_calls(args: argparse.Namespace, subset: str, calls: list[str]) -> dict:
    """fstalign's counts per (system, call) of `--fstalign-systems` (logs cached)."""
    root = args.out / subset / "inputs"
    fst = {}
    for system in args.fstalign_systems.split(","):
        for call in calls:
            cached = args.cache / system.replace("/", "_") / f"{call}.json"
            if args.cached_only and not cached.is_file():
                continue
            wer = run_fstalign(args.fstalign, root, system, call, args.cache, args.sbs)
            types = json.loads((root / "tags" / f"{call}.wer_tag.json").read_text())
            types = {k: v["entity_type"] for k, v in types.items()}
            fst[(system, call)] = fstalign_counts(wer, types)
    return fst


def _listing(src: Source, folder: str) -> list[str]:
    """The files of a folder of the dataset (checkout or bare git directory)."""
    if not src.bare:
        return sorted(str(p) for p in (src.repo / folder).iterdir())
    cmd = ["git", "--git-dir", str(src.repo), "ls-tree", "--name-only", f"HEAD:{folder}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return sorted(f"{folder}/{name}" for name in out.split())


if __name__ == "__main__":
    main()
