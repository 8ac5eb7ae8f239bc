"""The model contract v1 (models/README.md), shared by the zoo's programs.

This file lives once in `models/_common/`; each model whose card lists it under `image.shared`
gets a copy beside its program (in the image and for the local runner), and its bytes are part
of that model's source identity, so a change here rebuilds every image that declares it.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
import wave
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ResultWriter", "WavListError", "clean", "done_ids", "read_todo", "wav_seconds"]


class WavListError(ValueError):
    """A malformed wav list; the message names the file and line."""


def clean(text: str) -> str:
    """One line of text: tabs and newlines become spaces, runs of spaces collapse."""
    return " ".join(text.replace("\t", " ").split())


def done_ids(path: Path) -> set[str]:
    """IDs already written; truncates a last line torn by a crash so appends stay clean."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return {line.split(b"\t", 1)[0].decode() for line in data.splitlines() if line}


class _Stream:
    """The utterances of a wav list that is a named pipe (`ops/serve`'s warm model): read one
    line at a time as they arrive, until the writer closes it. `len()` is what is known so far."""

    def __init__(self, path: Path, skip: set[str]):
        self.path, self.skip, self.seen = path, skip, 0

    def __len__(self) -> int:
        return self.seen

    def __iter__(self):  # noqa: ANN204
        with open(self.path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                uid, sep, wav = line.rstrip("\n").partition("\t")
                if not sep:
                    print(f"{self.path}:{n}: expected ID<TAB>PATH, got {line[:80]!r}; skipped",
                          file=sys.stderr, flush=True)
                    continue
                if uid not in self.skip:
                    self.seen += 1
                    yield uid, wav


def read_todo(wav_list: str | Path, result_dir: str | Path
              ) -> tuple[list[tuple[str, str]], int]:
    """(ID, PATH) pairs still to do, and how many were already done (resume).

    A wav list that is a named pipe is streamed (contract: serving): the pairs come as the
    writer sends them, and the program transcribes each as it arrives, model loaded once.
    """
    out = Path(result_dir)
    out.mkdir(parents=True, exist_ok=True)
    skip = done_ids(out / "hyp.tsv") | done_ids(out / "failed.tsv")
    done_ids(out / "timing.tsv")
    done_ids(out / "cost.tsv")
    if stat.S_ISFIFO(os.stat(wav_list).st_mode):
        return _Stream(Path(wav_list), skip), len(skip)  # type: ignore[return-value]
    todo = []
    for n, line in enumerate(Path(wav_list).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        uid, sep, path = line.partition("\t")
        if not sep:
            raise WavListError(f"{wav_list}:{n}: expected ID<TAB>PATH, got {line[:80]!r}")
        if uid not in skip:
            todo.append((uid, path))
    return todo, len(skip)


def wav_seconds(path: str | Path) -> float:
    """Duration of a WAV file in seconds."""
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / float(w.getframerate())


@dataclass
class ResultWriter:
    """Appends to hyp.tsv / timing.tsv / failed.tsv, one flushed line each, thread-safe."""

    result_dir: Path
    model_id: str

    def __post_init__(self) -> None:
        out = Path(self.result_dir)
        self._hyp = open(out / "hyp.tsv", "a", encoding="utf-8")
        self._timing = open(out / "timing.tsv", "a", encoding="utf-8")
        self._failed = open(out / "failed.tsv", "a", encoding="utf-8")
        self._cost = None  # cost.tsv, opened on the first cost (commercial APIs only)
        self._lock = threading.Lock()
        self.n_ok = 0
        self.n_failed = 0

    def ok(self, uid: str, text: str, processing_s: float, audio_s: float) -> None:
        with self._lock:
            self._hyp.write(f"{uid}\t{clean(text)}\n")
            self._hyp.flush()
            self._timing.write(f"{uid}\t{processing_s:.4f}\t{audio_s:.3f}\n")
            self._timing.flush()
            self.n_ok += 1

    def cost(self, uid: str, usd: float) -> None:
        """`cost.tsv`: `ID<TAB>USD`, the estimated price of that utterance's request(s)."""
        with self._lock:
            if self._cost is None:
                self._cost = open(Path(self.result_dir) / "cost.tsv", "a", encoding="utf-8")
            self._cost.write(f"{uid}\t{usd:.6f}\n")
            self._cost.flush()

    def failed(self, uid: str, reason: str) -> None:
        with self._lock:
            self._failed.write(f"{uid}\t{clean(reason)}\n")
            self._failed.flush()
            self.n_failed += 1
        print(f"{self.model_id}: {uid}: failed: {clean(reason)}", file=sys.stderr)

    def close(self) -> None:
        for f in (self._hyp, self._timing, self._failed, self._cost):
            if f is not None:
                f.close()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def now() -> float:
    """Monotonic clock for per-utterance processing time."""
    return time.perf_counter()
