"""A corpus of hour-long calls in one `ops/score` (issue 43 item 4): Earnings-21, cold and warm.

The 44 Earnings-21 calls (Rev's NLP references, ~360,000 words) against one system's NLP
outputs (Rev's published files), scored by one `ops/score REF_DIR HYP_DIR` with every default
step, as a whole process: cold (a fresh cache folder holding only nemo's compiled English
grammars, copied from the checkout's `.cache/nemo_tn`, and the compacted tagger built from them
in a process timed apart, so every NSW result is computed) then warm (the same folder again).
Each process: wall seconds, CPU seconds (user + system, with the workers it waited for) and
peak RSS (its own, from wait4), the peaks of RSS and PSS summed over it and its worker
processes (sampled from /proc every 0.2 s), with the NSW strings nemo read. Beside it,
fstalign (Rev's tool, as the Earnings-21 authors ran it: reference, normalisation and wer_tag
sidecars) on the first `--fstalign-calls` calls, one process each, when its binary exists
(`make fstalign`).

    .venv/bin/python benchmarks/longform_corpus.py [--repo DIR] [--system google]
        [--calls 44] [--sidecars] [--fstalign-calls 2] [--fstalign PATH]
        [--windows N --window-words 100]

--repo: a checkout of github.com/revdotcom/speech-datasets or its bare git directory.
--sidecars: also pass `--norm` and `--wer-tags` (the normalisation readings as reference
alternations, the entity classes). --windows N: also NSW in pieces against nemo over the whole
text on N windows of the corpus (docs/SCORING.md, "NSW in pieces"). The checkout's own
`.cache` is never touched.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _module(name: str) -> types.ModuleType:
    """A sibling benchmark as a module of its own name (on sys.path `scoring.py` would shadow
    the `scoring` package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_scale = _module("scoring_scale.py")
_fst = _module("fstalign_compare.py")
run_process, report_header = _scale.run_process, _scale.report_header

FOLDERS = {
    "ref": ("earnings21/transcripts/nlp_references", ".nlp"),
    "norm": ("earnings21/transcripts/normalizations", ".norm.json"),
    "tags": ("earnings21/transcripts/wer_tags", ".wer_tag.json"),
}


def write_corpus(src, system: str, calls: int, tmp: Path) -> list[str]:
    """The first `calls` calls (sorted IDs) the system has an output for: reference, sidecars
    and hypothesis folders under `tmp`; the IDs written."""
    import subprocess

    def names(rel: str) -> list[str]:
        if not src.bare:
            return sorted(p.name for p in (src.repo / rel).iterdir())
        cmd = ["git", "--git-dir", str(src.repo), "ls-tree", "--name-only", "HEAD", rel + "/"]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return sorted(Path(x).name for x in out.split())

    hyp_rel = f"earnings21/output/{system}"
    have = {n.split(".", 1)[0] for n in names(hyp_rel) if n.endswith(".nlp")}
    ids = [n.split(".", 1)[0] for n in names(FOLDERS["ref"][0]) if n.endswith(".nlp")]
    ids = [i for i in ids if i in have][:calls]
    for key, (rel, suffix) in {**FOLDERS, "hyp": (hyp_rel, ".nlp")}.items():
        (tmp / key).mkdir()
        for ident in ids:
            text = src.text(f"{rel}/{ident}{suffix}")
            (tmp / key / f"{ident}{suffix}").write_text(text, encoding="utf-8")
    return ids


def nemo_reads(cache: Path) -> int:
    """Distinct strings nemo read into a cache folder's NSW results."""
    db = cache / "nsw_results.sqlite"
    if not db.is_file():
        return 0
    con = sqlite3.connect(db)
    try:
        return int(con.execute("SELECT COUNT(*) FROM nsw").fetchone()[0])
    finally:
        con.close()


def prepare_grammars(cache: Path, env: dict) -> dict:
    """The grammar folder made ready as on any machine after its first English NSW use: nemo's
    compacted tagger built beside the copied archives (`scoring/normalize/nemo_tagger.py`), in
    a process of its own, timed apart from the runs (once per installation, as the archives)."""
    code = "import sys; from scoring.normalize.nsw import Nsw; Nsw(sys.argv[1]).normalizer()"
    wall, cpu, rss, _ = run_process([sys.executable, "-c", code, str(cache)], env, ROOT)
    row = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mb": round(rss, 1)}
    print("grammars", json.dumps(row), file=sys.stderr, flush=True)
    return row


def _tree_memory(root: int) -> tuple[float, float]:
    """RSS and PSS (MB) summed over a process and its descendants, from /proc (PSS shares
    the pages forked workers hold in common among them)."""
    parent: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, pp in parent.items() if pp in tree} - tree
        tree |= more
        grew = bool(more)
    rss = pss = 0.0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith(("Rss:", "Pss:")):
                    kb = float(line.split()[1]) / 1024
                    rss, pss = (rss + kb, pss) if line.startswith("Rss:") else (rss, pss + kb)
        except OSError:
            continue
    return rss, pss


