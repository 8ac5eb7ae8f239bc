"""Hostages: can an idle WebSocket client and one that never reads hold ops/serve's streaming
program while others stream?

    .venv/bin/python benchmarks/ws_hostage.py [--model pocketsphinx_en] [--runner local]
        [--clients 20] [--idle-timeout 10] [--write-timeout 6] [--queue 24]
        [--dataset mini_en] [--no-hostages]

Starts `ops/serve --ws-port 0` with those options and takes the streaming program with two
hostages: an idle client (sends 100 ms of audio, waits for its first partial, then sends
nothing) and, once the idle one holds the program, a client that sends audio in real time and
never reads (its websockets client stops reading the socket once one message waits unread).
Then `--clients` others start at once, each streaming one utterance of `--dataset`,
alternately over the WebSocket (100-ms binary messages as fast as the socket takes them, then
`end`) and as a `stream=true` HTTP request. Prints each client's latency (its start to its
final) and result, and when and how each hostage was closed. `--no-hostages`: the same clients
alone, for the baseline. docs/STREAMING.md ("ops/serve") has a run's figures.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.serve.audio import to_model_wav
from asrbench.settings import REPO_ROOT

FRAME_S = 0.1
WAIT_S = 600.0


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="pocketsphinx_en", help="a card with `streaming:`")
    ap.add_argument("--runner", default="local", choices=["docker", "local"])
    ap.add_argument("--dataset", default="mini_en")
    ap.add_argument("--clients", type=int, default=20, help="clients streaming beside them")
    ap.add_argument("--idle-timeout", type=int, default=10, help="ops/serve's, seconds")
    ap.add_argument("--write-timeout", type=float, default=6.0, help="ops/serve's, seconds")
    ap.add_argument("--queue", type=int, default=24, help="ops/serve's (room for every client)")
    ap.add_argument("--no-hostages", action="store_true", help="the clients alone (baseline)")
    return ap.parse_args()


def start_server(args: argparse.Namespace, log: Path) -> tuple[subprocess.Popen, str, str]:
    """ops/serve started and warm: (process, HTTP base URL, WebSocket URL)."""
    cmd = [
        str(REPO_ROOT / "ops" / "serve"), "-m", args.model, "--runner", args.runner,
        "--port", "0", "--ws-port", "0", "--idle-timeout", str(args.idle_timeout),
        "--write-timeout", str(args.write_timeout), "--queue", str(args.queue),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log.open("w"), text=True)
    lines: list[str] = []

    def read() -> None:  # the two URL lines, printed once the model is warm
        assert proc.stdout is not None
        while len(lines) < 2 and (line := proc.stdout.readline()):
            lines.append(line.strip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(WAIT_S)
    if len(lines) < 2 or not lines[1].startswith("ws://"):
        proc.kill()
        sys.exit(f"ops/serve did not start: {lines}; see {log}")
    return proc, lines[0], lines[1]


def speech(dataset: str, rate: int, n: int) -> list[tuple[str, bytes]]:
    """(ID, 16-bit PCM at `rate`) of `n` utterances of `dataset` (cycled when it has fewer)."""
    ds = resolve_dataset(dataset)
    utts = sorted(ds.utterances, key=lambda u: u.id)
    out = []
    for i in range(n):
        utt = utts[i % len(utts)]
        wav, _ = to_model_wav(ds.audio_path(utt).read_bytes(), rate, "a.wav")
        with wave.open(io.BytesIO(wav), "rb") as w:
            out.append((utt.id, w.readframes(w.getnframes())))
    return out


def frames(pcm: bytes, rate: int) -> list[bytes]:
    step = 2 * int(rate * FRAME_S)
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]


def ws_client(url: str, pcm: bytes, rate: int) -> tuple[str, str]:
    """(result, final text) of one utterance over the WebSocket."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    try:
        with connect(url, open_timeout=WAIT_S) as conn:
            for part in frames(pcm, rate):
                conn.send(part)
            conn.send(json.dumps({"type": "end"}))
            while True:
                event = json.loads(conn.recv(timeout=WAIT_S))
                if event["type"] in ("final", "error"):
                    return event["type"], event.get("text") or event.get("message", "")
    except (ConnectionClosed, TimeoutError, OSError) as exc:
        return "failed", f"{type(exc).__name__}: {exc}"


def http_client(base: str, pcm: bytes, rate: int) -> tuple[str, str]:
    """(result, final text) of one `stream=true` request."""
    import requests

    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
    try:
        answer = requests.post(
            f"{base}/audio/transcriptions",
            files={"file": ("a.wav", buf.getvalue())},
            data={"stream": "true"},
            stream=True,
            timeout=WAIT_S,
        )
        if answer.status_code != 200:
            return f"HTTP {answer.status_code}", answer.text[:80]
        for line in answer.iter_lines():
            if line.startswith(b"data: "):
                event = json.loads(line[6:])
                if event["type"] == "transcript.text.done":
                    return "done", event["text"]
        return "failed", "the stream ended without transcript.text.done"
    except requests.RequestException as exc:
        return "failed", f"{type(exc).__name__}: {exc}"


