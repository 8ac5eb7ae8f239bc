"""Streamed answers for ops/serve: the model's streaming program kept warm, events out as they come.

A card with a `streaming:` program (models/README.md, "Streaming contract") is started once, in
its image (or the local runner's virtualenv) as `ops/stream` starts it, and fed one request at
a time: the uploaded audio, converted to the card's rate, goes in as 100-ms frames as fast as
the program reads them (an upload is not a live source: nothing is paced), and its partial and
final events come back as they are written. `TextDeltas` turns them into OpenAI's streamed
transcription events (`transcript.text.delta`, `transcript.text.done`); a card without a
streaming program answers the same two events from its batch transcript (one delta).

OpenAI's deltas only ever append text, while a streaming recogniser revises its partials. A
word is sent as a delta once two successive hypotheses agree on it (and everything before it),
the LocalAgreement rule, so revisions of the unstable tail are never sent; `done.text` is the
final hypothesis, and the deltas add up to it unless the model changed a word it had kept
stable over two partials (then `done` is what counts, as in OpenAI's API).

Sessions never see each other's events: each has its own ID in the program's events, and a
session that ends early (a client gone mid-stream, a WebSocket closed as idle or not reading)
is ended and its events read up to its final before the next one starts; a program that does
not give that final is stopped, and the next session starts it afresh.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from asrbench import audio
from asrbench.modelcard import Model
from asrbench.runners import RunOptions
from asrbench.serve.admission import Admission
from asrbench.streaming import framing
from asrbench.streaming.feed import (
    FINAL_TIMEOUT_S,
    Reader,
    StreamError,
    StreamTimeout,
    Writer,
    chunks,
    wait_ready,
)
from asrbench.streaming.framing import Event
from asrbench.streaming.program import Started

CHUNK_S = 0.1
WAIT_POLL_S = 0.1  # how often a session waiting for the program calls its `waiting`
_IDS = itertools.count(1)


class LiveModel:
    """One warm streaming program; `events` feeds one request and yields its events.
    `admission`: the bounded queue of requests and WebSocket sessions waiting for it."""

    def __init__(
        self,
        model: Model,
        runner: str,
        options: RunOptions,
        log_path: Callable[[], Path],
        admission: Admission,
    ):
        self.model, self.runner, self.options, self.log_path = model, runner, options, log_path
        self.admission = admission
        self._turns = _Turns()
        self._started: Started | None = None
        self._reader: Reader | None = None
        self._writer: Writer | None = None
        self._log: IO[bytes] | None = None

    def _start(self) -> None:
        from asrbench.streaming.program import start

        log = self.log_path()  # the warm model's work folder, made when it started
        log.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log, "ab")
        self._started = start(self.model, self.runner, self._log, self.options)
        proc = self._started.proc
        assert proc.stdout is not None and proc.stdin is not None
        self._reader = Reader(proc.stdout).start()
        self._writer = Writer(proc.stdin).start()
        wait_ready(self._reader)

    def events(self, wav: bytes) -> Iterator[Event]:
        """Feed one WAV file's bytes (at the card's rate) and yield its events up to the final."""
        pcm, rate, _, _ = audio.wav_pcm(wav)
        with self.session(rate) as live:
            live.send(pcm)
            live.end()
            yield from live.events()

    @contextmanager
    def session(self, rate: int, waiting: Callable[[], None] | None = None) -> Iterator[Session]:
        """One utterance fed as it comes (`Session.send`, `end`, `events`). The program is
        started on first use and again after it failed; one session at a time. While another
        holds it, sessions wait their turn in order of arrival, and `waiting` (if given) is
        called every WAIT_POLL_S: a WebSocket keeps reading its client meanwhile; what it
        raises ends the wait."""
        with self._turns.turn(waiting):
            if self._started is None or self._started.proc.poll() is not None:
                self.close()
                self._start()
            assert self._writer is not None and self._reader is not None
            live = Session(f"req{next(_IDS)}", rate, self._writer, self._reader)
            try:
                yield live
            except (StreamError, OSError):
                self.close()  # started afresh by the next session
                raise
            finally:  # also when the caller left early (GeneratorExit: an HTTP client gone)
                if self._started is not None:
                    self._finish(live)

    def _finish(self, live: Session) -> None:
        """End `live` and read what its caller left unread, up to its final: the program's
        queue must hold no event of this session when the next one starts. A program that
        does not give it is stopped (the next session starts it afresh)."""
        try:
            live.end()
            for _ in live.events():
                pass
        except (StreamError, OSError) as exc:
            print(f"serve: the streaming program did not end {live.uid}: {exc}", file=sys.stderr)
            self.close()

    def close(self) -> None:
        if self._started is not None:
            self._started.stop()
            self._started = None
        if self._log is not None:
            self._log.close()
            self._log = None


class _Turns:
    """Turns at the program, first come first served. (A plain Lock is not: a waiter that
    polls, as a WebSocket's does to keep reading its client, loses to one that blocks, and
    the first hostage run showed WebSocket clients answered last, up to 115 s.)"""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()  # waiting, first in line first
        self._busy = False

    @contextmanager
    def turn(self, waiting: Callable[[], None] | None) -> Iterator[None]:
        me = object()
        with self._cond:
            self._queue.append(me)
        try:
            while not self._take(me, waiting):
                waiting()  # type: ignore[misc]  # outside the lock: it reads a socket
        except BaseException:  # the waiter gave up (its client left): the next one's turn
            with self._cond:
                self._queue.remove(me)
                self._cond.notify_all()
            raise
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _take(self, me: object, waiting: Callable[[], None] | None) -> bool:
        """Take the turn if it is `me`'s, else wait (at most WAIT_POLL_S with `waiting`)."""
        with self._cond:
            while self._busy or self._queue[0] is not me:
                if waiting is not None:
                    self._cond.wait(WAIT_POLL_S)
                    if self._busy or self._queue[0] is not me:
                        return False
                else:
                    self._cond.wait()
            self._queue.popleft()
            self._busy = True
            return True


