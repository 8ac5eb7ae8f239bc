"""The paced feed against a real subprocess that follows the contract (echo_program.py).

Timing is not asserted (the machine is shared): only what holds under any load (every chunk
sent no earlier than its deadline, events in order, the audio clock monotone, the final after
the last send). The measured drift and overhead are printed (`pytest -s`) for the record.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from asrbench.streaming import feed, metrics

ECHO = Path(__file__).with_name("echo_program.py")
RATE = 16000


def _start(env: dict[str, str] | None = None) -> tuple[subprocess.Popen, feed.Reader]:
    proc = subprocess.Popen(
        [sys.executable, str(ECHO)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    reader = feed.Reader(proc.stdout).start()  # type: ignore[arg-type]
    feed.wait_ready(reader, timeout=60)
    return proc, reader


def _stop(proc: subprocess.Popen) -> int:
    proc.stdin.close()  # type: ignore[union-attr]
    return proc.wait(timeout=60)


def test_paced_feed_records_every_event_in_order():
    proc, reader = _start()
    audio = {"one": b"\x01\x00" * (RATE // 2 + 123), "two": b"\x02\x00" * (RATE // 4)}
    fed = feed.feed_all(proc.stdin, reader, audio.items(), feed.Pace(RATE, 50, 10.0))
    assert _stop(proc) == 0
    for f, n_chunks in zip(fed, (11, 5), strict=True):
        assert f.failed is None and len(f.sends) == n_chunks
        assert all(x >= 0 for x in f.lateness)  # never sent before its deadline
        assert f.sends == sorted(f.sends)
        times = [e.mono_recv for e in f.events]
        assert times == sorted(times)
        clock = [e.audio_s for e in f.events]
        assert clock == sorted(clock) and clock[-1] == f.audio_s
        assert [e.type for e in f.events] == ["partial"] * n_chunks + ["final"]
        assert f.final is not None and f.final.mono_recv >= f.sends[-1]
        assert f.final.text == " ".join(f"f{i}" for i in range(1, n_chunks + 1))
    pacing, ovh = metrics.pacing(fed), metrics.overhead(fed)
    assert pacing["lateness_s"]["n"] == 16 and ovh["n"] == 18
    print(f"\npacing at 10x, 50 ms chunks: {pacing}\noverhead per event: {ovh}")


def test_a_program_that_dies_fails_the_rest_without_dropping_them():
    proc, reader = _start({"ECHO_DIE_ON": "b"})
    audio = [("a", b"\x00\x00" * 1600), ("b", b"\x00\x00" * 1600), ("c", b"\x00\x00" * 1600)]
    fed = feed.feed_all(proc.stdin, reader, audio, feed.Pace(RATE, 100, 50.0))
    assert _stop(proc) == 3
    assert [f.uid for f in fed] == ["a", "b", "c"]
    assert fed[0].failed is None and fed[0].final is not None
    assert fed[1].failed and "broke on this utterance" in fed[1].failed
    assert fed[2].failed and "not fed" in fed[2].failed
