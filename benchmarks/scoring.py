"""Scorer benchmark: our full scorer (pipeline, DAE, FST + DP alignment, bootstrap CI) against
jiwer's plain `process_words` on the same seeded corpus, in the same run; start-up cost; memory;
NSW throughput cold (nemo) and warm (result cache).

    .venv/bin/python benchmarks/scoring.py [--utts 20000] [--nsw 200]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jiwer  # noqa: E402

from asrbench.settings import settings  # noqa: E402
from scoring import Scorer, ScorerConfig  # noqa: E402
from scoring.normalize import Nsw  # noqa: E402

WORDS = (
    "the of and to in is was he for it with as his on be at by had not are but from or have "
    "an they which one you were her all she there would their we him been has when who will "
    "more no if out so said what up its about into than them can only other new some could "
    "time these two may then do first any my now such like our over man me even most made "
    "after also did many before must through back years where much your way well down should "
    "because each just those people how too little state good very make world still own see "
    "men work long get here between both life being under never day same another know while "
    "last might us great old year off come since against go came right used take"
).split()
# (reference phrase, hypothesis phrase) pairs that only DAE reconciles
ALT_FILE = Path(__file__).resolve().parent.parent / "scoring" / "data" / "alternatives_en.txt"
DAE_PAIRS = [
    ("going to", "gonna"),
    ("i am", "i'm"),
    ("do not", "don't"),
    ("story teller", "storyteller"),
    ("okay", "ok"),
    ("want to", "wanna"),
    ("it is", "it's"),
    ("web site", "website"),
]


def corpus(n: int, seed: int = 0) -> tuple[dict[str, str], dict[str, str]]:
    """n utterances of 5-40 words, ~10% word errors, 30% of hypotheses triggering alternatives."""
    rng = random.Random(seed)
    # Words that occur in no alternative form, so that only the injected phrases (30%) trigger.
    in_rules = {
        w
        for line in ALT_FILE.read_text().splitlines()
        if not line.startswith("#")
        for form in line.split("|")
        for w in form.split()
    }
    words = [w for w in WORDS if w not in in_rules]
    refs, hyps = {}, {}
    for i in range(n):
        ref = rng.choices(words, k=rng.randint(5, 40))
        hyp = []
        for w in ref:
            x = rng.random()
            if x < 0.04:
                hyp.append(rng.choice(words))
            elif x < 0.07:
                continue
            elif x < 0.10:
                hyp += [w, rng.choice(words)]
            else:
                hyp.append(w)
        if rng.random() < 0.3:
            r_ph, h_ph = rng.choice(DAE_PAIRS)
            pos = rng.randint(0, len(ref))
            ref[pos:pos] = r_ph.split()
            hpos = min(pos, len(hyp))
            hyp[hpos:hpos] = h_ph.split()
        refs[f"u{i:06d}"] = " ".join(ref)
        hyps[f"u{i:06d}"] = " ".join(hyp)
    return refs, hyps


def nsw_throughput(n: int) -> dict:
    """Strings/s through NSW: cold (nemo, empty result cache) then warm (result cache)."""
    rng = random.Random(1)
    texts = [
        f"Order {rng.randint(2, 9999)} cost ${rng.randint(1, 500)}.{rng.randint(10, 99)} on "
        f"May {rng.randint(1, 28)}, {rng.randint(1950, 2030)}"
        for _ in range(n)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "nemo_tn").symlink_to(settings().cache / "nemo_tn")  # grammars cached, results not
        t0 = time.perf_counter()
        step = Nsw(Path(tmp))
        step.normalizer()
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        for t in texts:
            step(t)
        step.flush()
        cold = time.perf_counter() - t0
        warm_step = Nsw(Path(tmp))  # a new process would see the same SQLite cache
        t0 = time.perf_counter()
        for t in texts:
            warm_step(t)
        warm = time.perf_counter() - t0
    return {
        "strings": n,
        "grammar_load_s": round(build, 3),
        "cold_per_s": round(n / cold, 1),
        "warm_per_s": round(n / warm, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--utts", type=int, default=20000)
    ap.add_argument("--nsw", type=int, default=200)
    args = ap.parse_args()
    refs, hyps = corpus(args.utts)
    # Import cost of the package (the PUNC class table is built at import), in a fresh process.
    probe = "import time; t = time.perf_counter(); import scoring; print(time.perf_counter() - t)"
    root = Path(__file__).resolve().parent.parent
    t_import = float(
        subprocess.run(
            [sys.executable, "-c", probe], cwd=root, check=True, capture_output=True, text=True
        ).stdout
    )
    t0 = time.perf_counter()
    out = jiwer.process_words(list(refs.values()), [hyps[k] for k in refs])
    t_jiwer = time.perf_counter() - t0
    t0 = time.perf_counter()
    scorer = Scorer(ScorerConfig())
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = scorer.score(refs, hyps)
    t_ours = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        result.write(tmp)
        t_write = time.perf_counter() - t0
    # The same corpus with every DAE hypothesis through the FST engine (no enumeration).
    t0 = time.perf_counter()
    via_fst = Scorer(ScorerConfig(max_enum=1)).score(refs, hyps)
    t_fst = time.perf_counter() - t0
    assert via_fst.summary["errors"] == result.summary["errors"]
    fst_utts = sum(1 for u in result.utterances if u.alternatives)
    report = {
        "utterances": args.utts,
        "jiwer_process_words_s": round(t_jiwer, 3),
        "jiwer_wer": round(out.wer, 5),
        "ours_import_s": round(t_import, 3),
        "ours_startup_s": round(startup, 3),
        "ours_score_s": round(t_ours, 3),
        "ours_total_s": round(startup + t_ours, 3),
        "ratio_ours_over_jiwer": round((startup + t_ours) / t_jiwer, 2),
        "ours_score_fst_for_all_dae_s": round(t_fst, 3),
        "ours_write_reports_s": round(t_write, 3),
        "ours_wer": round(result.summary["ter"], 5),
        "utts_with_alternatives_used": fst_utts,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if args.nsw:
        report["nsw"] = nsw_throughput(args.nsw)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
