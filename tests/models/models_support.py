"""Helpers for the zoo's model tests (importable: pytest puts this folder on sys.path)."""

from __future__ import annotations

# tests/ is a package: its conftest's `require` is imported, not loaded again by path.
from tests.conftest import require

__all__ = ["require"]
