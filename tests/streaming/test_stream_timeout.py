"""A silent program is a typed `StreamTimeout`, and ops/serve's live session waits through one.

Against the contract's echo program (echo_program.py), a real subprocess: `Reader.next` raises
`StreamTimeout` (a `StreamError`) when nothing came in time and a plain `StreamError` when the
program's output ended; a `Session` whose audio pauses (before its end) keeps waiting across
timeouts and then yields the rest of its events up to the final.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from asrbench.serve.live import Session
from asrbench.streaming import feed

ECHO = Path(__file__).with_name("echo_program.py")
RATE = 16000
CHUNK = b"\x01\x00" * (RATE // 10)  # one 100-ms frame, as Session cuts them


class WatchedReader(feed.Reader):
    """The real reader, telling when a wait for an event has timed out."""

    def __init__(self, stdout) -> None:
        super().__init__(stdout)
        self.timed_out = threading.Event()

    def next(self, timeout: float) -> feed.Event:
        try:
            return super().next(timeout)
        except feed.StreamTimeout:
            self.timed_out.set()
            raise


def _echo() -> tuple[subprocess.Popen, WatchedReader, feed.Writer]:
    proc = subprocess.Popen(
        [sys.executable, str(ECHO)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    reader = WatchedReader(proc.stdout).start()
    feed.wait_ready(reader, timeout=60)
    return proc, reader, feed.Writer(proc.stdin).start()


def test_silence_is_a_stream_timeout_and_an_ended_program_is_not():
    proc, reader, _ = _echo()
    with pytest.raises(feed.StreamTimeout, match="no event from the program in 0 s"):
        reader.next(0.05)
    proc.stdin.close()  # type: ignore[union-attr]
    assert proc.wait(timeout=60) == 0
    with pytest.raises(feed.StreamError, match="ended its output") as err:
        reader.next(60)
    assert not isinstance(err.value, feed.StreamTimeout)


def test_a_live_session_waits_through_a_pause_in_its_audio():
    proc, reader, writer = _echo()
    live = Session("paused", RATE, writer, reader)
    got: list[feed.Event] = []
    failed: list[BaseException] = []

    def consume() -> None:
        try:
            got.extend(live.events())
        except BaseException as exc:  # the test's assertion reports it
            failed.append(exc)

    live.send(CHUNK)
    consumer = threading.Thread(target=consume)
    consumer.start()
    assert reader.timed_out.wait(60)  # the session waited past a 1-s silence
    live.send(CHUNK)
    live.end()
    consumer.join(60)
    proc.stdin.close()  # type: ignore[union-attr]
    assert proc.wait(timeout=60) == 0
    assert not failed, failed
    assert [(e.type, e.text) for e in got] == [
        ("partial", "f1"),
        ("partial", "f1 f2"),
        ("final", "f1 f2"),
    ]
