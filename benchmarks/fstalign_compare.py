"""Rev's fstalign beside `ops/score --preset fstalign` on Earnings-21 calls (issue 42 item 4).

For N calls of Earnings-21 (the Eval-10 list first) and each system: fstalign as the dataset's
authors ran it (transcripts/README.md: the NLP reference with its normalisation sidecar, and
the wer_tag sidecar) against the system's NLP output, and the platform's scorer on plain text
made from the two NLP files' token columns (one utterance per call, normalised a sentence at a
time), with the `fstalign` preset and with the default steps. Prints per call and system: each
WER with its counts, and the seconds each took (fstalign: the whole process; the platform:
normalising and scoring in this process, once its grammars are loaded). The NLP reading here
is the token column only: no sidecar, so the `fstalign` preset (no NSW since issue 42 item 4)
compares numbers as written; `benchmarks/earnings21_table.py` scores the NLP files with their
sidecars, as fstalign does (docs/SCORING.md#the-fstalign-preset).

    .venv/bin/python benchmarks/fstalign_compare.py [--repo DIR] [--n 3]
        [--systems google,rev/espnet/nlp] [--fstalign PATH] [--json OUT]
    .venv/bin/python benchmarks/fstalign_compare.py --pairs FILE   # lines `REF | HYP`

--repo: a checkout of github.com/revdotcom/speech-datasets, or its bare git directory (read
with `git show`). --fstalign: default .cache/tools/fstalign/bin/fstalign (`make fstalign`).
--pairs: short texts instead, one `REF | HYP` a line, each scored by fstalign alone and by the
`fstalign` preset (a stretch of a call cut out: is a difference fstalign's convention, or its
path in the whole call?).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
MIRROR = Path("/work/.mirror/revdotcom+speech-datasets/repo")


class Source:
    """Earnings-21's files from a checkout, or from a bare git directory at HEAD."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.bare = not (repo / "earnings21").is_dir()

    def text(self, rel: str) -> str:
        if not self.bare:
            return (self.repo / rel).read_text(encoding="utf-8")
        cmd = ["git", "--git-dir", str(self.repo), "show", f"HEAD:{rel}"]
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

    def eval10(self) -> list[str]:
        rows = self.text("earnings21/eval10-file-metadata.csv").splitlines()[1:]
        return [r.split(",")[0] for r in rows if r.strip()]


def nlp_sentences(text: str) -> list[str]:
    """The token column of an NLP file as sentences: a sentence ends at a token whose
    punctuation column holds `.`, `?` or `!` (the header line left out)."""
    out, words = [], []
    for line in text.splitlines()[1:]:
        cols = line.split("|")
        if cols[0].strip():
            words.append(cols[0].strip())
        if len(cols) > 4 and any(m in cols[4] for m in ".?!") and words:
            out.append(" ".join(words))
            words = []
    if words:
        out.append(" ".join(words))
    return out