def run_tree(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, float, float, float]:
    """`run_process` (wall s, CPU s of the process and the workers it waited for, its own peak
    RSS MB) and the peaks of RSS and PSS summed over it and its workers, sampled every 0.2 s."""
    import threading

    peaks = [0.0, 0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            for pid in _children(os.getpid()):
                rss, pss = _tree_memory(pid)
                peaks[0], peaks[1] = max(peaks[0], rss), max(peaks[1], pss)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        wall, cpu, rss, _ = run_process(cmd, env, cwd)
    finally:
        done.set()
        watcher.join()
    return wall, cpu, rss, peaks[0], peaks[1]


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.is_file() else []


def score_runs(tmp: Path, sidecars: bool, env: dict) -> dict:
    """`ops/score` on the corpus, cold then warm, in a cache folder of its own."""
    cache = tmp / "cache"
    (cache / "nemo_tn").mkdir(parents=True)
    for far in (ROOT / ".cache" / "nemo_tn").glob("en_*.far"):
        shutil.copy2(far, cache / "nemo_tn" / far.name)  # grammars warm, results cold
    env = {**env, "ASRBENCH_CACHE": str(cache)}
    out: dict = {"grammars": prepare_grammars(cache, env)}
    cmd = [str(ROOT / "ops" / "score"), str(tmp / "ref"), str(tmp / "hyp"), "--lenient"]
    if sidecars:
        cmd += ["--norm", str(tmp / "norm"), "--wer-tags", str(tmp / "tags")]
    for run in ("cold", "warm"):
        wall, cpu, rss, tree_rss, tree_pss = run_tree([*cmd, "-o", str(tmp / run)], env, ROOT)
        summary = json.loads((tmp / run / "summary.json").read_text())
        m = summary["metrics"]
        out[run] = {
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "peak_rss_mb": round(rss, 1),
            "peak_all_rss_mb": round(tree_rss, 1),
            "peak_all_pss_mb": round(tree_pss, 1),
            "nemo_strings": nemo_reads(cache),
            "counts": {k: m.get(k) for k in ("errors", "n_ref", "sub", "del", "ins")},
        }
        print(run, json.dumps(out[run]), file=sys.stderr, flush=True)
    same = (tmp / "cold" / "utterances.jsonl").read_bytes() == (
        tmp / "warm" / "utterances.jsonl"
    ).read_bytes()
    out["warm_equals_cold"] = same
    return out


def fstalign_runs(binary: Path, tmp: Path, ids: list[str], n: int) -> dict:
    """fstalign on the first n calls, one process each: seconds and peak memory per call."""
    rows = []
    for ident in ids[:n]:
        files = {
            "ref": tmp / "ref" / f"{ident}.nlp",
            "hyp": tmp / "hyp" / f"{ident}.nlp",
            "norm": tmp / "norm" / f"{ident}.norm.json",
            "tags": tmp / "tags" / f"{ident}.wer_tag.json",
        }
        log = tmp / "fstalign.json"
        cmd = [str(binary), "wer", "--ref", str(files["ref"]), "--hyp", str(files["hyp"])]
        cmd += ["--ref-json", str(files["norm"]), "--wer-sidecar", str(files["tags"])]
        wall, cpu, rss, _ = run_process([*cmd, "--json-log", str(log)], dict(os.environ), tmp)
        best = json.loads(log.read_text())["wer"]["bestWER"]
        rows.append({"call": ident, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)})
        rows[-1].update(peak_rss_mb=round(rss, 1), errors=best["numErrors"])
        print("fstalign", json.dumps(rows[-1]), file=sys.stderr, flush=True)
    if not rows:
        return {}
    per_call = sum(r["wall_s"] for r in rows) / len(rows)
    return {"calls": rows, "wall_s_per_call": round(per_call, 2)}


