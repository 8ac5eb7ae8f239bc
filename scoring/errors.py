"""Errors raised for bad input: each names the file, line or utterance and says what to do."""

from __future__ import annotations


class ScoringError(ValueError):
    """Bad input or configuration for the scorer (a user error, never a bug)."""
