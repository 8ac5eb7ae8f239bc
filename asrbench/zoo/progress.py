"""Progress reporting: the library calls a Reporter; the CLI shows a rich progress bar."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported when a bar is shown
    from rich.progress import TaskID


class Reporter:
    """Receives byte counts from transfer threads; the default does nothing."""

    def start(self, label: str, total: int) -> None:
        pass

    def advance(self, nbytes: int) -> None:
        pass

    def finish(self) -> None:
        pass

    def note(self, message: str) -> None:
        pass


class Counter(Reporter):
    """Counts bytes, thread-safely (used for summaries and tests)."""

    def __init__(self) -> None:
        self.bytes = 0
        self._lock = threading.Lock()

    def advance(self, nbytes: int) -> None:
        with self._lock:
            self.bytes += nbytes


class RichReporter(Reporter):
    """A byte progress bar with speed and ETA on stderr."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.console = Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._task: TaskID | None = None

    def start(self, label: str, total: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task(label, total=total)

    def advance(self, nbytes: int) -> None:
        if self._task is not None:
            self._progress.update(self._task, advance=nbytes)

    def finish(self) -> None:
        self._progress.stop()

    def note(self, message: str) -> None:
        self.console.print(message)