class Session:
    """One utterance in a warm streaming program: PCM in as it comes, events out."""

    def __init__(self, uid: str, rate: int, writer: Writer, reader: Reader):
        self.uid, self.rate, self._writer, self._reader = uid, rate, writer, reader
        self._odd = b""  # a byte of a sample split between two sends
        self._ended = self._final = False
        self.audio_s = 0.0
        writer.put(framing.header(uid, rate))

    def send(self, pcm: bytes) -> None:
        """16-bit little-endian mono PCM at `rate`, any length (cut into 100-ms frames)."""
        if self._ended:
            raise StreamError(f"{self.uid}: audio sent after the end of the utterance")
        pcm, self._odd = self._odd + pcm, b""
        if len(pcm) % 2:
            pcm, self._odd = pcm[:-1], pcm[-1:]
        self.audio_s += len(pcm) / 2 / self.rate
        for part in chunks(pcm, max(1, int(self.rate * CHUNK_S))):
            if part:
                self._writer.put(framing.frame(part))

    def end(self) -> None:
        if not self._ended:
            self._ended = True
            self._writer.put(framing.END)

    def events(self, wait_s: float = FINAL_TIMEOUT_S) -> Iterator[Event]:
        """The session's events as they arrive, up to its final (after `end`). Before `end`
        it waits for audio as long as it takes (a live source may pause)."""
        while not self._final:
            if self._ended:
                event = self._reader.next(wait_s + self.audio_s)
            else:
                try:
                    event = self._reader.next(1.0)
                except StreamTimeout:
                    continue
            if event.uid != self.uid:
                raise StreamError(f"the program answered {event.uid!r} while fed {self.uid!r}")
            self._final = event.type == "final"
            yield event


class TextDeltas:
    """Partial/final hypotheses in, appended text out (see the module's docstring)."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.previous: list[str] = []

    def _append(self, words: list[str]) -> str | None:
        if len(words) <= len(self.sent) or words[: len(self.sent)] != self.sent:
            return None
        new = words[len(self.sent) :]
        delta = (" " if self.sent else "") + " ".join(new)
        self.sent = list(words)
        return delta

    def partial(self, text: str) -> str | None:
        """The delta a partial makes stable (None: nothing new both hypotheses agree on)."""
        words = text.split()
        agreed = []
        for a, b in zip(self.previous, words, strict=False):
            if a != b:
                break
            agreed.append(a)
        self.previous = words
        return self._append(agreed)

    def final(self, text: str) -> str | None:
        """The rest of the final hypothesis after what was sent (None: nothing to add, or it
        revised sent words: `done` carries the whole text)."""
        return self._append(text.split())
