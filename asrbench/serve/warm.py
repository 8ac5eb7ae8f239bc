"""One warm model per served model: its program keeps running with the model loaded, and each
request costs inference, not start-up.

The program is the model's own, run by a platform runner exactly as in a benchmark (same image,
isolation, secrets and watchdog), except that its wav list is a named pipe: the contract streams
such a list (`models/_common/contract.py`), so the program transcribes each line as it arrives
and appends its result to `out/hyp.tsv` (or `failed.tsv`). Here each request writes its audio
into the worker's data folder, one line into the pipe, and waits for its ID to appear.

A program that dies is started again on the next request; one that takes longer than the
request timeout is stopped (and restarted), and that request answers an error.
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from asrbench import audio
from asrbench.errors import AsrbenchError
from asrbench.modelcard import Model
from asrbench.runners import Runner, RunOptions
from asrbench.runners.base import Worker, log_tail
from asrbench.secrets import for_models

POLL_S = 0.01


class WarmError(AsrbenchError):
    """The model could not transcribe a request; `status` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 500):
        self.status = status
        super().__init__(message)


@dataclass(frozen=True)
class Result:
    text: str
    processing_s: float  # the program's own time for the utterance (timing.tsv)
    wall_s: float  # from the line written to the result read


class _Tail:
    """New complete `ID<TAB>VALUE` lines of a file the program appends to."""

    def __init__(self, path: Path):
        self.path, self.offset, self.partial = path, 0, b""

    def read(self) -> dict[str, str]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return {}
        self.offset += len(data)
        data = self.partial + data
        cut = data.rfind(b"\n") + 1
        self.partial = data[cut:]
        out = {}
        for line in data[:cut].decode("utf-8", errors="replace").splitlines():
            uid, _, value = line.partition("\t")
            out[uid] = value
        return out