def run_fstalign(binary: Path, files: dict[str, Path], log: Path) -> tuple[dict, float]:
    """fstalign wer as the Earnings-21 authors ran it; its bestWER and the seconds it took."""
    cmd = [
        str(binary),
        "wer",
        "--ref",
        str(files["ref"]),
        "--hyp",
        str(files["hyp"]),
        "--ref-json",
        str(files["norm"]),
        "--wer-sidecar",
        str(files["tags"]),
        "--json-log",
        str(log),
    ]
    log.unlink(missing_ok=True)  # never read a previous run's log
    start = time.perf_counter()
    run = subprocess.run(cmd, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if not log.is_file():
        sys.exit(f"fstalign wrote no log ({' '.join(cmd)}): {run.stdout[-300:]}")
    best = json.loads(log.read_text())["wer"]["bestWER"]
    return best, seconds


def run_platform(scorer, call: str, ref: list[str], hyp: list[str]) -> tuple[dict, float]:
    """The scorer on one call (one utterance), its sentences normalised one at a time first:
    nemo's NSW on a whole call at once (~10,000 words) did not finish in 10 minutes here, and
    the steps are idempotent, so `score` on the normalised call changes nothing more."""
    start = time.perf_counter()
    norm = [" ".join(t for s in side for t in scorer.normalize(s)) for side in (ref, hyp)]
    m = scorer.score({call: norm[0]}, {call: norm[1]}).metrics
    seconds = time.perf_counter() - start
    counts = {"errors": m.errors, "n_ref": m.n_ref, "sub": m.sub, "del": m.dele, "ins": m.ins}
    return {**counts, "wer": m.ter}, seconds


def _files(src: Source, call: str, system: str, tmp: Path) -> dict[str, Path]:
    rels = {
        "ref": f"earnings21/transcripts/nlp_references/{call}.nlp",
        "norm": f"earnings21/transcripts/normalizations/{call}.norm.json",
        "tags": f"earnings21/transcripts/wer_tags/{call}.wer_tag.json",
        "hyp": f"earnings21/output/{system}/{call}.nlp",
    }
    out = {}
    for key, rel in rels.items():
        path = tmp / f"{system.replace('/', '_')}.{call}.{key}.{rel.rsplit('.', 1)[1]}"
        path.write_text(src.text(rel), encoding="utf-8")
        out[key] = path
    return out


def compare(args: argparse.Namespace) -> list[dict]:
    from asrbench.scorers import get_scorer

    src = Source(args.repo)
    scorers = {
        "fstalign_preset": get_scorer("en", {"preset": "fstalign", "bootstrap": 0}),
        "default": get_scorer("en", {"bootstrap": 0}),
    }
    scorers["default"].score({"warm": "twenty twenty one"}, {"warm": "2021"})  # grammars loaded
    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for call in src.eval10()[: args.n]:
            for system in args.systems.split(","):
                files = _files(src, call, system, tmp)
                fst, fst_s = run_fstalign(args.fstalign, files, tmp / "log.json")
                ref = nlp_sentences(files["ref"].read_text(encoding="utf-8"))
                hyp = nlp_sentences(files["hyp"].read_text(encoding="utf-8"))
                row = {"call": call, "system": system, "fstalign": fst, "fstalign_s": fst_s}
                for name, scorer in scorers.items():
                    row[name], row[f"{name}_s"] = run_platform(scorer, call, ref, hyp)
                rows.append(row)
                _print_row(row)
    return rows


def _print_row(row: dict) -> None:
    f, p, d = row["fstalign"], row["fstalign_preset"], row["default"]
    print(
        f"{row['call']} {row['system']:<16} fstalign {100 * f['wer']:6.2f}% "
        f"({f['numErrors']}/{f['numWordsInReference']}, {row['fstalign_s']:5.1f} s)  "
        f"preset fstalign {100 * p['wer']:6.2f}% ({p['errors']}/{p['n_ref']}, "
        f"{row['fstalign_preset_s']:4.1f} s)  default {100 * d['wer']:6.2f}% "
        f"({d['errors']}/{d['n_ref']}, {row['default_s']:4.1f} s)",
        flush=True,
    )


def compare_pairs(binary: Path, pairs: Path) -> None:
    """`--pairs FILE`: each line `REF | HYP` scored by fstalign alone (plain text, no sidecar)
    and by the `fstalign` preset, errors side by side: a stretch of a call cut out to see
    whether a difference is fstalign's convention or its path in the whole call."""
    rows = []
    for n, line in enumerate(pairs.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and line.count(" | ") != 1:
            print(f"{pairs}:{n}: write one pair a line as `REF | HYP`", file=sys.stderr)
            sys.exit(2)
        if line.strip():
            rows.append(tuple(side.strip() for side in line.split(" | ")))
    from asrbench.scorers import get_scorer

    scorer = get_scorer("en", {"preset": "fstalign", "bootstrap": 0})
    print("| reference | hypothesis | fstalign | preset fstalign |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for ref, hyp in rows:
            (tmp / "r.txt").write_text(ref + "\n", encoding="utf-8")
            (tmp / "h.txt").write_text(hyp + "\n", encoding="utf-8")
            cmd = [str(binary), "wer", "--ref", str(tmp / "r.txt"), "--hyp", str(tmp / "h.txt")]
            log = tmp / "log.json"
            subprocess.run([*cmd, "--json-log", str(log)], check=True, capture_output=True)
            fst = json.loads(log.read_text())["wer"]["bestWER"]["numErrors"]
            mine = scorer.score({"x": ref}, {"x": hyp}).metrics.errors
            print(f"| {ref} | {hyp} | {fst} | {mine} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repo", type=Path, default=MIRROR)
    ap.add_argument("--n", type=int, default=3, help="calls (the Eval-10 list first)")
    ap.add_argument("--systems", default="google,rev/espnet/nlp")
    ap.add_argument(
        "--fstalign", type=Path, default=ROOT / ".cache" / "tools" / "fstalign" / "bin" / "fstalign"
    )
    ap.add_argument("--json", type=Path, help="write the rows as JSON")
    ap.add_argument("--pairs", type=Path, help="score the `REF | HYP` lines of FILE instead")
    args = ap.parse_args()
    if not args.fstalign.is_file():
        sys.exit(f"{args.fstalign}: no fstalign binary; run `make fstalign` first")
    if args.pairs:
        compare_pairs(args.fstalign, args.pairs)
        return
    rows = compare(args)
    for system in args.systems.split(","):
        mine = [r for r in rows if r["system"] == system]
        fe = sum(r["fstalign"]["numErrors"] for r in mine)
        fn = sum(r["fstalign"]["numWordsInReference"] for r in mine)
        pe = sum(r["fstalign_preset"]["errors"] for r in mine)
        pn = sum(r["fstalign_preset"]["n_ref"] for r in mine)
        fs = sum(r["fstalign_s"] for r in mine)
        ps = sum(r["fstalign_preset_s"] for r in mine)
        print(
            f"pooled {system:<16} fstalign {100 * fe / fn:.2f}% ({fe}/{fn}, {fs:.1f} s)  "
            f"preset fstalign {100 * pe / pn:.2f}% ({pe}/{pn}, {ps:.1f} s)"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
