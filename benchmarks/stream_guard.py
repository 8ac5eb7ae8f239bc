"""The latency guard under load: a model streamed alone, then beside CPU hogs.

    .venv/bin/python benchmarks/stream_guard.py [--model pocketsphinx_en] [--dataset mini_en]
        [--max-utts 4] [--hogs 0 2] [--runner local|docker] [--speed 1] [--json out.json]

For each `--hogs` count H, starts H busy processes (a Python loop each, stopped after the run),
then runs what `ops/stream` runs (`asrbench.streaming.run.stream_cell`) on the seeded sample
of `--max-utts` utterances into a temporary results root, and prints one row: end of speech
-> final (mean), RTF under pacing, the feed's send lateness p90, the median backlog growth, the
load average at start and end, the program's cores (local runner), the share of its runnable
time it waited for a CPU (schedstat) and the guard's verdict with
the rules that fired (docs/STREAMING.md, "Latency guard"). The load average is the machine's,
other work included: say what else ran when quoting a row.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.streaming.run import StreamSpec, stream_cell


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="pocketsphinx_en")
    ap.add_argument("--dataset", default="mini_en")
    ap.add_argument("--max-utts", type=int, default=4)
    ap.add_argument("--hogs", type=int, nargs="+", default=[0, 2], help="busy processes per run")
    ap.add_argument("--runner", default="local", choices=["docker", "local"])
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--json", type=Path, default=None, help="write every guard block here")
    return ap.parse_args()


def _hog() -> None:
    while True:  # a busy core until terminated
        pass


def one(args: argparse.Namespace, hogs: int, root: Path) -> dict:
    spec = StreamSpec(args.runner, 100, args.speed, args.max_utts, 0, root / f"hogs-{hogs}")
    procs = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(hogs)]
    for p in procs:
        p.start()
    try:
        res = stream_cell(resolve_model(args.model), resolve_dataset(args.dataset), spec)
    finally:
        for p in procs:
            p.terminate()
            p.join()
    rec = res.record
    return {"hogs": hogs, "pooled": rec.pooled, "latency_guard": rec.latency_guard}


def row(r: dict) -> str:
    g, p = r["latency_guard"], r["pooled"]
    m = g["measured"]
    verdict = "yes" if g["attributable"] else "no: " + ", ".join(x["rule"] for x in g["reasons"])
    late = m["feed_lateness_p90_s"]
    return (
        f"| {r['hogs']} | {_f(p['eos_final_s']['mean'])} | {_f(p['rtf']['mean'])} | "
        f"{_f(None if late is None else 1000 * late, 1)} | {_f(m['backlog_growth_p50'])} | "
        f"{m['load_avg_1m_start']:.1f} / {m['load_avg_1m_end']:.1f} | "
        f"{_f(m['program_cores'])} | {_f(m['program_wait_share'])} | {verdict} |"
    )


def _f(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def main() -> None:
    args = parse()
    print(
        "| hogs | eos->final mean (s) | RTF under pacing | send lateness p90 (ms) | "
        "backlog growth p50 | load avg start / end | program cores | program CPU-wait share | "
        "model's latency |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for hogs in args.hogs:
            out.append(one(args, hogs, Path(tmp)))
            print(row(out[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
