"""CASE: fold letter case so "The" and "the" are the same word."""

from __future__ import annotations


class Case:
    """Lower-case the text with Unicode case folding (ß -> ss is avoided: plain lower())."""

    name = "CASE"
    batchable = True  # per character (see Pipeline.batch)

    def __call__(self, text: str) -> str:
        # lower() rather than casefold(): casefold turns "ß" into "ss" and changes word identity.
        return text.lower()


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class AsciiCase:
    """Lower-case A-Z only, as sclite's case-insensitive comparison (`É` and `é` stay two
    words); the exact sclite mode's CASE."""

    name = "CASE"
    batchable = True  # per character (see Pipeline.batch)

    def __call__(self, text: str) -> str:
        return text.translate(_ASCII_LOWER)