class WarmModel:
    """A model kept loaded behind a lock: `transcribe(wav_bytes)` one request at a time."""

    def __init__(
        self,
        model: Model,
        runner: Runner,
        options: RunOptions | None = None,
        work_root: Path | None = None,
        start_timeout_s: float = 900.0,
    ):
        self.model, self.runner = model, runner
        self.options = options or RunOptions(timeout_s=600)
        self.work_root = Path(work_root) if work_root else None
        self.start_timeout_s = start_timeout_s
        self.redactor = for_models([model])
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._generation = itertools.count(1)
        self._worker: Worker | None = None
        self._pipe: TextIO | None = None
        self._closed = False  # set by close(): requests still waiting answer 503
        self.starts = 0  # how many times the program was started (tests, logs)

    # --- the program ----------------------------------------------------------------------

    def _start(self) -> None:
        import tempfile

        if self.work_root is None:
            self.work_root = Path(tempfile.mkdtemp(prefix="asrbench-serve-"))
        gen = self.work_root / f"worker-{next(self._generation):03d}"
        self.data_dir = gen / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._worker = self.runner.start_worker(
            self.model, self.data_dir, gen / "work", self.options
        )
        self.starts += 1
        self._hyp = _Tail(self._worker.out_dir / "hyp.tsv")
        self._failed = _Tail(self._worker.out_dir / "failed.tsv")
        self._timing = _Tail(self._worker.out_dir / "timing.tsv")
        self._timings: dict[str, str] = {}
        # The program opens the pipe once its model is loaded: until then nobody reads it.
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            try:
                fd = os.open(self._worker.fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
            if not self._worker.alive():
                raise self._died("stopped while loading")
            if time.monotonic() > deadline:
                self._stop()
                raise WarmError(
                    f"model {self.model.id} did not start reading within "
                    f"{self.start_timeout_s:.0f} s"
                )
            time.sleep(0.05)
        os.set_blocking(fd, True)
        self._pipe = os.fdopen(fd, "w", encoding="utf-8", buffering=1)

    def _died(self, what: str) -> WarmError:
        tail = log_tail(self._worker.log_path, 15) if self._worker else "(no log)"
        self._stop()
        message = self.redactor.redact(f"model {self.model.id} {what}; log tail:\n{tail}")
        print(f"serve: {message}", file=sys.stderr)
        return WarmError(f"model {self.model.id} {what}; see the server log")

    def _stop(self) -> None:
        if self._pipe is not None:
            try:
                self._pipe.close()
            except OSError:
                pass  # the reader is gone
            self._pipe = None
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def start(self, warmup: bytes | None = None) -> None:
        """Start the program now (and decode `warmup`, a WAV, so the first request is warm)."""
        with self._lock:
            if self._worker is None:
                self._start()
        if warmup is not None:
            self.transcribe(warmup)

    def close(self) -> None:
        """Stop the program and remove the server's folder, also while a request is in the
        model (`ops/serve` on SIGTERM): that request answers 503 rather than delay the stop."""
        self._closed = True
        worker = self._worker
        if worker is not None:
            worker.stop()  # a request waiting on it sees `_closed` and gives up the lock
        if self._lock.acquire(timeout=30):
            try:
                self._stop()
            finally:
                self._lock.release()
        if self.work_root is not None:
            shutil.rmtree(self.work_root, ignore_errors=True)

    def _closing(self) -> WarmError:
        return WarmError(
            f"the server is stopping; model {self.model.id} no longer takes requests", 503
        )

    # --- one request ----------------------------------------------------------------------

    def transcribe(self, wav: bytes) -> Result:
        """The model's text for one WAV already at the card's rate (mono, 16-bit)."""
        with self._lock:
            if self._closed:
                raise self._closing()
            if self._worker is None or not self._worker.alive():
                if self._worker is not None:
                    print(
                        f"serve: model {self.model.id} had stopped; starting it again",
                        file=sys.stderr,
                    )
                    self._stop()
                self._start()
            worker, pipe = self._worker, self._pipe
            assert worker is not None and pipe is not None  # `_start` opened both
            uid = f"req{next(self._ids):08d}"
            wav_path = self.data_dir / f"{uid}.wav"
            wav_path.write_bytes(wav)
            os.chmod(wav_path, 0o644)
            start = time.monotonic()
            try:
                pipe.write(f"{uid}\t{worker.path_for(wav_path)}\n")
                pipe.flush()
            except BrokenPipeError:
                if self._closed:
                    raise self._closing() from None
                raise self._died("stopped reading requests") from None
            try:
                return self._wait(worker, uid, start)
            finally:
                wav_path.unlink(missing_ok=True)

    def _wait(self, worker: Worker, uid: str, start: float) -> Result:
        deadline = start + self.options.timeout_s
        checks = 0
        while True:
            hyps, failed = self._hyp.read(), self._failed.read()
            self._timings.update(self._timing.read())
            if uid in hyps or uid in failed:
                wall = time.monotonic() - start
                if uid in failed:
                    reason = self.redactor.redact(failed[uid])
                    raise WarmError(
                        f"model {self.model.id} could not transcribe the file: {reason}"
                    )
                timing = self._timings.pop(uid, "")
                try:
                    processing = float(timing.split("\t")[0])
                except ValueError:
                    processing = wall
                return Result(hyps[uid], processing, wall)
            checks += 1
            if self._closed:
                raise self._closing()
            if checks % 50 == 0 and not worker.alive():
                raise self._died("stopped while transcribing")
            if time.monotonic() > deadline:
                self._stop()  # it may be stuck: the next request starts a fresh one
                raise WarmError(
                    f"model {self.model.id} took longer than "
                    f"{self.options.timeout_s:.0f} s; stopped",
                    504,
                )
            time.sleep(POLL_S)


def silence_wav(rate: int, seconds: float = 0.5) -> bytes:
    """A short silent WAV at `rate` (warm-up)."""
    return audio.pcm16_bytes(np.zeros(int(rate * seconds)), rate)  # the bytes `wave` wrote
