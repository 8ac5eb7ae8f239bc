"""The benchmark job's one error type."""

from __future__ import annotations

from asrbench.errors import AsrbenchError, InputError


class BenchmarkError(AsrbenchError):
    """A benchmark that could not run; the message names model/dataset and says what to do."""


class RequestError(BenchmarkError, InputError):
    """A request file or option that cannot be used (exit status 2: fix the input)."""
