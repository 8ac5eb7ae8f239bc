"""The bounded wait in front of one warm program (`ops/serve --queue`).

A warm program serves one request (or streamed session) at a time; at most `queue` more may
wait for it. The batch model and the streaming program each have their own, so a WebSocket
client holding the streaming program never fills the batch model's queue, and the reverse.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from asrbench.errors import AsrbenchError


class QueueFull(AsrbenchError):
    """The program is busy and `queue` more already wait for it (HTTP 503, WebSocket 1013)."""


class Admission:
    """Counts the requests in a program or waiting for it; refuses one over `queue` waiting."""

    def __init__(self, queue: int):
        self.queue = queue
        self._count = 0  # in the program or waiting for it
        self._lock = threading.Lock()

    def enter(self) -> None:
        """Take a place; QueueFull (naming the option) when none is left."""
        with self._lock:
            if self._count > self.queue:
                raise QueueFull(
                    f"the model is busy with another request and {self.queue} more wait for "
                    f"it (ops/serve --queue {self.queue}); retry later"
                )
            self._count += 1

    def leave(self) -> None:
        with self._lock:
            self._count -= 1

    @contextmanager
    def place(self) -> Iterator[None]:
        """A place for the duration of the block (QueueFull on entry when none is left)."""
        self.enter()
        try:
            yield
        finally:
            self.leave()
