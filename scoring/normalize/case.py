"""CASE: fold letter case so "The" and "the" are the same word."""

from __future__ import annotations


class Case:
    """Lower-case the text with Unicode case folding (ß -> ss is avoided: plain lower())."""

    name = "CASE"
    batchable = True  # per character (see Pipeline.batch)

    def __call__(self, text: str) -> str:
        # lower() rather than casefold(): casefold turns "ß" into "ss" and changes word identity.
        return text.lower()
