"""A status line redrawn by a background thread: the one progress mechanism of every command
(a benchmark's shards, a robustness or fairness campaign, a cluster run)."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


def fmt_eta(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "--:--"
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Ticker:
    """A status line printed by a background thread: redrawn in place on a terminal, else one
    line every `every_s` seconds (CI, logs), so long runs show life without flooding the log.
    Subclasses say what the line is (`line()`)."""

    def __init__(self, stream: TextIO | None, every_s: float, enabled: bool):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every_s = 0.5 if self.tty else every_s
        self.enabled = enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.start_t = time.monotonic()

    def line(self) -> str:
        raise NotImplementedError

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self._emit()

    def _emit(self, final: bool = False) -> None:
        if not self.enabled:
            return
        text = self.line()
        extra = "".join(f"{ln}\n" for ln in self.extra_lines())
        if self.tty:
            self.stream.write("\r\033[K" + text + ("\n" + extra if final else ""))
        else:
            self.stream.write(text + "\n" + extra)
        self.stream.flush()

    def extra_lines(self) -> list[str]:
        """Lines printed under the status line in a log, and once at the end on a terminal."""
        return []

    def __enter__(self):
        if self.enabled:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._emit(final=True)
