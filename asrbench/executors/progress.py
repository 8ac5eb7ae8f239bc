"""One progress line for a whole cluster run, and a line per node in the log.

Shards are the unit a remote executor sees finish, so the line counts shards and the
utterances they carried: `ray: 12/40 shards, 96/320 utts (30%), 3.1 utt/s, ETA 0:01:12`. On a
terminal it redraws in place; in a log one line every `every_s` seconds and at the end, each
followed by one line per node (shards, utterances, speed, failures), so a slow or failing node
shows up by name.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TextIO

from asrbench.ticker import Ticker, fmt_eta


@dataclass
class _Node:
    shards: int = 0
    utts: int = 0
    audio_s: float = 0.0
    busy_s: float = 0.0
    errors: int = 0


class ClusterProgress(Ticker):
    """Counts shards submitted and finished, overall and per node; thread-safe. The line
    starts with the first submission and ends with `close()`."""

    def __init__(
        self,
        label: str = "ray",
        stream: TextIO | None = None,
        every_s: float = 10.0,
        enabled: bool = True,
    ):
        super().__init__(stream, every_s, enabled)
        self.label = label
        self.total = self.done = self.total_utts = self.utts = self.retried = 0
        self.nodes: dict[str, _Node] = {}
        self._lock = threading.Lock()
        self.start_t: float | None = None  # type: ignore[assignment]

    def submitted(self, n_shards: int, n_utts: int) -> None:
        with self._lock:
            if self.start_t is None:
                self.start_t = time.monotonic()
            self.total += n_shards
            self.total_utts += n_utts
        self._start()

    def finished(self, node: str, n_utts: int, audio_s: float, busy_s: float, failed: bool) -> None:
        with self._lock:
            self.done += 1
            self.utts += n_utts
            n = self.nodes.setdefault(node, _Node())
            n.shards += 1
            n.utts += n_utts
            n.audio_s += audio_s
            n.busy_s += busy_s
            n.errors += int(failed)

    def line(self) -> str:
        with self._lock:
            wall = max(time.monotonic() - (self.start_t or time.monotonic()), 1e-6)
            rate = self.utts / wall
            left = self.total_utts - self.utts
            eta = left / rate if rate > 0 else float("inf")
            pct = 100.0 * self.utts / self.total_utts if self.total_utts else 100.0
            return (
                f"{self.label}: {self.done}/{self.total} shards, {self.utts}/"
                f"{self.total_utts} utts ({pct:.0f}%), {rate:.2f} utt/s, ETA {fmt_eta(eta)}, "
                f"{len(self.nodes)} node(s)"
            )

    def node_lines(self) -> list[str]:
        with self._lock:
            return [
                f"{self.label}:   {name}: {n.shards} shard(s), {n.utts} utts"
                + (f", {n.audio_s / n.busy_s:.2f} audio-s per busy s" if n.busy_s else "")
                + (f", {n.errors} shard error(s)" if n.errors else "")
                for name, n in sorted(self.nodes.items())
            ]

    def extra_lines(self) -> list[str]:
        return self.node_lines()

    def _start(self) -> None:
        if self.enabled and self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._loop, daemon=True)
                    self._thread.start()

    def close(self) -> None:
        """Stop the periodic line and print the final one (with the per-node lines)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
            self._emit(final=True)
