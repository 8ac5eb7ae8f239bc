"""The paced feed: chunks on an absolute-deadline clock, every event recorded as it arrives.

Chunk k of an utterance holds audio [k*c, (k+1)*c) and is sent at its deadline
`t0 + (k+1)*c / speed` (the instant its last sample would have been spoken, at `speed` times
real time), computed from the utterance's start `t0`, never from the previous send: a late
send does not delay the next deadline, so lateness never accumulates. Each send's lateness
(actual send minus deadline) is kept; `PacingStats` sums them up (how far the feed was from
real time). A reader thread stamps each event line with the platform's clocks the moment it
is read; the program's own stamp `t` gives the platform's overhead per event (program write
to platform record: pipe, `docker run -i`'s relay, parsing). A chunk is sent (handed to a writer
thread) at its deadline even when the program lags behind (`Writer`).

Utterances are fed one after another: the next starts once the previous one's final arrived.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import IO, Any

from asrbench.errors import AsrbenchError
from asrbench.streaming import framing
from asrbench.streaming.framing import Event

MISS_S = 0.010  # a send later than its deadline by more than this is a deadline miss
FINAL_TIMEOUT_S = 120.0  # the longest wait for a final once an utterance's audio is all sent
READY_TIMEOUT_S = 300.0  # the longest wait for the program to load its model
BROKE = "stream broke on this utterance: "  # the `failed` reason's start, then why
LAST_WORDS_S = 2.0  # after a break, the longest wait for the rest of the program's output


@dataclass(frozen=True)
class Pace:
    """How audio is fed: the PCM rate, the chunk length and the speed (x real time)."""

    sample_rate: int
    chunk_ms: int = 100
    speed: float = 1.0

    @property
    def chunk_samples(self) -> int:
        return max(1, self.sample_rate * self.chunk_ms // 1000)


class StreamError(AsrbenchError):
    """A streaming program that stopped, broke the contract or went silent."""


class StreamTimeout(StreamError):
    """The program wrote no event within the wait (it may still be working: a caller that
    can wait longer catches this one alone)."""


@dataclass(frozen=True)
class FedUtterance:
    """What happened to one utterance: when each chunk went, what came back."""

    uid: str
    audio_s: float
    chunk_s: float
    t0: float  # monotonic time at which the utterance's audio clock started
    sends: list[float]  # monotonic send time of each chunk (the end frame follows the last)
    lateness: list[float]  # sends[k] - deadline[k]
    events: list[Event]
    failed: str | None = None

    @property
    def final(self) -> Event | None:
        return next((e for e in self.events if e.type == "final" and e.uid == self.uid), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.uid,
            "audio_s": self.audio_s,
            "chunk_s": self.chunk_s,
            "t0": self.t0,
            "sends": self.sends,
            "events": [e.to_dict() for e in self.events],
            "failed": self.failed,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FedUtterance:
        """What `to_dict` wrote, with the sends' `lateness` beside it (streaming/cache.py)."""
        events = [Event.from_dict(e) for e in d["events"]]
        return cls(
            d["id"], d["audio_s"], d["chunk_s"], d["t0"], d["sends"], d["lateness"], events,
            d["failed"],
        )  # fmt: skip


@dataclass
class Reader:
    """A thread reading the program's stdout: each line stamped, parsed and queued."""

    stdout: IO[bytes]
    events: queue.Queue = field(default_factory=queue.Queue)

    def start(self) -> Reader:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def _run(self) -> None:
        for line in iter(self.stdout.readline, b""):
            t, mono = time.time(), time.monotonic()
            if not line.strip():
                continue
            try:
                self.events.put(framing.parse_event(line, t, mono))
            except framing.FramingError as exc:
                self.events.put(exc)
        self.events.put(None)  # end of output: the program exited or closed stdout

    def next(self, timeout: float) -> Event:
        """The next event; StreamError when the program ended or broke the contract,
        StreamTimeout (a StreamError) when it wrote nothing for `timeout` seconds."""
        try:
            item = self.events.get(timeout=max(0.0, timeout))
        except queue.Empty:
            raise StreamTimeout(f"no event from the program in {timeout:.0f} s") from None
        if item is None:
            self.events.put(None)  # stays ended for later calls
            raise StreamError("the program ended its output (exited?)")
        if isinstance(item, Exception):
            raise StreamError(f"the program broke the streaming contract: {item}")
        return item


class Writer:
    """A thread writing to the program's stdin, so that the paced clock never waits on it.

    A real audio source does not wait for the recogniser: a chunk is handed over at its
    deadline whatever the program's backlog (a pipe holds only ~2 s of 16-kHz audio, and a
    blocked write would be counted as the feed's lateness); a program that falls behind shows
    up in its latencies instead. A write that fails (the program exited) is raised, as OSError,
    by the next `put`.
    """

    def __init__(self, stdin: IO[bytes]):
        self.stdin = stdin
        self.queue: queue.Queue[bytes] = queue.Queue()
        self.error: OSError | None = None

    def start(self) -> Writer:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def put(self, data: bytes) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(data)

    def _run(self) -> None:
        while True:
            data = self.queue.get()
            try:
                self.stdin.write(data)
                self.stdin.flush()
            except (OSError, ValueError) as exc:  # ValueError: stdin closed by `stop`
                self.error = exc if isinstance(exc, OSError) else OSError(str(exc))
                return


