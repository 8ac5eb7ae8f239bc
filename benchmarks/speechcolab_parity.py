"""Our scorer against SpeechColab's own pipeline, utterance by utterance, with the cause of
every difference. Not run in CI: it needs a SpeechColab Leaderboard checkout and builds that
pipeline's NeMo grammars (about 1.5 minutes) on each run.

SpeechColab's pipeline is run as its `utils/benchmark.sh` runs it for English: `textnorm_en.py
--has_key --to_upper` on the references and on each hypothesis file (its own vendored copy of
nemo-text-processing), empty normalised hypotheses dropped (`grep -v $'\\t$'`), then
`error_rate_en --tokenizer whitespace` with its `glm_en.csv`. Ours is `scoring.Scorer` with its
defaults (NSW cache under $ASRBENCH_CACHE). Its code is not part of this repository: pass a
checkout, or the git directory of one (its `utils/` is extracted into a temporary folder).

    .venv/bin/python benchmarks/speechcolab_parity.py --speechcolab PATH \\
        --ref datasets/mini_en/metadata.tsv \\
        --hyp pocketsphinx_en=tests/golden/before_consolidation/pocketsphinx_en.hyp.tsv ...

Every utterance whose C/S/D/I differ is put under one cause, tried in this order:
  dropped     SpeechColab drops the utterance (its hypothesis normalises to empty); we score it
              (all deletions)
  nsw         the normalised reference or hypothesis differs and the raw text holds something
              NSW verbalises (digits, spoken symbols, URLs, dotted abbreviations)
  itj         the normalised texts differ by interjections only (SpeechColab drops `oh`, ...)
  text        the normalised texts differ otherwise (punctuation, apostrophes, UK-US, ...)
  dae         the same normalised texts, a different edit count: the alternatives (their list
              against ours, and our rule that an alternative must be all correct)
  split       the same texts and edit count, another S/D/I split (our sclite tie-break against
              their arbitrary shortest path)
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_DETAIL = re.compile(
    r'^\{"uid":(?P<uid>.*?), "score":.*?"cor":(?P<c>\d+), "sub":(?P<s>\d+), '
    r'"ins":(?P<i>\d+), "del":(?P<d>\d+)\}$'
)
CAUSES = ("dropped", "nsw", "itj", "text", "dae", "split")


def speechcolab_utils(path: Path, tmp: Path) -> Path:
    """The `utils/` folder of a checkout, or extracted from a git directory into `tmp`."""
    if (path / "utils" / "error_rate_en").is_file():
        return path / "utils"
    if (path / "HEAD").is_file() or (path / ".git").exists():
        dest = tmp / "speechcolab"
        dest.mkdir()
        archive = subprocess.run(
            ["git", f"--git-dir={path}", "archive", "HEAD", "utils"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return dest / "utils"
    raise SystemExit(f"{path}: neither a SpeechColab Leaderboard checkout nor its git directory")


def speechcolab_commit(path: Path) -> str:
    git_dir = path if (path / "HEAD").is_file() else path / ".git"
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() or "unknown"


def _kaldi(path: Path, texts: dict[str, str]) -> None:
    path.write_text(
        "".join(f"{k} {' '.join(v.split())}\n" for k, v in texts.items()), encoding="utf-8"
    )


def _read_norm(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, _, text = line.partition("\t")
        out[key] = text
    return out


def run_speechcolab(
    utils: Path, refs: dict[str, str], hyps: dict[str, dict[str, str]], work: Path
) -> tuple[
    dict[str, str], dict[str, dict[str, str]], dict[str, dict[str, tuple[int, int, int, int]]]
]:
    """Normalised references, normalised hypotheses and per-utterance (C, S, D, I) by model.

    All texts are normalised in one `textnorm_en.py` call (one grammar build instead of one a
    file; each line is normalised on its own, so the lines are the same)."""
    texts = {f"REF::{k}": v for k, v in refs.items()}
    for model, h in hyps.items():
        texts.update({f"{model}::{k}": h.get(k, "") for k in refs})
    _kaldi(work / "all.txt", texts)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # its vendored nemo_text_processing, found beside the script
    subprocess.run(
        [
            sys.executable,
            str(utils / "textnorm_en.py"),
            "--has_key",
            "--to_upper",
            str(work / "all.txt"),
            str(work / "all.norm.txt"),
        ],
        cwd=utils,
        env=env,
        check=True,
        capture_output=True,
    )
    norm = _read_norm(work / "all.norm.txt")
    ref_norm = {k: norm[f"REF::{k}"] for k in refs}
    (work / "ref.txt").write_text(
        "".join(f"{k}\t{v}\n" for k, v in ref_norm.items()), encoding="utf-8"
    )
    hyp_norm: dict[str, dict[str, str]] = {}
    counts: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    for model in hyps:
        hyp_norm[model] = {k: norm[f"{model}::{k}"] for k in refs}
        # benchmark.sh: grep -v $'\t$' drops the utterances whose hypothesis is empty
        kept = {k: v for k, v in hyp_norm[model].items() if v.strip()}
        rec = work / f"{model}.rec_non_empty.txt"
        rec.write_text("".join(f"{k}\t{v}\n" for k, v in kept.items()), encoding="utf-8")
        details = work / f"{model}.DETAILS.txt"
        subprocess.run(
            [
                sys.executable,
                str(utils / "error_rate_en"),
                "--tokenizer",
                "whitespace",
                "--ref",
                str(work / "ref.txt"),
                "--hyp",
                str(rec),
                str(details),
            ],
            cwd=utils,
            env=env,
            check=True,
            capture_output=True,
        )
        counts[model] = {}
        for line in details.read_text(encoding="utf-8").splitlines():
            m = _DETAIL.match(line)
            if m:
                counts[model][m["uid"]] = (int(m["c"]), int(m["s"]), int(m["d"]), int(m["i"]))
    return ref_norm, hyp_norm, counts


def _interjections(utils: Path) -> set[str]:
    words = set()
    for line in (utils / "interjections_en.csv").read_text(encoding="utf-8").splitlines():
        words.update(w.strip().lower() for w in line.split(",") if w.strip())
    return words


def compare(
    refs: dict[str, str],
    hyp: dict[str, str],
    theirs: dict[str, tuple],
    ref_norm: dict[str, str],
    hyp_norm: dict[str, str],
    ours,
    itj: set[str],
) -> dict:
    """Per-cause differences between their per-utterance counts and our ScoreResult."""
    from scoring.normalize.nsw import NEEDS_NSW

    causes: dict[str, list] = {c: [] for c in CAUSES}
    same = 0
    for u in ours.utterances:
        mine = (u.cor, u.sub, u.dele, u.ins)
        their = theirs.get(u.id)
        if their == mine:
            same += 1
            continue
        sc_ref = ref_norm[u.id].lower().split()
        sc_hyp = hyp_norm[u.id].lower().split()
        if their is None:
            cause = "dropped" if sc_ref else "empty reference"
            causes.setdefault(cause, [])
        elif sc_ref != u.ref or sc_hyp != _written(u):
            raw = refs[u.id] + " " + (hyp.get(u.id) or "")
            if NEEDS_NSW.search(raw):
                cause = "nsw"
            elif [w for w in sc_ref if w not in itj] == [w for w in u.ref if w not in itj] and [
                w for w in sc_hyp if w not in itj
            ] == [w for w in _written(u) if w not in itj]:
                cause = "itj"
            else:
                cause = "text"
        elif sum(their[1:]) != u.errors:
            cause = "dae"
        else:
            cause = "split"
        their_errors = sum(their[1:]) if their is not None else 0
        causes[cause].append(
            {
                "id": u.id,
                "theirs": their,
                "ours": mine,
                "delta_errors": u.errors - their_errors,
                "their_ref": " ".join(sc_ref),
                "their_hyp": " ".join(sc_hyp),
                "our_ref": " ".join(u.ref),
                "our_hyp": " ".join(u.hyp),
            }
        )
    return {"same": same, "causes": causes}


def _written(u) -> list[str]:
    """Our normalised hypothesis as written (before DAE chose other forms)."""
    words = list(u.hyp)
    for start, end, _chosen, written in sorted(u.alternatives, reverse=True):
        words[start:end] = written.split()
    return words


def corpus_rates(counts: dict[str, tuple[int, int, int, int]]) -> dict:
    c, s, d, i = (sum(x[k] for x in counts.values()) for k in range(4))
    n_ref, n_hyp = c + s + d, c + s + i
    return {
        "utterances": len(counts),
        "n_ref": n_ref,
        "errors": s + d + i,
        "ter": (s + d + i) / n_ref if n_ref else None,
        "mter": (s + d + i) / max(n_ref, n_hyp) if n_ref else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--speechcolab",
        type=Path,
        required=True,
        help="a SpeechColab/Leaderboard checkout, or its git directory",
    )
    ap.add_argument(
        "--ref",
        type=Path,
        required=True,
        help="references (tsv with a TEXT column, kaldi, trn or jsonl)",
    )
    ap.add_argument(
        "--hyp",
        action="append",
        required=True,
        metavar="NAME=FILE",
        help="a hypothesis file, repeatable",
    )
    ap.add_argument("--json", type=Path, help="also write everything as JSON here")
    ap.add_argument("--show", type=int, default=3, help="utterances listed a cause")
    args = ap.parse_args()

    from asrbench.settings import settings
    from scoring import Scorer, ScorerConfig, read_transcripts

    refs = read_transcripts(args.ref)
    hyps = {}
    for spec in args.hyp:
        name, _, path = spec.partition("=")
        hyps[name] = read_transcripts(Path(path))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        utils = speechcolab_utils(args.speechcolab.resolve(), Path(tmp))
        ref_norm, hyp_norm, theirs = run_speechcolab(utils, refs, hyps, Path(tmp))
        itj = _interjections(utils)
    t_theirs = time.perf_counter() - t0
    scorer = Scorer(ScorerConfig(cache_dir=str(settings().cache)))
    report = {
        "speechcolab_commit": speechcolab_commit(args.speechcolab.resolve()),
        "ref": str(args.ref),
        "utterances": len(refs),
        "speechcolab_seconds": round(t_theirs, 1),
        "models": {},
    }
    for name, hyp in hyps.items():
        ours = scorer.score(refs, hyp)
        diff = compare(refs, hyp, theirs[name], ref_norm, hyp_norm[name], ours, itj)
        m = ours.metrics
        report["models"][name] = {
            "speechcolab": corpus_rates(theirs[name]),
            "ours": {
                "utterances": m.n_utts,
                "n_ref": m.n_ref,
                "errors": m.errors,
                "ter": m.ter,
                "mter": m.mter,
                "mter_utt": m.mter_utt,
            },
            "same_counts": diff["same"],
            "causes": {c: v for c, v in diff["causes"].items() if v},
        }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(
        f"SpeechColab Leaderboard {report['speechcolab_commit']} against asrbench on "
        f"{args.ref} ({len(refs)} utterances); their pipeline {t_theirs:.0f} s"
    )
    for name, r in report["models"].items():
        sc, us = r["speechcolab"], r["ours"]
        print(f"\n{name}: same C/S/D/I on {r['same_counts']} of {len(refs)} utterances")
        print(
            f"  SpeechColab: {sc['utterances']} utterances scored, |ref| {sc['n_ref']}, "
            f"errors {sc['errors']}, TER {100 * sc['ter']:.2f}, mTER {100 * sc['mter']:.2f}"
        )
        print(
            f"  ours:        {us['utterances']} utterances scored, |ref| {us['n_ref']}, "
            f"errors {us['errors']}, TER {100 * us['ter']:.2f}, mTER {100 * us['mter']:.2f} "
            f"(mTER_utt {100 * us['mter_utt']:.2f})"
        )
        print(f"  TER difference {100 * (us['ter'] - sc['ter']):+.2f} points")
        print("  cause        utts  errors (ours - theirs)")
        for cause, items in r["causes"].items():
            delta = sum(x["delta_errors"] for x in items)
            print(f"  {cause:<12} {len(items):>4}  {delta:>+6}")
            for x in items[: args.show]:
                print(f"      {x['id']}: theirs C/S/D/I {x['theirs']}, ours {x['ours']}")
                for side in ("ref", "hyp"):
                    if x[f"their_{side}"] != x[f"our_{side}"]:
                        print(f"        {side.upper()} theirs: {x[f'their_{side}']}")
                        print(f"        {side.upper()} ours:   {x[f'our_{side}']}")
    counter = collections.Counter(c for r in report["models"].values() for c in r["causes"])
    print(f"\ncauses seen: {dict(counter)}")


if __name__ == "__main__":
    main()
