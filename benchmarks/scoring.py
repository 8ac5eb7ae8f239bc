"""Scorer benchmark on one seeded corpus, everything measured in the same run.

1. Whole processes (what a user waits for): `ops/score REF HYP` with its default outputs
   (summary.json, utterances.jsonl, hyp.sys, table.txt), with `--reports none` (summary.json
   and utterances.jsonl only) and with `--reports all`, against a minimal jiwer process that
   reads the same two TSV files and runs `jiwer.process_words`. Each repeat runs every command
   once, in a rotating order. The headline (`headline`) is the best of the repeats (3 by
   default) of each process and the ratio of those bests, `ops/score` (default outputs) over
   the jiwer process, wall and CPU; medians and the median of the per-repeat ratios beside it.
2. In one process: jiwer's `process_words` against our full scorer (pipeline, DAE, alignment,
   bootstrap CIs), the FST engine for every DAE hypothesis, the report texts, start-up costs.
3. NSW throughput cold (nemo) and warm (result cache).

    .venv/bin/python benchmarks/scoring.py [--utts 20000] [--repeats 3] [--nsw 200]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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
ALT_FILE = ROOT / "scoring" / "data" / "alternatives_en.txt"
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
# The baseline process: read both TSV files, score with jiwer, print the WER. Kept to what
# jiwer needs, so the comparison is with the cheapest reasonable whole-process WER.
JIWER_PROCESS = """
import sys
import jiwer