def compare_windows(tmp: Path, n: int, length: int, seed: int = 0) -> dict:
    """NSW in pieces against nemo over the whole text, on `n` windows of `length` words drawn
    (seeded) from the corpus' references and hypotheses, those holding a trigger compared: how
    many differ as strings and in the words scored, with each differing stretch."""
    import difflib
    import random

    sys.path.insert(0, str(ROOT))
    from scoring import Scorer, ScorerConfig
    from scoring.nlp import hypothesis_text, read_nlp
    from scoring.normalize.nsw import NEEDS_NSW, Nsw

    texts = [hypothesis_text(read_nlp(p)) for p in sorted((tmp / "ref").glob("*.nlp"))]
    texts += [hypothesis_text(read_nlp(p)) for p in sorted((tmp / "hyp").glob("*.nlp"))]
    nsw = Nsw(tmp / "cache")
    later = Scorer(ScorerConfig(nsw=False, bootstrap=0))  # the steps after NSW
    rng = random.Random(seed)
    out: dict = {"compared": 0, "strings_differ": 0, "words_differ": 0, "stretches": []}
    for _ in range(n):
        words = rng.choice(texts).split()
        start = rng.randrange(0, max(1, len(words) - length))
        text = " ".join(words[start : start + length])
        if not NEEDS_NSW.search(text):
            continue
        out["compared"] += 1
        whole, pieces = nsw._normalize(text), nsw._pieces(text.split())
        if whole == pieces:
            continue
        out["strings_differ"] += 1
        a, b = later.normalize(whole), later.normalize(pieces)
        if a != b:
            out["words_differ"] += 1
            ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            out["stretches"] += [
                [" ".join(a[max(0, i - 3) : j + 3]), " ".join(b[max(0, k - 3) : m + 3])]
                for op, i, j, k, m in ops
                if op != "equal"
            ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repo", type=Path, default=_fst.MIRROR)
    ap.add_argument("--system", default="google", help="a folder under earnings21/output")
    ap.add_argument("--calls", type=int, default=44)
    ap.add_argument("--sidecars", action="store_true", help="--norm and --wer-tags as well")
    ap.add_argument("--fstalign-calls", type=int, default=2, help="0: no fstalign")
    ap.add_argument(
        "--windows", type=int, default=0, help="also compare NSW in pieces with whole on N windows"
    )
    ap.add_argument("--window-words", type=int, default=100)
    ap.add_argument(
        "--fstalign", type=Path, default=ROOT / ".cache" / "tools" / "fstalign" / "bin" / "fstalign"
    )
    args = ap.parse_args()
    report = report_header()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        ids = write_corpus(_fst.Source(args.repo), args.system, args.calls, tmp)
        words = sum(len((tmp / "ref" / f"{i}.nlp").read_text().splitlines()) - 1 for i in ids)
        report.update(system=args.system, calls=len(ids), ref_words=words)
        report["sidecars"] = args.sidecars
        report["rows"] = score_runs(tmp, args.sidecars, env)
        if args.windows:
            report["windows"] = compare_windows(tmp, args.windows, args.window_words)
        if args.fstalign_calls and args.fstalign.is_file():
            report["fstalign"] = fstalign_runs(args.fstalign, tmp, ids, args.fstalign_calls)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
