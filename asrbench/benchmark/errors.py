"""The benchmark job's one error type."""

from __future__ import annotations

from asrbench.errors import AsrbenchError


class BenchmarkError(AsrbenchError):
    """A benchmark that could not run; the message names model/dataset and says what to do."""
