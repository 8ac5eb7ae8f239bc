"""Accuracy of the streaming feed's pacing and the platform's overhead per event.

    .venv/bin/python benchmarks/stream_pacing.py [--seconds 30] [--chunk-ms 20 100]
        [--speed 1 10] [--model pocketsphinx_en --runner docker|local] [--json out.json]

Without --model the program is a contract echo with no model (this file run with --echo): it
answers every frame with a partial at once, so what is measured is the platform alone. With
--model, the model's own streaming program is fed `--seconds` of mini_en speech instead
(overhead then includes `docker run -i`'s relay). Reported per (chunk, speed):
  lateness     each send minus its absolute deadline (mean, p99, max), and deadline misses
               (sends later than feed.MISS_S)
  end drift    lateness of each utterance's last send: how far the feed ended from real time
  overhead     platform receipt minus the program's own stamp, per event (mean, p99, max)
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import time
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench.streaming import feed, metrics

RATE = 16000
MINI_EN = Path(__file__).resolve().parent.parent / "datasets" / "mini_en"


def echo() -> int:
    """The contract with no model: a partial per frame, a final per end frame."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer

    def emit(**e: object) -> None:
        e["t"] = time.time()
        out.write(json.dumps(e).encode() + b"\n")
        out.flush()

    emit(type="ready")
    while line := inp.readline():
        uid, n_samples = json.loads(line)["id"], 0
        while (n := struct.unpack("<I", inp.read(4))[0]) != 0:
            n_samples += len(inp.read(n)) // 2
            emit(id=uid, type="partial", text="x", audio_s=n_samples / RATE)
        emit(id=uid, type="final", text="x", audio_s=n_samples / RATE)
    return 0


def speech(seconds: float) -> list[tuple[str, bytes]]:
    """mini_en utterances (16 kHz mono 16-bit) until `seconds` of audio."""
    out, total = [], 0.0
    for wav in sorted((MINI_EN / "audio").glob("*.wav")):
        with wave.open(str(wav)) as w:
            out.append((wav.stem, w.readframes(w.getnframes())))
            total += w.getnframes() / RATE
        if total >= seconds:
            break
    return out


def start(args: argparse.Namespace, log) -> tuple[subprocess.Popen, object]:
    if not args.model:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--echo"]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=os.environ)
        return proc, None
    from asrbench.resolve import resolve_model
    from asrbench.streaming import program

    started = program.start(resolve_model(args.model), args.runner, log)
    return started.proc, started


def measure(args: argparse.Namespace, chunk_ms: int, speed: float) -> dict:
    audio = (
        speech(args.seconds) if args.model else [("silence", b"\0\0" * int(RATE * args.seconds))]
    )
    with open(os.devnull, "wb") as log:
        proc, started = start(args, log)
        try:
            reader = feed.Reader(proc.stdout).start()
            feed.wait_ready(reader)
            t = time.monotonic()
            fed = feed.feed_all(proc.stdin, reader, audio, feed.Pace(RATE, chunk_ms, speed))
            wall = time.monotonic() - t
        finally:
            if started is not None:
                started.stop()
            else:
                proc.stdin.close()
                proc.wait()
    p, o = metrics.pacing(fed), metrics.overhead(fed)
    return {
        "chunk_ms": chunk_ms,
        "speed": speed,
        "audio_s": sum(f.audio_s for f in fed),
        "wall_s": wall,
        "pacing": p,
        "overhead_s": o,
        "failed": sum(bool(f.failed) for f in fed),
    }


def ms(x: float | None) -> str:
    return "-" if x is None else f"{1000 * x:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--echo", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seconds", type=float, default=30.0, help="audio fed per setting")
    ap.add_argument("--chunk-ms", type=int, nargs="+", default=[20, 100])
    ap.add_argument("--speed", type=float, nargs="+", default=[1.0, 10.0])
    ap.add_argument("--model", help="feed this model's streaming program instead of the echo")
    ap.add_argument("--runner", default="docker", choices=["docker", "local"])
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    if args.echo:
        return echo()
    rows = [measure(args, c, s) for c in args.chunk_ms for s in args.speed]
    who = f"{args.model} ({args.runner})" if args.model else "echo program (no model)"
    print(f"{who}, {args.seconds:g} s of audio per row; times in ms")
    print(
        "| chunk | speed | sends | late mean | late p99 | late max | misses | end drift max "
        "| events | overhead mean | overhead p99 | overhead max |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        late, ovh = r["pacing"]["lateness_s"], r["overhead_s"]
        print(f"| {r['chunk_ms']} ms | {r['speed']:g}x | {late['n']} | {ms(late['mean'])} | "
              f"{ms(late['p99'])} | {ms(late['max'])} | {r['pacing']['deadline_misses']} | "
              f"{ms(r['pacing']['end_drift_s']['max'])} | {ovh['n']} | {ms(ovh['mean'])} | "
              f"{ms(ovh['p99'])} | {ms(ovh['max'])} |")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
