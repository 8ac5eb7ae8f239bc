"""Long-form session scoring: one synthetic 3-hour, 30,000-word two-speaker session, scored by
our cpWER, tcpWER and session WER and by MeetEval's cpWER and tcpWER on the same files, in one
run: time and peak memory of each, and our time over MeetEval's (target: within 2x). Then
the same session as one pair (all words in time order, TSV): `ops/score` (NSW, DAE and the
bootstrap off) beside a jiwer process, and our aligner alone on it: the whole-table long path
(before), the band alone, and the anchored path (now: cut at the anchors, then band/batch).
Last, DAE on a long pair: a pair of `--words` words holding DAE phrases (`dae_pair`), scored by
`ops/score` with DAE on (window by window, scoring/dae_windows.py) beside `--no-dae`.

Each measurement is a fresh subprocess (peak RSS is the process's VmHWM, interpreter and
imports included; `import_s` is the imports alone), repeated `--repeats` times in a rotating
order; the best time of each is reported. Both sides get the same tokens: the words are
generated lower-case without punctuation, and ours runs with NSW and DAE off, so the
normalisation changes nothing. The error counts of each side are printed and must agree.

    .venv/bin/python benchmarks/longform_score.py [--words 30000] [--hours 3] [--repeats 3]
        [--only all|sessions|dae]

`synthetic_corpus` is also the generated corpus of tests/scoring/test_meeteval_parity.py.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.segments import Segment  # noqa: E402

WORDS = (
    "the of and to in is was he for it with as his on be at by had not are but from or have "
    "an they which one you were her all she there would their we him been has when who will "
    "more no if out so said what up its about into than them can only other new some could "
    "time these two may then do first any my now such like our over man me even most made "
    "after also did many before must through back years where much your way well down should "
    "because each just those people how too little state good very make world still own see "
    "men work long get here between both life being under never day same another know while "
    "last might us great old year off come since against go came right used take meeting "
    "budget quarter revenue forecast customer product launch schedule review decision"
).split()


def _session(rng: random.Random, sid: str, speakers: list[str], n_words: int, seconds: float):
    """Reference segments of one session: turns of 3-15 words, pauses, some overlap across
    speakers (never a speaker with itself)."""
    rate = n_words / seconds  # words a second, pauses included
    segs: list[Segment] = []
    last_end = dict.fromkeys(speakers, 0.0)
    t, done, who = 0.5, 0, speakers[0]
    while done < n_words:
        n = min(rng.randint(3, 15), n_words - done)
        if len(speakers) > 1 and rng.random() < 0.8:
            who = rng.choice([s for s in speakers if s != who])
        start = round(max(t, last_end[who] + 0.05), 2)
        end = round(start + n / rate * rng.uniform(0.7, 0.9), 2)
        words = " ".join(rng.choice(WORDS) for _ in range(n))
        segs.append(Segment(sid, who, start, end, words))
        last_end[who] = end
        done += n
        # the next turn: after a pause, or overlapping this one (another speaker)
        t = end + rng.uniform(-0.3 * (end - start), 0.6)
    return segs


def _hypothesis(rng: random.Random, ref: list[Segment], names: dict[str, str], err: float):
    """A system's output: word errors at rate `err` (substitutions, deletions, insertions),
    speakers renamed, a few segments given the wrong speaker, times jittered."""
    out: list[Segment] = []
    others = sorted(set(names.values()))
    for seg in ref:
        words: list[str] = []
        for w in seg.words.split():
            x = rng.random()
            if x < err * 0.5:
                words.append(rng.choice(WORDS))
            elif x < err * 0.8:
                continue
            else:
                words.append(w)
            if rng.random() < err * 0.2:
                words.append(rng.choice(WORDS))
        spk = names[seg.speaker]
        if len(others) > 1 and rng.random() < 0.03:
            spk = rng.choice([s for s in others if s != spk])
        shift = rng.uniform(-0.3, 0.3)
        start = round(max(0.0, seg.start_time + shift), 2)
        end = round(max(start, seg.end_time + shift + rng.uniform(-0.2, 0.2)), 2)
        out.append(Segment(seg.session_id, spk, start, end, " ".join(words)))
    return out


def synthetic_corpus(
    seed: int = 0,
    sessions: int = 6,
    speakers: tuple[int, ...] = (2, 3, 4),
    words: int = 400,
    seconds: float = 160.0,
    err: float = 0.15,
) -> tuple[list[Segment], list[Segment]]:
    """Seeded multi-speaker sessions with overlaps: (reference, hypothesis) segments. Some
    sessions get an extra hypothesis speaker (false alarm) or lose one (missed)."""
    rng = random.Random(seed)
    refs: list[Segment] = []
    hyps: list[Segment] = []
    for s in range(sessions):
        n_spk = speakers[s % len(speakers)]
        sid = f"sess{s:02d}"
        spk = [f"{sid}_spk{i}" for i in range(n_spk)]
        ref = _session(rng, sid, spk, words, seconds)
        names = {x: f"sys{i}" for i, x in enumerate(rng.sample(spk, n_spk))}
        if s % 3 == 1:  # a missed speaker: the system merges two into one label
            names[spk[-1]] = names[spk[0]]
        hyp = _hypothesis(rng, ref, names, err)
        if s % 3 == 2:  # a false-alarm speaker: a few words under a new label
            t = ref[-1].end_time + 1
            hyp.append(Segment(sid, "sys_extra", t, t + 2, "and so on"))
        refs += ref
        hyps += hyp
    return refs, _sorted_per_speaker(hyps)


def _sorted_per_speaker(segs: list[Segment]) -> list[Segment]:
    """Merging two speakers' labels can make one label overlap itself: shift such segments
    after the previous one (a system's output never overlaps itself either)."""
    last: dict[tuple[str, str], float] = {}
    out = []
    for seg in sorted(segs, key=lambda s: (s.session_id, s.start_time)):
        key = (seg.session_id, seg.speaker)
        start = max(seg.start_time, round(last.get(key, 0.0) + 0.01, 2))
        end = max(seg.end_time, start)
        out.append(Segment(seg.session_id, seg.speaker, start, end, seg.words))
        last[key] = end
    return out


def write_seglst(path: Path, segs: list[Segment]) -> None:
    path.write_text(json.dumps([s.to_seglst() for s in segs]))


OURS = """
import json, sys, time
t0 = time.perf_counter()
from scoring import Scorer, ScorerConfig
from scoring.meeting import score_sessions
from scoring.timed import read_seglst
imported = time.perf_counter() - t0
ref, hyp, metric = sys.argv[1:4]
scorer = Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=1000))
res = score_sessions(scorer, read_seglst(ref), read_seglst(hyp), metric, collar=5.0)
d = {"errors": res.total("errors"), "n_ref": res.total("n_ref")}
"""
MEETEVAL = """
import json, sys, time
t0 = time.perf_counter()
import meeteval
from meeteval.io import SegLST
imported = time.perf_counter() - t0
ref, hyp, metric = sys.argv[1:4]
# json + SegLST(...), floats: SegLST.load parses times as Decimal through simplejson, which
# meeteval does not declare (not installed here)
r, h = (SegLST(json.load(open(p))) for p in (ref, hyp))
if metric == "cpwer":
    out = meeteval.wer.cpwer(r, h)
else:
    out = meeteval.wer.tcpwer(r, h, collar=5.0)
er = sum(out.values())
d = {"errors": er.errors, "n_ref": er.length}
"""
TAIL = """
import json
seconds = time.perf_counter() - t0
peak = 0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        peak = int(line.split()[1]) / 1024
peak = max(peak, globals().get("peak_child", 0))
print(json.dumps({"errors": d["errors"], "n_ref": d["n_ref"], "seconds": round(seconds, 3),
                  "import_s": round(imported, 3), "peak_mb": round(peak, 1)}))
"""


# One pair, as the issue measured it: the whole session as one utterance in TSV files.
OPS_SCORE = """
import os, subprocess, sys, time
t0 = time.perf_counter()
dae = [] if sys.argv[3] == "dae" else ["--no-dae"]
proc = subprocess.run([os.path.join(sys.argv[4], "ops", "score"), sys.argv[1], sys.argv[2],
                       "--no-nsw", *dae, "--bootstrap", "0", "--reports", "none",
                       "-o", sys.argv[5]], capture_output=True, text=True, check=True)
imported = 0.0
peak_child = 0
import resource
peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
m = [l for l in proc.stdout.splitlines() if l.startswith("C ")][0].split()
d = {"errors": int(m[-1]), "n_ref": -1}
"""
JIWER = """
import sys, time
t0 = time.perf_counter()
import jiwer
imported = time.perf_counter() - t0
read = lambda p: open(p).read().split("\\t", 1)[1].strip()
out = jiwer.process_words(read(sys.argv[1]), read(sys.argv[2]))
e = out.substitutions + out.deletions + out.insertions
d = {"errors": e, "n_ref": -1}
"""
# The aligner alone, in one process: the whole-table long path (before), the band alone, and
# the anchored path (now).
ALIGNERS = """
import sys, time
t0 = time.perf_counter()
import numpy as np
from scoring import align
imported = time.perf_counter() - t0
ids = {}
get = lambda p: np.array([ids.setdefault(w, 6 + len(ids))
                          for w in open(p).read().split("\\t", 1)[1].split()])
r, h = get(sys.argv[1]), get(sys.argv[2])
k = max(len(r), len(h)) + 2
mode = sys.argv[3]
if mode == "whole":  # the long path before this change: the whole table, row by row
    ops = align._align_long(r, h, k, None, None)[0]
elif mode == "band":  # the band alone
    ops = align._align_band(r, h, k, None)[0]
else:  # now: cut at the anchors, pieces batched or banded
    ops = align._align_anchored(r, h, k)[0]
e = len(ops) - ops.count("C")
d = {"errors": e, "n_ref": len(r)}
"""


# DAE on a long pair (scoring/dae_windows.py): equivalent forms on both sides, the system
# writing the other form of half of them (DAE takes them back), so the hypothesis holds
# thousands of slots, far more than the FST's exact float32 weights allow for one pair.
PAIRS = [
    ("i am", "i'm"), ("going to", "gonna"), ("we are", "we're"), ("it is", "it's"),
    ("ok", "okay"), ("that is", "that's"), ("do not", "don't"), ("we will", "we'll"),
    ("let us", "let's"), ("they are", "they're"), ("want to", "wanna"), ("you are", "you're"),
]  # fmt: skip


def dae_pair(seed: int, n_words: int, err: float = 0.15) -> tuple[str, str]:
    """(reference, hypothesis) texts: plain words and DAE phrases (a fifth of the chunks),
    word errors at rate `err`, half the phrases written in their other form."""
    rng = random.Random(seed)
    partner = {a: b for pair in PAIRS for a, b in (pair, pair[::-1])}
    phrases = sorted(partner)
    ref: list[str] = []
    hyp: list[str] = []
    while sum(x.count(" ") + 1 for x in ref) < n_words:
        chunk = rng.choice(phrases) if rng.random() < 0.2 else rng.choice(WORDS)
        ref.append(chunk)
        x = rng.random()
        if x < err * 0.5:
            hyp.append(rng.choice(WORDS))
        elif x < err * 0.8:
            continue
        elif x < err:
            hyp += [chunk, rng.choice(WORDS)]
        else:
            hyp.append(partner[chunk] if chunk in partner and rng.random() < 0.5 else chunk)
    return " ".join(ref), " ".join(hyp)


def _dae_facts(ref_path: Path, hyp_path: Path) -> str:
    """How many DAE slots the hypothesis holds, and whether the FST could take it whole."""
    from scoring import Scorer, ScorerConfig
    from scoring.align import check_exact

    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    ref, hyp = (scorer.normalize(p.read_text().split("\t", 1)[1]) for p in (ref_path, hyp_path))
    assert scorer.alternatives is not None
    found = scorer.alternatives.split(hyp, ref)
    slots = found[1] if found else []
    exact = check_exact(max(len(ref), len(hyp)) + 2, len(ref), len(hyp))
    return (
        f"DAE pair: {len(ref)} reference, {len(hyp)} hypothesis words, {len(slots)} DAE slots "
        f"({sum(len(x.forms) > 1 for x in slots)} with alternatives); whole-pair FST weights "
        f"exact: {exact} (before scoring/dae_windows.py: refused, 'split it, or pass dae=False')"
    )


def _run(code: str, ref: Path, hyp: Path, metric: str, *extra: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code + TAIL, str(ref), str(hyp), metric, *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--words", type=int, default=30_000, help="reference words of the session")
    ap.add_argument("--hours", type=float, default=3.0, help="length of the session")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each measurement")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--only",
        choices=("all", "sessions", "dae"),
        default="all",
        help="sessions: cpWER/tcpWER/WER and the one-pair aligners; dae: ops/score with DAE on "
        "a pair of --words words holding DAE phrases, beside --no-dae on it",
    )
    args = ap.parse_args()
    refs, hyps = synthetic_corpus(
        args.seed, sessions=1, speakers=(2,), words=args.words, seconds=args.hours * 3600
    )
    runs = [
        ("ours", "cpwer", OURS, ()),
        ("meeteval", "cpwer", MEETEVAL, ()),
        ("ours", "tcpwer", OURS, ()),
        ("meeteval", "tcpwer", MEETEVAL, ()),
        ("ours", "wer", OURS, ()),
        ("ops/score", "pair", OPS_SCORE, ()),
        ("jiwer", "pair", JIWER, ()),
        ("align anchored", "pair", ALIGNERS, ()),
        ("align band", "pair", ALIGNERS, ()),
        ("align whole", "pair", ALIGNERS, ()),
        ("ops/score", "dae", OPS_SCORE, ()),
        ("ops/score", "no-dae", OPS_SCORE, ()),
    ]
    if args.only != "all":
        runs = [r for r in runs if (r[1] in ("dae", "no-dae")) == (args.only == "dae")]
    best: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        dae = Path(tmp, "dae_ref.tsv"), Path(tmp, "dae_hyp.tsv")
        for path, text in zip(dae, dae_pair(args.seed, args.words), strict=True):
            path.write_text(f"session\t{text}\n")
        ref, hyp = Path(tmp, "ref.seglst.json"), Path(tmp, "hyp.seglst.json")
        write_seglst(ref, refs)
        write_seglst(hyp, hyps)
        pair = Path(tmp, "ref.tsv"), Path(tmp, "hyp.tsv")
        for path, segs in zip(pair, (refs, hyps), strict=True):
            words = " ".join(x.words for x in sorted(segs, key=lambda x: x.start_time))
            path.write_text(f"session\t{words}\n")
        for rep in range(args.repeats):
            order = runs[rep % len(runs) :] + runs[: rep % len(runs)]
            for who, metric, code, _ in order:
                files = {"pair": pair, "dae": dae, "no-dae": dae}.get(metric, (ref, hyp))
                mode = who.split()[-1] if who.startswith("align") else metric
                got = _run(code, *files, mode, str(ROOT), str(Path(tmp, "out")))
                key = (who, metric)
                if key not in best or got["seconds"] < best[key]["seconds"]:
                    best[key] = got
        facts = _dae_facts(*dae) if args.only != "sessions" else ""
    _print(args, best)
    if facts:
        print(facts)


def _print(args: argparse.Namespace, best: dict[tuple[str, str], dict]) -> None:
    if args.only == "dae":
        print(f"DAE pair: {args.words} reference words, seed {args.seed}")
    else:
        print(
            f"session: {args.words} reference words, {args.hours} h, 2 speakers, seed {args.seed}"
        )
    head = ("metric", "scorer", "errors", "n_ref", "s", "import s", "peak MB")
    print("{:7} {:12} {:>7} {:>7} {:>7} {:>9} {:>8}".format(*head))
    for (who, metric), got in best.items():
        print(
            f"{metric:7} {who:12} {got['errors']:7d} {got['n_ref']:7d} {got['seconds']:7.2f} "
            f"{got['import_s']:9.2f} {got['peak_mb']:8.0f}"
        )
    if args.only == "dae":
        return
    for metric in ("cpwer", "tcpwer"):
        a, b = best["ours", metric], best["meeteval", metric]
        same = (a["errors"], a["n_ref"]) == (b["errors"], b["n_ref"])
        print(
            f"{metric}: ours/meeteval time {a['seconds'] / b['seconds']:.2f}x, "
            f"memory {a['peak_mb'] / b['peak_mb']:.2f}x, counts {'equal' if same else 'DIFFER'}"
        )
    a, b = best["ops/score", "pair"], best["jiwer", "pair"]
    print(f"one pair: ops/score/jiwer time {a['seconds'] / b['seconds']:.2f}x")
    a, b, c = (best[x, "pair"] for x in ("align anchored", "align band", "align whole"))
    print(
        f"one pair, aligner alone: anchored/whole-table time {a['seconds'] / c['seconds']:.2f}x"
        f", band/whole-table {b['seconds'] / c['seconds']:.2f}x"
    )


if __name__ == "__main__":
    main()