def read(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, _, text = line.rstrip("\\n").partition("\\t")
            out[key] = text
    return out

refs, hyps = read(sys.argv[1]), read(sys.argv[2])
keys = list(refs)
print(jiwer.process_words([refs[k] for k in keys], [hyps.get(k, "") for k in keys]).wer)
"""


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


def _write_tsv(path: Path, texts: dict[str, str]) -> None:
    path.write_text("".join(f"{k}\t{v}\n" for k, v in texts.items()), encoding="utf-8")


def _timed(
    cmd: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system, the process and its children) and stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, proc.stdout


def whole_processes(
    ref: Path, hyp: Path, out: Path, repeats: int, pycache: Path | None, other: Path | None = None
) -> dict:
    """Whole processes, each command once per repeat, in a rotating order.

    Wall time is what a user waits for; CPU time (user + system) is reported beside it because
    on a shared machine it moves much less with other jobs' load than wall time does. With
    `pycache`, both processes keep compiled bytecode there (as an installed package does),
    even where PYTHONDONTWRITEBYTECODE is set; the warm-up run fills it.
    """
    env = dict(os.environ)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    score = [str(ROOT / "ops" / "score"), str(ref), str(hyp), "-o"]
    commands = {
        "jiwer_process": [sys.executable, "-c", JIWER_PROCESS, str(ref), str(hyp)],
        "ops_score_default": score + [str(out / "default")],
        "ops_score_reports_none": score + [str(out / "none"), "--reports", "none"],
        "ops_score_reports_all": score + [str(out / "all"), "--reports", "all"],
    }
    # each runs in its own checkout (`python -m` imports from the working directory first)
    cwd = {name: ROOT for name in commands}
    if other is not None:  # another checkout's ops/score (e.g. before a change), its defaults
        commands["ops_score_other_checkout"] = [
            str(other / "ops" / "score"),
            str(ref),
            str(hyp),
            "-o",
            str(out / "other"),
        ]
        cwd["ops_score_other_checkout"] = other.resolve()
    for name, cmd in commands.items():  # warm the page, bytecode and NSW result caches once
        _timed(cmd, env, cwd[name])
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for rep in range(repeats):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            w, c, _ = _timed(commands[name], env, cwd[name])
            wall[name].append(w)
            cpu[name].append(c)
    report: dict = {"repeats": repeats, "bytecode_cache": pycache is not None}
    for kind, times in (("wall", wall), ("cpu", cpu)):
        base = times["jiwer_process"]
        for name, ts in times.items():
            report[f"{name}_{kind}_best_s"] = round(min(ts), 3)
            if name != "jiwer_process":
                short = name.removeprefix("ops_score_")
                # best of the repeats of each: the least disturbed run of either process
                report[f"ratio_best_{short}_{kind}"] = round(min(ts) / min(base), 2)
            report[f"{name}_{kind}_median_s"] = round(statistics.median(ts), 3)
            report[f"{name}_{kind}_s"] = [round(t, 3) for t in ts]
            if name == "jiwer_process":
                continue
            short = name.removeprefix("ops_score_")
            # per repeat (the two ran within seconds of each other), then the median
            ratios = [t / b for t, b in zip(ts, base, strict=True)]
            report[f"ratio_{short}_{kind}"] = round(statistics.median(ratios), 2)
            report[f"ratios_{short}_{kind}"] = [round(r, 2) for r in ratios]
            report[f"ratio_of_medians_{short}_{kind}"] = round(
                statistics.median(ts) / statistics.median(base), 2
            )
    report["jiwer_wer"] = round(float(_timed(commands["jiwer_process"])[2]), 5)
    report["files_mb"] = {
        p.name: round(p.stat().st_size / 2**20, 1) for p in sorted((out / "all").iterdir())
    }
    return report


def nsw_throughput(n: int) -> dict:
    """Strings/s through NSW: cold (nemo, empty result cache) then warm (result cache)."""
    from asrbench.settings import settings
    from scoring.normalize import Nsw

    rng = random.Random(1)
    texts = [
        f"Order {rng.randint(2, 9999)} cost ${rng.randint(1, 500)}.{rng.randint(10, 99)} on "
        f"May {rng.randint(1, 28)}, {rng.randint(1950, 2030)}"
        for _ in range(n)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        # grammars cached, results not
        (Path(tmp) / "nemo_tn").symlink_to(settings().cache / "nemo_tn")
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


# NSW's trigger before this round: a digit or one of these symbols (for the cost comparison)
OLD_NSW_TRIGGER = r"[0-9$€£¥%&@#+=/°§½¼¾]"


def nsw_trigger_cost(texts: list[str]) -> dict:
    """What the wider NSW trigger costs: the corpus-wide check (`Nsw.batch` when no string
    needs NSW, the benchmark corpus's case) and the per-string check, old pattern against new,
    and how many of the issue's telephone-prompt strings each sends to nemo."""
    import re

    from scoring.normalize import Nsw
    from scoring.normalize.nsw import NEEDS_NSW

    old = re.compile(OLD_NSW_TRIGGER)
    step = Nsw(Path(tempfile.gettempdir()))  # batch() decides without its cache here
    t0 = time.perf_counter()
    for _ in range(5):
        assert step.batch(texts) == texts
    batch = (time.perf_counter() - t0) / 5
    t0 = time.perf_counter()
    n_new = sum(1 for t in texts if NEEDS_NSW.search(t))
    per_new = time.perf_counter() - t0
    t0 = time.perf_counter()
    n_old = sum(1 for t in texts if old.search(t))
    per_old = time.perf_counter() - t0
    prompts = [
        "Please enter one or more keywords separated by * and then press the pound key.",
        "For more information, visit www.asterisk.org.",
        "A.M.",
        "P.M.",
        "H.323",
        "press * to toggle pause, press # to enter a new dictation filename",
        "Press 1 for AM, 2 for PM.",
        "Mr. Smith will call you back.",
        "the U.S.A.",
        "mail jdoe@example.com now",
        "Thank you for calling.",
        "Goodbye.",
    ]
    return {
        "texts": len(texts),
        "batch_check_s": round(batch, 4),
        "per_string_check_new_s": round(per_new, 4),
        "per_string_check_old_s": round(per_old, 4),
        "sent_to_nemo_new": n_new,
        "sent_to_nemo_old": n_old,
        "prompts": len(prompts),
        "prompts_sent_new": sum(1 for t in prompts if NEEDS_NSW.search(t)),
        "prompts_sent_old": sum(1 for t in prompts if old.search(t)),
    }


def in_process(refs: dict[str, str], hyps: dict[str, str]) -> dict:
    """jiwer's process_words and our scorer in this process, plus report texts and start-up."""
    import jiwer

    from asrbench.settings import settings
    from scoring import Scorer, ScorerConfig
    from scoring.report import layout_texts

    probe = "import time; t = time.perf_counter(); import scoring; print(time.perf_counter() - t)"
    t_import = float(_timed([sys.executable, "-c", probe])[2])
    t0 = time.perf_counter()
    out = jiwer.process_words(list(refs.values()), [hyps[k] for k in refs])
    t_jiwer = time.perf_counter() - t0
    t0 = time.perf_counter()
    scorer = Scorer(ScorerConfig(cache_dir=str(settings().cache)))
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = scorer.score(refs, hyps)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    texts = layout_texts(result.utterances)
    t_layout = time.perf_counter() - t0
    # pieces of score() that this round added or changed
    from scoring.stats import bootstrap_metrics, bootstrap_ratios

    errs = [u.errors for u in result.utterances]
    n_ref = [u.n_ref for u in result.utterances]
    n_hyp = [u.n_hyp for u in result.utterances]
    umax = [max(r, h) for r, h in zip(n_ref, n_hyp, strict=True)]
    t0 = time.perf_counter()
    bootstrap_ratios(errs, {"ter": n_ref, "mter_utt": umax}, 1000, 0.95, 0)
    t_boot_two = time.perf_counter() - t0
    t0 = time.perf_counter()
    bootstrap_metrics(errs, n_ref, n_hyp, 1000, 0.95, 0)
    t_boot_three = time.perf_counter() - t0
    ref_toks = [scorer.normalize(refs[k]) for k in refs]
    hyp_toks = [scorer.normalize(hyps[k]) for k in refs]
    t0 = time.perf_counter()
    for h, r in zip(hyp_toks, ref_toks, strict=True):
        scorer.alternatives.split(h, r)
    t_split = time.perf_counter() - t0
    # The same corpus with every DAE hypothesis through the FST engine (no enumeration).
    t0 = time.perf_counter()
    via_fst = Scorer(ScorerConfig(cache_dir=str(settings().cache), max_enum=1)).score(refs, hyps)
    t_fst = time.perf_counter() - t0
    assert via_fst.metrics.errors == result.metrics.errors
    return {
        "jiwer_process_words_s": round(t_jiwer, 3),
        "jiwer_wer": round(out.wer, 5),
        "ours_import_s": round(t_import, 3),
        "ours_startup_s": round(startup, 3),
        "ours_score_s": round(t_ours, 3),
        "ratio_ours_over_jiwer": round((startup + t_ours) / t_jiwer, 2),
        "ours_score_fst_for_all_dae_s": round(t_fst, 3),
        "ours_alignment_and_pra_texts_s": round(t_layout, 3),
        "bootstrap_ter_mter_utt_s": round(t_boot_two, 3),
        "bootstrap_ter_mter_mter_utt_s": round(t_boot_three, 3),
        "dae_split_with_pruning_s": round(t_split, 3),
        "alternative_rules": len(scorer.alternatives),
        "alignment_and_pra_mb": round(sum(len(t) for t in texts.values()) / 2**20, 1),
        "ours_wer": round(result.metrics.ter or 0.0, 5),
        "utts_with_alternatives_used": sum(1 for u in result.utterances if u.alternatives),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--utts", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3, help="whole-process repeats (best of)")
    ap.add_argument("--nsw", type=int, default=200, help="NSW strings (0: skip)")
    ap.add_argument("--skip-in-process", action="store_true")
    ap.add_argument(
        "--compare-with",
        type=Path,
        default=None,
        help="another checkout (e.g. `git archive COMMIT | tar -x -C DIR`): its "
        "ops/score joins the rotation, with its default outputs",
    )
    ap.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="run the processes with the inherited environment as is (where "
        "PYTHONDONTWRITEBYTECODE is set, asrbench compiles from source each run)",
    )
    args = ap.parse_args()
    refs, hyps = corpus(args.utts)
    report: dict = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "utterances": args.utts,
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
    }
    with tempfile.TemporaryDirectory() as tmp:
        ref, hyp = Path(tmp) / "ref.tsv", Path(tmp) / "hyp.tsv"
        _write_tsv(ref, refs)
        _write_tsv(hyp, hyps)
        pycache = None if args.no_bytecode_cache else Path(tmp) / "pycache"
        whole = report["whole_process"] = whole_processes(
            ref, hyp, Path(tmp) / "out", args.repeats, pycache, args.compare_with
        )
    report["headline"] = {
        f"best_of_{args.repeats}_jiwer_process_wall_s": whole["jiwer_process_wall_best_s"],
        f"best_of_{args.repeats}_ops_score_wall_s": whole["ops_score_default_wall_best_s"],
        "ops_score_over_jiwer_wall": whole["ratio_best_default_wall"],
        "ops_score_over_jiwer_cpu": whole["ratio_best_default_cpu"],
    }
    report["load_average_after_processes"] = [round(x, 2) for x in os.getloadavg()]
    if not args.skip_in_process:
        report["in_process"] = in_process(refs, hyps)
        report["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    report["nsw_trigger"] = nsw_trigger_cost(list(dict.fromkeys([*refs.values(), *hyps.values()])))
    if args.nsw:
        report["nsw"] = nsw_throughput(args.nsw)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
