"""Meetings at scale, side by side as whole processes in one run (issue 43, item 2).

Rows: one 3-speaker session of 30,000 and one of 100,000 reference words. Each row runs, as
separate whole processes, MeetEval's cpWER and tcpWER (the anchor, `meeteval.wer.cpwer` /
`tcpwer` with a 5 s collar on the SegLST files), and `ops/score --metric cpwer|tcpwer` with its
default steps (DAE on) and with `--preset raw` (every step off: its error count must equal
MeetEval's). For each process: wall seconds, CPU seconds (user + system) and peak RSS (its own,
from wait4), best of the repeats, the ratios over MeetEval, and the error counts.

The texts are `benchmarks/scoring.py`'s seeded corpus (common words, ~10% word errors, 30% of
utterances with a phrase only DAE reconciles): each utterance is one segment of a speaker
drawn at random, 0.4 s a word, one after another; the hypothesis keeps the segment's times and
names the speakers differently (so the assignment has work to do). No network.

    .venv/bin/python benchmarks/meeting_scale.py [--words 30000,100000] [--repeats 2]
        [--metrics cpwer,tcpwer] [--ref-segment-words N]

ORC-WER (`--metrics orcwer`, MeetEval's `orcwer` the anchor) needs small sessions: its table
has a state per combination of the three streams' positions (`--words 200,300` is 10^7 to
10^8 cells; `ops/score` refuses beyond 2 x 10^8, scoring.meeting.ORC_MAX_CELLS).

Time-constrained ORC-WER (`--metrics tcorcwer`, MeetEval's `tcorcwer` with a 5 s collar the
anchor) scores long sessions of many streams: `--speakers 6 --overlap 0.2 --words 90000` is 6
streams of 15,000 words, each turn starting before the one before ends (a fifth of it). The
anchor runs under a memory limit and a time limit (`--anchor-memory-gb`, `--anchor-timeout`,
through `prlimit --as` and `timeout`), so that a MeetEval run out of memory or time is recorded
(`failed`) instead of taking the machine down.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.segments import Segment  # noqa: E402


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
corpus, run_process = _scale.corpus, _scale.run_process

SPEAKERS = ("A", "B", "C")
HYP_NAMES = {"A": "spk2", "B": "spk0", "C": "spk1"}


def _speakers(n: int) -> dict[str, str]:
    """n reference speakers and their hypothesis names (the 3-speaker default's, else renamed
    in reverse order so the assignment has work to do)."""
    if n == len(SPEAKERS):
        return HYP_NAMES
    names = [chr(ord("A") + i) for i in range(n)]
    return {x: f"spk{n - 1 - i}" for i, x in enumerate(names)}


MEETEVAL = """
import json, sys
import meeteval
from meeteval.io import SegLST
ref, hyp, metric = sys.argv[1:4]
# json + SegLST(...), floats: SegLST.load parses times as Decimal through simplejson, which
# meeteval does not declare
r, h = (SegLST(json.load(open(p))) for p in (ref, hyp))
if metric == "cpwer":
    out = meeteval.wer.cpwer(r, h)
elif metric == "orcwer":
    out = meeteval.wer.orcwer(r, h)
elif metric == "tcorcwer":
    out = meeteval.wer.tcorcwer(r, h, collar=5.0)
else:
    out = meeteval.wer.tcpwer(r, h, collar=5.0)