class Hostages:
    """The idle client and the one that never reads; when and how each was closed."""

    def __init__(self, url: str, pcm: bytes, rate: int):
        self.url, self.pcm, self.rate = url, pcm, rate
        self.t0 = time.monotonic()
        self.report: dict[str, str] = {}

    def _since(self) -> float:
        return time.monotonic() - self.t0

    def idle(self, holding: threading.Event) -> None:
        from websockets.exceptions import ConnectionClosed
        from websockets.sync.client import connect

        with connect(self.url, open_timeout=WAIT_S) as conn:
            conn.send(frames(self.pcm, self.rate)[0])
            conn.recv(timeout=WAIT_S)  # its first partial: it holds the program
            holding.set()
            try:
                while True:
                    conn.recv(timeout=WAIT_S)
            except ConnectionClosed as exc:
                why = f"close {exc.rcvd.code} {exc.rcvd.reason!r}" if exc.rcvd else "dropped"
                self.report["idle"] = f"closed at {self._since():.1f} s: {why}"
            except TimeoutError:
                self.report["idle"] = f"still connected after {WAIT_S:.0f} s"

    def not_reading(self, sending: threading.Event) -> None:
        """Sends its audio over and over in real time; reads nothing (max_queue=1)."""
        from websockets.exceptions import ConnectionClosed
        from websockets.sync.client import connect

        sent = 0
        start = time.monotonic()
        with connect(self.url, open_timeout=WAIT_S, max_queue=1) as conn:
            try:
                while time.monotonic() - start < WAIT_S:
                    for part in frames(self.pcm, self.rate):
                        conn.send(part)
                        sent += 1
                        sending.set()
                        time.sleep(FRAME_S)  # a live source: real time
                self.report["not reading"] = f"still connected after {WAIT_S:.0f} s"
            except (ConnectionClosed, OSError) as exc:
                self.report["not reading"] = (
                    f"dropped at {self._since():.1f} s after sending {sent * FRAME_S:.1f} s "
                    f"of audio ({type(exc).__name__})"
                )


def main() -> int:
    args = parse()
    log = Path(tempfile.mkdtemp(prefix="ws-hostage-")) / "serve.log"
    proc, base, url = start_server(args, log)
    rate = resolve_model(args.model).card.sample_rate
    try:
        utts = speech(args.dataset, rate, args.clients)
        hostages = Hostages(url, utts[0][1], rate)
        threads = []
        if not args.no_hostages:
            holding = threading.Event()
            threads.append(threading.Thread(target=hostages.idle, args=(holding,)))
            threads[-1].start()
            if not holding.wait(WAIT_S):
                sys.exit("the idle client never got the streaming program")
            sending = threading.Event()
            threads.append(threading.Thread(target=hostages.not_reading, args=(sending,)))
            threads[-1].start()
            if not sending.wait(WAIT_S):
                sys.exit("the non-reading client could not send")
            time.sleep(1)  # a benchmark, not a test: let the server queue it first in line
        results: dict[int, tuple[str, str, str, float, str]] = {}

        def client(i: int, uid: str, pcm: bytes) -> None:
            start = time.monotonic()
            if i % 2 == 0:
                kind, (result, text) = "websocket", ws_client(url, pcm, rate)
            else:
                kind, (result, text) = "stream=true", http_client(base, pcm, rate)
            results[i] = (kind, uid, result, time.monotonic() - start, text)

        clients = [
            threading.Thread(target=client, args=(i, uid, pcm)) for i, (uid, pcm) in enumerate(utts)
        ]
        for t in clients:
            t.start()
        for t in clients + threads:
            t.join(WAIT_S)
        report(args, results, hostages.report)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return 0


def report(args: argparse.Namespace, results: dict, hostages: dict[str, str]) -> None:
    print(
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()}; {args.model} "
        f"({args.runner}), --idle-timeout {args.idle_timeout} --write-timeout "
        f"{args.write_timeout:g} --queue {args.queue}; "
        f"{'no hostages' if args.no_hostages else 'an idle and a non-reading client held'}"
    )
    print("| client | kind | utterance | result | latency s | final text |")
    print("|---|---|---|---|---|---|")
    for i in sorted(results):
        kind, uid, result, latency, text = results[i]
        print(f"| {i + 1} | {kind} | {uid} | {result} | {latency:.2f} | {text[:60]} |")
    latencies = sorted(r[3] for r in results.values())
    answered = sum(r[2] in ("final", "done") for r in results.values())
    if latencies:
        print(
            f"answered {answered}/{args.clients}; latency min {latencies[0]:.2f} s, "
            f"median {latencies[len(latencies) // 2]:.2f} s, max {latencies[-1]:.2f} s"
        )
    for name, what in hostages.items():
        print(f"hostage ({name}): {what}")


if __name__ == "__main__":
    sys.exit(main())