def wait_ready(reader: Reader, timeout: float = READY_TIMEOUT_S) -> Event:
    """Block until the program says it is ready (model loaded)."""
    event = reader.next(timeout)
    if event.type != "ready":
        raise StreamError(f"the program's first event must be ready, got {event.type}")
    return event


def chunks(pcm: bytes, chunk_samples: int) -> list[bytes]:
    """16-bit PCM cut into chunks of `chunk_samples` samples (the last may be shorter)."""
    step = 2 * chunk_samples
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]


def pace_until(deadline: float, clock: Callable[[], float] = time.monotonic) -> float:
    """Sleep until `deadline` (monotonic); return the time it was reached."""
    while (left := deadline - clock()) > 0:
        time.sleep(min(left, 0.05))
    return clock()


def feed_utterance(
    out: Writer,
    reader: Reader,
    uid: str,
    pcm: bytes,
    pace: Pace,
) -> FedUtterance:
    """Feed one utterance paced at `pace.speed` x real time; collect its events to the final.

    When the stream breaks on it (the program exited, broke the contract or went silent), the
    utterance comes back failed with every send and event received so far: nothing received
    is lost."""
    chunk_s = pace.chunk_samples / pace.sample_rate
    sends: list[float] = []
    lateness: list[float] = []
    events: list[Event] = []
    fed = FedUtterance(uid, len(pcm) / 2 / pace.sample_rate, chunk_s, 0.0, sends, lateness, events)
    try:
        out.put(framing.header(uid, pace.sample_rate))
        fed = replace(fed, t0=time.monotonic())
        _send(out, reader, pcm, pace, fed)
        out.put(framing.END)
        while fed.final is None:
            event = reader.next(FINAL_TIMEOUT_S)
            if event.uid != uid:
                events.append(event)  # kept (with its own ID), as everything received
                raise StreamError(
                    f"utterance {uid}: got an event for {event.uid!r} while feeding it"
                )
            events.append(event)
    except (StreamError, OSError) as exc:
        _drain_to_end(reader, events, LAST_WORDS_S)  # what it wrote before the break is kept
        return replace(fed, failed=BROKE + _why(exc))
    return fed


def _send(out: Writer, reader: Reader, pcm: bytes, pace: Pace, fed: FedUtterance) -> None:
    """Every chunk at its deadline (from `fed.t0`), into `fed`'s sends, lateness and events."""
    done = 0.0
    for part in chunks(pcm, pace.chunk_samples):
        done += len(part) / 2 / pace.sample_rate
        deadline = fed.t0 + done / pace.speed
        pace_until(deadline)
        out.put(framing.frame(part))
        sent = time.monotonic()
        fed.sends.append(sent)
        fed.lateness.append(sent - deadline)
        _drain(reader, fed.events)


def _why(exc: Exception) -> str:
    return str(exc) if isinstance(exc, StreamError) else f"the program's stdin closed ({exc})"


def _drain(reader: Reader, into: list[Event]) -> None:
    """Move the events already read into `into` (without waiting): a partial arrives mid-feed."""
    while True:
        try:
            item = reader.events.get_nowait()
        except queue.Empty:
            return
        if item is None or isinstance(item, Exception):
            reader.events.put(item)  # `next` reports it once the feed waits for the final
            return
        into.append(item)


def _drain_to_end(reader: Reader, into: list[Event], wait: float) -> None:
    """After a break: move every event into `into` until the program's output ends (a write
    to a dead program can fail before its last lines are read) or `wait` seconds pass."""
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        try:
            item = reader.events.get(timeout=left)
        except queue.Empty:
            return
        if item is None or isinstance(item, Exception):
            reader.events.put(item)  # stays ended
            return
        into.append(item)


def feed_all(
    stdin: IO[bytes],
    reader: Reader,
    utterances: Iterable[tuple[str, bytes]],
    pace: Pace,
    progress: Callable[[FedUtterance], None] | None = None,
) -> list[FedUtterance]:
    """Feed every utterance in turn; after a failure the rest are marked failed, not dropped
    (the one it broke on keeps what it received)."""
    out: list[FedUtterance] = []
    broken: str | None = None
    writer = Writer(stdin).start()
    for uid, pcm in utterances:
        if broken is None:
            fed = feed_utterance(writer, reader, uid, pcm, pace)
            if fed.failed:
                broken = fed.failed.removeprefix(BROKE)
        else:
            fed = _failed(
                uid, pcm, pace.sample_rate, f"not fed: the stream broke earlier ({broken})"
            )
        out.append(fed)
        if progress:
            progress(fed)
    return out


def _failed(uid: str, pcm: bytes, sample_rate: int, why: str) -> FedUtterance:
    return FedUtterance(uid, len(pcm) / 2 / sample_rate, 0.0, 0.0, [], [], [], why)
