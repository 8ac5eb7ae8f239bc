"""Script-aware steps for languages other than English and Chinese (see scoring/languages.py).

FOLD (the CASE step of those languages): Unicode full case folding, `str.casefold()`, which
unlike `lower()` folds every spelling a case change can produce to one form: German `ß`, `ẞ` and
`SS` all become `ss` (`STRASSE` = `Straße`, and Swiss `Strasse` too), Greek final sigma `ς`
becomes `σ` (`ΟΔΟΣ`, `οδος`, `οδοσ` are one word; `lower()` decides final or not from the
neighbours). What casefold gets wrong, corrected here: (1) Turkish and Azeri have two i letters:
`İ`/`i` and `I`/`ı`; casefold maps `I` to `i` (merging two letters) and `İ` to `i` + U+0307
(a stray combining dot): under `case="turkic"` `İ` becomes `i` and `I` becomes `ı` first;
(2) casefold can leave a string that is no longer NFC (`ΐ` becomes three code points): the
result is normalised again to the scorer's Unicode form. FOLD looks at one character at a time
(and never across a newline), so it is batchable.

ELISION: French, Italian and Catalan clitics written with an apostrophe (`l'utente`,
`dell'anno`, `qu'il`) become a word of their own: a space goes after the apostrophe, which PUNC
then drops (`l utente`, `dell anno`); words whose apostrophe is part of the word (`aujourd'hui`,
`prud'homme`) are left whole. Runs after FOLD (the clitic list is lower case).

GERESH: Hebrew and Yiddish write geresh and gershayim (`׳` `״`, or ASCII `'` `"` in their
place) inside a word (`צה״ל`, `ג׳ירפה`); they are punctuation by Unicode category, so PUNC would
split the word in two. Between two Hebrew letters they are removed, so that every spelling of
the word is the same one word.

DIACRITICS (`ScorerConfig.diacritics="strip"`; off by default): optional marks removed, where a
script's marks are optional: every combining mark on a Latin or Greek letter (`é`->`e`,
`ά`->`α`; letters that do not decompose such as `ø`, `ł`, `ß` stay), Cyrillic stress accents
and `ё`->`е`, Arabic harakat (not hamza) and tatweel, Hebrew points (niqqud) and cantillation.
The vowel signs and viramas of Brahmic scripts (Devanagari, Bengali, Tamil...) and the marks
of Thai, Lao, Khmer and Burmese are letters' parts, never removed: that would change the word.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

import regex

# Turkish and Azeri: the dotted capital I and the plain capital I (dotless) fold to their own
# lower-case letters before casefold sees them.
_TURKIC_I = str.maketrans({"\u0130": "i", "I": "\u0131"})


class Fold:
    """Full Unicode case folding; `turkic` keeps dotted and dotless i apart."""

    name = "CASE"
    batchable = True  # per character (see Pipeline.batch)

    def __init__(self, turkic: bool = False, form: str | None = "NFC") -> None:
        self.turkic = turkic
        self.form: Literal["NFC", "NFKC"] | None = (
            None if form is None else ("NFKC" if form == "NFKC" else "NFC")
        )

    def __call__(self, text: str) -> str:
        if self.turkic:
            text = text.translate(_TURKIC_I)
        text = text.casefold()
        if self.form is None or text.isascii():
            return text
        return unicodedata.normalize(self.form, text)


class Elision:
    """Split an elided clitic (`l'`, `dell'`, `qu'`) from the word after it."""

    name = "ELISION"
    batchable = True  # within a word only

    def __init__(self, clitics: tuple[str, ...]) -> None:
        self.clitics = clitics
        # longest first, so that `dell'` is not read as `l'` after `del`
        alts = "|".join(sorted(map(re.escape, clitics), key=len, reverse=True))
        # A clitic starts a word; its apostrophe (or a look-alike) is followed by a letter.
        self._pattern = re.compile(rf"(?<!\w)({alts})['\u2019\u02bc](?=\w)", re.IGNORECASE)

    def __call__(self, text: str) -> str:
        if "'" not in text and "\u2019" not in text and "\u02bc" not in text:
            return text
        return self._pattern.sub(r"\1' ", text)


_HEBREW_MARKS = regex.compile(r"(?<=\p{Hebrew})[\u05f3\u05f4'\"\u2019]+(?=\p{Hebrew})")


class Geresh:
    """Remove geresh and gershayim (or ASCII quotes standing in) between Hebrew letters."""

    name = "GERESH"
    batchable = True  # within a word only

    def __call__(self, text: str) -> str:
        if text.isascii():
            return text
        return _HEBREW_MARKS.sub("", text)


# Combining marks (Mn) on a Latin or Greek base (after NFD), however many are stacked.
_LATIN_GREEK_MARKS = regex.compile(r"(?<=[\p{Latin}\p{Greek}]\p{Mn}*)\p{Mn}+")
_CYRILLIC_STRESS = regex.compile(r"(?<=\p{Cyrillic}\p{Mn}*)[\u0300\u0301]")
_CYRILLIC_YO = regex.compile(r"(?<=[\u0435\u0415])\u0308")  # е/Е + diaeresis (ё, Ё)
# Arabic harakat (fatha, damma, kasra), tanween, shadda, sukun, superscript alef, and tatweel
# (a stretching stroke). Hamza and madda (U+0653-U+0655, which NFD takes out of `أ إ آ ؤ ئ`)
# stay: they are letters' parts, and folding alef forms is a choice this step does not make.
_ARABIC = regex.compile(r"[\u064b-\u0652\u0670\u0640]")
# Hebrew points and cantillation (Mn only: maqaf, paseq, sof pasuq are punctuation).
_HEBREW = regex.compile(r"[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]")
_STRIP = (_LATIN_GREEK_MARKS, _CYRILLIC_STRESS, _CYRILLIC_YO, _ARABIC, _HEBREW)


class Diacritics:
    """Strip the optional diacritics of the scripts that have them (see the module docstring)."""

    name = "DIACRITICS"
    batchable = True  # per grapheme

    def __init__(self, form: str | None = "NFC") -> None:
        self.form: Literal["NFC", "NFKC"] = "NFKC" if form == "NFKC" else "NFC"

    def __call__(self, text: str) -> str:
        if text.isascii():
            return text
        text = unicodedata.normalize("NFD", text)
        for pattern in _STRIP:
            text = pattern.sub("", text)
        return unicodedata.normalize(self.form, text)
