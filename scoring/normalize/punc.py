"""PUNC: remove punctuation without breaking contractions, numbers or compounds.

Kept on purpose: apostrophes inside words (don't, rock'n'roll), decimal points between digits
(3.5). Removed: thousands separators between digits (1,000 -> 1000). Hyphens between word
characters become a space by default (story-teller -> story teller), or are kept / joined.
Every other Unicode punctuation character (category P*) becomes a space.
"""

from __future__ import annotations

import re
import sys
import unicodedata

_APOS = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
_INNER_APOS = re.compile(r"(?<=\w)'(?=\w)")
_HYPHEN = re.compile(r"(?<=\w)[-\u2010\u2011](?=\w)")
# Private-use placeholders protect the kept characters from the blanket removal below.
_KEEP_APOS, _KEEP_DOT, _KEEP_HYPHEN = "\ue000", "\ue001", "\ue002"
_RESTORE = str.maketrans({_KEEP_APOS: "'", _KEEP_DOT: ".", _KEEP_HYPHEN: "-"})
_ALL_PUNCT = str.maketrans(
    {chr(c): " " for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)).startswith("P")}
)
HYPHEN_MODES = ("space", "keep", "join")


class Punc:
    """Remove punctuation; `hyphen` is "space" (default), "keep" or "join"."""

    name = "PUNC"

    def __init__(self, hyphen: str = "space") -> None:
        if hyphen not in HYPHEN_MODES:
            raise ValueError(f"hyphen must be one of {HYPHEN_MODES}, not {hyphen!r}")
        self.hyphen = hyphen
        self._hyphen_to = {"space": " ", "keep": _KEEP_HYPHEN, "join": ""}[hyphen]

    def __call__(self, text: str) -> str:
        text = text.translate(_APOS)
        if "," in text:
            text = _THOUSANDS.sub("", text)
        if "." in text:
            text = _DECIMAL.sub(_KEEP_DOT, text)
        if "'" in text:
            text = _INNER_APOS.sub(_KEEP_APOS, text)
        text = _HYPHEN.sub(self._hyphen_to, text)
        text = text.translate(_ALL_PUNCT).translate(_RESTORE)
        return " ".join(text.split())
