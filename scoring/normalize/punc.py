"""PUNC: remove punctuation without breaking contractions, numbers or compounds.

Kept on purpose: apostrophes inside words (don't, rock'n'roll), decimal points between digits
(3.5). Removed: thousands separators between digits (1,000 -> 1000). Hyphens between word
characters become a space by default (story-teller -> story teller), or are kept / joined.
Every other Unicode punctuation character (general category P, `\\p{P}`) becomes a space.
"""

from __future__ import annotations

import re

import regex

try:  # the blanket removal on ASCII text in C (scoring/_fast.pyx); where not built, `regex`
    import scoring._fast as _fast
except ImportError:  # pragma: no cover - an install without a C compiler
    _fast = None

_APOS_MARKS = ("\u2019", "\u2018", "\u02bc", "\uff07")  # apostrophe look-alikes -> "'"
# Each pattern starts with its literal so that the engine scans for that character instead of
# trying the look-behind at every position (5-15x faster on a corpus); the look-behind then
# checks the character before it. Same matches as `(?<=\d),(?=...)` and so on.
_THOUSANDS = re.compile(r",(?=\d{3}(?!\d))(?<=\d,)")
_DECIMAL = re.compile(r"\.(?=\d)(?<=\d\.)")
_INNER_APOS = re.compile(r"'(?=\w)(?<=\w')")
_HYPHEN = re.compile(r"[-\u2010\u2011](?=\w)(?<=\w[-\u2010\u2011])")
# The same with marks and joiners as word characters (`regex`'s \w holds letters, marks, digits,
# the connector punctuation and ZWJ/ZWNJ; \p{N} adds what `re`'s \w also takes): a word may end
# in a vowel sign or a virama (`हिंदी-भाषी`). Used by languages other than English and Chinese,
# whose PUNC is exactly as before.
_W = r"[\w\p{N}]"
_INNER_APOS_MARKS = regex.compile(rf"'(?={_W})(?<={_W}')")
_HYPHEN_MARKS = regex.compile(rf"[-\u2010\u2011](?={_W})(?<={_W}[-\u2010\u2011])")
# Unicode punctuation from the regex package's Unicode tables. `re` has no \p{...}; `regex`
# also runs this class several times faster than an explicit character class in `re`.
_PUNCT = regex.compile(r"\p{P}+")
# Private-use placeholders protect the kept characters from the blanket removal below.
_KEEP_APOS, _KEEP_DOT, _KEEP_HYPHEN = "\ue000", "\ue001", "\ue002"
_KEEP = (_KEEP_APOS, _KEEP_DOT, _KEEP_HYPHEN)
# On ASCII text that holds none of them, ASCII control characters stand in instead: like the
# private-use ones they are neither punctuation, nor word characters, nor whitespace, and the
# text stays one byte a character (the removal and the restoring run faster on it).
_ASCII_KEEP = ("\x01", "\x02", "\x03")
# "synonym": kept, as "keep", and read as its parts too (scoring.synonyms: fstalign's rules)
HYPHEN_MODES = ("space", "keep", "join", "synonym")


def _placeholders(text: str, ascii_only: bool) -> tuple[str, str, str]:
    """The stand-ins of a kept apostrophe, decimal point and hyphen in `text`."""
    if ascii_only and not ("\x01" in text or "\x02" in text or "\x03" in text):
        return _ASCII_KEEP
    return _KEEP


class Punc:
    """Remove punctuation; `hyphen` is "space" (default), "keep" or "join"; `marks`: a
    combining mark or a joiner counts as a word character beside an apostrophe or a hyphen."""

    name = "PUNC"
    batchable = True  # per character / within a line only (see Pipeline.batch)

    def __init__(self, hyphen: str = "space", marks: bool = False) -> None:
        if hyphen not in HYPHEN_MODES:
            raise ValueError(f"hyphen must be one of {HYPHEN_MODES}, not {hyphen!r}")
        self.hyphen = hyphen
        self._inner_apos = _INNER_APOS_MARKS if marks else _INNER_APOS
        self._hyphen = _HYPHEN_MARKS if marks else _HYPHEN
        self._hyphen_to = {"space": " ", "join": ""}.get(hyphen)  # None: kept

    def __call__(self, text: str) -> str:
        return " ".join(self.split(text))

    def split(self, text: str) -> list[str]:
        """The punctuation-free text, split on whitespace (what a word tokeniser gets)."""
        return self.strip(text).split()

    def strip(self, text: str) -> str:
        """Punctuation replaced, whitespace not yet collapsed. Works line by line: nothing
        matches across a newline, so many texts joined by newlines give the same lines."""
        ascii_only = text.isascii()
        keep = _placeholders(text, ascii_only)
        if not ascii_only:
            for mark in _APOS_MARKS:  # str.replace: faster than translate() on long text
                if mark in text:
                    text = text.replace(mark, "'")
        protected = False
        if "," in text:
            text = _THOUSANDS.sub("", text)
        if "." in text and _DECIMAL.search(text):
            text, protected = _DECIMAL.sub(keep[1], text), True
        inner = _INNER_APOS if ascii_only else self._inner_apos  # the same on ASCII
        if "'" in text and inner.search(text):
            text, protected = inner.sub(keep[0], text), True
        if "-" in text or not ascii_only:
            to = self._hyphen_to
            hyphen = _HYPHEN if ascii_only else self._hyphen
            text = hyphen.sub(keep[2] if to is None else to, text)
            protected = protected or to is None
        blanked = _fast.ascii_punct(text) if _fast is not None else None  # None: not ASCII
        text = _PUNCT.sub(" ", text) if blanked is None else blanked
        if protected:  # str.replace: far faster than translate() on long non-ASCII text
            for mark, char in zip(keep, "'.-", strict=True):
                if mark in text:
                    text = text.replace(mark, char)
        return text
