"""Live progress of a sharded run, read from the files the model programs write as they go."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TextIO

from asrbench.ticker import Ticker, fmt_eta


def _count_lines(path: Path) -> set[str]:
    try:
        data = path.read_bytes()
    except OSError:
        return set()
    lines = data.split(b"\n")[:-1]  # the last piece is torn or empty
    return {ln.split(b"\t", 1)[0].decode(errors="replace") for ln in lines if ln}


class Progress(Ticker):
    """Polls shard `out/` folders and prints done/total, audio speed and ETA."""

    def __init__(
        self,
        label: str,
        durations: dict[str, float],
        already: int,
        already_s: float,
        shard_dirs: list[Path],
        stream: TextIO | None = None,
        every_s: float = 10.0,
        enabled: bool = True,
    ):
        self.label = label
        self.durations = durations  # utterances this run still has to do
        self.total = len(durations) + already
        self.total_s = sum(durations.values()) + already_s
        self.already, self.already_s = already, already_s
        self.shard_dirs = shard_dirs
        super().__init__(stream, every_s, enabled)

    def snapshot(self) -> tuple[int, float]:
        done: set[str] = set()
        for d in self.shard_dirs:
            done |= _count_lines(d / "out" / "hyp.tsv") | _count_lines(d / "out" / "failed.tsv")
        done &= self.durations.keys()
        return len(done), sum(self.durations[u] for u in done)

    def line(self) -> str:
        n, secs = self.snapshot()
        wall = max(time.monotonic() - self.start_t, 1e-6)
        speed = secs / wall  # audio seconds per wall second, this run only
        left = self.total_s - self.already_s - secs
        eta = left / speed if speed > 0 else float("inf")
        pct = 100.0 * (n + self.already) / self.total if self.total else 100.0
        return (
            f"{self.label}: {n + self.already}/{self.total} utts ({pct:.0f}%), "
            f"audio {(secs + self.already_s) / 3600:.3f}/{self.total_s / 3600:.3f} h, "
            f"{speed:.2f} audio-s/s, "
            f"ETA {fmt_eta(eta)}"
        )


class CampaignProgress(Ticker):
    """One progress line over a grid of cells (conditions x models, datasets x models...).

    Cells report the audio they covered when they finish (`cell_done`); the line shows cells
    and utterances done, audio speed and ETA, redrawn in place on a terminal and printed every
    `every_s` seconds (and at each finished cell) elsewhere, so a long grid shows life.
    """

    def __init__(
        self,
        label: str,
        n_cells: int,
        n_utts: int,
        audio_s: float,
        stream: TextIO | None = None,
        every_s: float = 10.0,
        enabled: bool = True,
    ):
        self.label, self.n_cells, self.n_utts, self.audio_s = label, n_cells, n_utts, audio_s
        self.cells = self.utts = 0
        self.done_s = 0.0
        self.current = ""
        self._lock = threading.Lock()
        super().__init__(stream, every_s, enabled)

    def start_cell(self, name: str) -> None:
        with self._lock:
            self.current = name

    def cell_done(self, n_utts: int, audio_s: float) -> None:
        with self._lock:
            self.cells += 1
            self.utts += n_utts
            self.done_s += audio_s
        self._emit()

    def line(self) -> str:
        wall = max(time.monotonic() - self.start_t, 1e-6)
        speed = self.done_s / wall
        eta = (self.audio_s - self.done_s) / speed if speed > 0 else float("inf")
        now = f", now {self.current}" if self.current and self.cells < self.n_cells else ""
        return (
            f"{self.label}: {self.cells}/{self.n_cells} cells, {self.utts}/{self.n_utts} "
            f"utts, audio {self.done_s / 3600:.3f}/{self.audio_s / 3600:.3f} h, "
            f"{speed:.2f} audio-s/s, ETA {fmt_eta(eta)}{now}"
        )