er = sum(out.values())
print(json.dumps({"errors": er.errors, "n_ref": er.length}))
"""


def session(
    words: int, seed: int = 0, piece: int = 0, speakers: int = 3, overlap: float = 0.0
) -> tuple[list[Segment], list[Segment]]:
    """One session of about `words` reference words (never fewer), `speakers` speakers;
    `piece`: each reference segment cut into segments of at most that many words (0: whole),
    0.4 s a word; `overlap`: the fraction of a turn the next one starts before it ends (0:
    one after another; a speaker's own turns never overlap)."""
    refs, hyps = corpus(words // 10 + 1, seed)
    rng = random.Random(seed)
    hyp_names = _speakers(speakers)
    spk_list = tuple(hyp_names)
    ref_segs: list[Segment] = []
    hyp_segs: list[Segment] = []
    t, done = 0.0, 0
    free = dict.fromkeys(spk_list, 0.0)  # when each speaker's last turn ended
    for key, text in refs.items():
        spk = rng.choice(spk_list)
        n = len(text.split())
        turn = t
        t = max(t, free[spk])
        end = t + 0.4 * n
        words_of = text.split()
        step = piece or max(1, len(words_of))  # 0: the segment whole, as before
        for i in range(0, max(1, len(words_of)), step):
            a, b = t + 0.4 * i, t + 0.4 * min(len(words_of), i + step)
            ref_segs.append(
                Segment("s1", spk, round(a, 2), round(b, 2), " ".join(words_of[i : i + step]))
            )
        if hyps[key]:
            hyp_segs.append(Segment("s1", hyp_names[spk], round(t, 2), round(end, 2), hyps[key]))
        free[spk] = end
        t = end + 0.3 if not overlap else turn + (1 - overlap) * 0.4 * n + 0.3
        done += n
        if done >= words:
            break
    return ref_segs, hyp_segs


def _write(path: Path, segs: list[Segment]) -> None:
    path.write_text(json.dumps([s.to_seglst() for s in segs]))


def _ours_errors(out: Path) -> int:
    metrics = json.loads((out / "summary.json").read_text())["metrics"]
    return int(metrics["errors"])


class Shape(NamedTuple):
    """A session's shape beside its size: reference segments cut into pieces of at most
    `piece` words (0: whole), its speakers, how much a turn overlaps the one before, and the
    anchor's limits (bytes of address space, seconds)."""

    piece: int = 0
    speakers: int = 3
    overlap: float = 0.0
    anchor_limits: tuple[int, int] = (16 << 30, 1800)


def _run_anchor(cmd: list[str], env: dict, limits: tuple[int, int]):
    """The anchor's process under `prlimit --as` and `timeout` (its CPU time and peak RSS
    include the child `timeout` waits for); a failure is returned as its reason, not raised."""
    as_bytes, seconds = limits
    wrapped = ["prlimit", f"--as={as_bytes}", "timeout", str(seconds), *cmd]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(wrapped, cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    cpu, rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    if code != 0:
        why = "timed out" if code == 124 else f"exit {code}: {stderr.strip()[-300:]}"
        return f"{why} after {wall:.0f} s wall, {cpu:.1f} CPU s, peak {rss:.0f} MB"
    return wall, cpu, rss, stdout


def _best(rs: list) -> dict:
    return {
        "wall_best_s": round(min(r[0] for r in rs), 3),
        "cpu_best_s": round(min(r[1] for r in rs), 3),
        "peak_rss_mb": round(max(r[2] for r in rs), 1),
        "cpu_s": [round(r[1], 3) for r in rs],
    }


def _measure(commands: dict, env: dict, repeats: int, limits: tuple[int, int]) -> dict:
    """Every process once per repeat in a rotating order (the anchor limited, and dropped from
    later repeats once it failed); bests."""
    runs: dict[str, list] = {n: [] for n in commands}
    failed: str | None = None
    names = list(commands)
    for rep in range(repeats):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            if name != "meeteval":
                runs[name].append(run_process(commands[name], env, ROOT))
            elif failed is None:
                got = _run_anchor(commands[name], env, limits)
                failed = got if isinstance(got, str) else None
                if not isinstance(got, str):
                    runs[name].append(got)
    res: dict = {name: _best(rs) for name, rs in runs.items() if rs}
    if failed is not None:
        res["meeteval"] = {"failed": failed}
    elif runs["meeteval"]:
        res["meeteval"]["errors"] = json.loads(runs["meeteval"][-1][3])["errors"]
    return res


def row(words: int, tmp: Path, repeats: int, metrics: list[str], env: dict, shape: Shape) -> dict:
    """One session, every process once per repeat in a rotating order; bests and ratios."""
    ref_segs, hyp_segs = session(
        words, piece=shape.piece, speakers=shape.speakers, overlap=shape.overlap
    )
    ref, hyp = tmp / "ref.json", tmp / "hyp.json"
    _write(ref, ref_segs)
    _write(hyp, hyp_segs)
    out: dict = {
        "ref_words": sum(len(s.words.split()) for s in ref_segs),
        "ref_segments": len(ref_segs),
        "speakers": shape.speakers,
        "overlap": shape.overlap,
        "metrics": {},
    }
    score = [str(ROOT / "ops" / "score"), str(ref), str(hyp), "--bootstrap", "0"]
    for metric in metrics:
        commands = {
            "meeteval": [sys.executable, "-c", MEETEVAL, str(ref), str(hyp), metric],
            "ops_score_default": score + ["--metric", metric, "-o", str(tmp / "default")],
            "ops_score_raw": score
            + ["--metric", metric, "--preset", "raw", "-o", str(tmp / "raw")],
        }
        run_process(commands["ops_score_default"], env, ROOT)  # NSW's result cache warmed once
        res = _measure(commands, env, repeats, shape.anchor_limits)
        res["ops_score_default"]["errors"] = _ours_errors(tmp / "default")
        res["ops_score_raw"]["errors"] = _ours_errors(tmp / "raw")
        if "errors" in res["meeteval"]:
            equal = res["ops_score_raw"]["errors"] == res["meeteval"]["errors"]
            res["raw_errors_equal_meeteval"] = equal
            for name in list(commands)[1:]:
                res[f"ratio_{name.removeprefix('ops_score_')}_cpu"] = round(
                    res[name]["cpu_best_s"] / res["meeteval"]["cpu_best_s"], 2
                )
        out["metrics"][metric] = res
        print(words, metric, json.dumps(res), file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", default="30000,100000", help="sessions' sizes")
    ap.add_argument("--repeats", type=int, default=2, help="repeats of each process (best of)")
    ap.add_argument("--metrics", default="cpwer,tcpwer")
    ap.add_argument(
        "--ref-segment-words",
        type=int,
        default=0,
        help="cut reference segments into pieces of at most this many words (ORC-WER's memory "
        "grows with the number of segments)",
    )
    ap.add_argument("--speakers", type=int, default=3, help="speakers (and streams) a session")
    ap.add_argument(
        "--overlap", type=float, default=0.0, help="the fraction of a turn the next one overlaps"
    )
    ap.add_argument("--anchor-memory-gb", type=float, default=16.0, help="MeetEval's limit")
    ap.add_argument("--anchor-timeout", type=int, default=1800, help="MeetEval's limit (s)")
    args = ap.parse_args()
    limits = (int(args.anchor_memory_gb * 2**30), args.anchor_timeout)
    shape = Shape(args.ref_segment_words, args.speakers, args.overlap, limits)
    env = dict(os.environ)
    report = _scale.report_header()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        # ops/score keeps compiled bytecode there, as an installed package does
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        for w in (int(x) for x in args.words.split(",") if x):
            (tmp / str(w)).mkdir()
            report["rows"][f"session_{w}"] = row(
                w, tmp / str(w), args.repeats, args.metrics.split(","), env, shape
            )
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
