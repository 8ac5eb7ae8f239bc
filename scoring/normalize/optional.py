"""OPTIONAL: sclite's convention of optionally deletable reference words, `(uh)`.

A reference word in parentheses may be left out by the system at no cost: if the hypothesis
has it, it is matched (correct); if not, it is scored `O` (omitted), which sclite's `-D`
counts as correct, so |ref| does not depend on the hypothesis. We extend the convention to a
parenthesised span of several words (`(1 second of silence)`): each word in it is optional.

The step only marks the span: `(a b)` becomes `\\ue010 a b \\ue011` (private-use characters,
which PUNC keeps), so NSW and CASE before it and PUNC, ITJ and UK-US after it treat the words
as any other. `split_optional` then turns a reference's tokens into words and flags; for a
hypothesis, where parentheses follow no such convention, `strip_markers` drops the markers.
"""

from __future__ import annotations

import re

OPEN, CLOSE = "\ue010", "\ue011"
MARKERS = frozenset((OPEN, CLOSE))
_SPAN = re.compile(r"\(([^()\n]*)\)")


class Optional:
    """Mark parenthesised spans (innermost, on one line) as optional."""

    name = "OPTIONAL"
    batchable = True  # no match crosses a newline

    def __call__(self, text: str) -> str:
        if "(" not in text:
            return text
        return _SPAN.sub(lambda m: f" {OPEN} {m.group(1)} {CLOSE} ", text)


def split_optional(tokens: list[str]) -> tuple[list[str], list[bool] | None]:
    """Reference tokens without the markers, and which of them are optional (None: none)."""
    if MARKERS.isdisjoint(tokens):
        return tokens, None
    words: list[str] = []
    flags: list[bool] = []
    inside = False
    for tok in tokens:
        if tok == OPEN:
            inside = True
        elif tok == CLOSE:
            inside = False
        else:
            words.append(tok)
            flags.append(inside)
    return words, flags if any(flags) else None


def strip_markers(tokens: list[str]) -> list[str]:
    """Hypothesis tokens without the markers (parenthesised words count as any other)."""
    if MARKERS.isdisjoint(tokens):
        return tokens
    return [t for t in tokens if t not in MARKERS]
