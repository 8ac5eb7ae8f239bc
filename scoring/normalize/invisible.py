"""INVISIBLE and UNICODE (NFC/NFKC): what a reader cannot see must not count as a word or an error.

A transcript that shows `café` may hold `e` plus a combining acute (decomposed) or `é`
(composed); a copy from a web page may hold a zero-width space, a right-to-left mark or a
byte-order mark; a model's log line may carry a terminal colour code (`ESC [ 31 m`), which NSW
would otherwise read as "thirty one m". None of these is a word.

INVISIBLE removes, replacing each with nothing (as a screen shows the text):
  * terminal escape sequences, whole: CSI (`ESC [ ... final`, and its one-byte form U+009B),
    OSC (`ESC ] ... BEL` or `ESC ] ... ESC \\`, terminated on the same line; an unterminated
    one loses only its `ESC ]`: the words after it stay) and two-character escapes;
  * control characters (general category Cc) that are not whitespace: NUL, BEL, DEL, the C1
    controls... Tab, newline and the other whitespace controls stay: they separate words;
  * invisible format characters (a chosen part of category Cf): soft hyphen, Arabic letter
    mark, zero-width space, LRM/RLM, the bidi embeddings, overrides and isolates, word joiner,
    invisible operators, the deprecated format characters, the byte-order mark (zero-width
    no-break space);
  * zero-width joiner and non-joiner (ZWJ/ZWNJ) where they join nothing: they are kept between
    two letters or marks of a script that uses them (Persian `می‌خواهم`, Devanagari conjuncts:
    removing them changes the word) and removed elsewhere (beside a space or a digit, inside a
    Latin, Greek, Cyrillic, Han, kana or Hangul word, in an emoji sequence).
Zero-width space is removed, not made a space: in the supported languages it never separates
words (Thai, Khmer, Lao and Burmese use it as a word-break hint; the multilingual pipeline is
a later step). Other Cf characters (Arabic number signs, the Mongolian vowel separator, Egyptian
hieroglyph controls, tag characters) are visible or shape letters, and are left alone.

UNICODE, NFC (default) or NFKC: Unicode normalisation, so that the composed and decomposed
spellings of a letter are the same word. NFC changes no letter's identity; NFKC also folds
compatibility forms (ligature `ﬁ` -> `fi`, superscript `²` -> `2`, full-width `Ａ` -> `A`),
which is right for some corpora and not others, hence a choice. In either form every decimal
digit (category Nd: Arabic-Indic `١٢٣`, Persian `۱۲۳`, Devanagari `१२३`, Thai, Tamil, Burmese...,
66 scripts) becomes the ASCII digit of its value: one number, whichever script writes it. NSW
then reads it in the language (nemo's grammars read ASCII digits only: Arabic's left `١٢٣` as
written), and a language without NSW compares `௧௨௩` and `123` as the same token. Combining
marks stay on their letter (no step splits a word at a mark: PUNC removes only category P,
tokenisers split only at whitespace).

Both run first, INVISIBLE then UNICODE (a zero-width character between a letter and its accent would
keep NFC from composing them), so that every later step sees visible, normalised text. Neither
looks across a newline: texts joined by newlines give the same lines (`Pipeline.batch`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

import regex

# Terminal escape sequences (ECMA-48), never across a newline: CSI with its parameter and
# intermediate bytes; OSC up to BEL or ST; any other escape (intermediates, then one final
# byte). A lone ESC is a control character like the others.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)"
    r"|\x1b[ -/]*[0-~]"
)
# Invisible format characters always removed (ZWJ U+200D and ZWNJ U+200C: see _JOINERS).
_FORMAT = "\u00ad\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
# Control characters that are not whitespace (str.split() splits at \t \n \v \f \r \x1c-\x1f
# \x85: those stay).
_CONTROL = "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"
_REMOVE = re.compile(f"[{_CONTROL}{_FORMAT}]+")
# A decimal digit (Nd) of any script but ASCII (`re`'s `\d` is exactly category Nd).
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")
# A quick test: does the text hold anything this step may change? One substring scan per
# character (memchr-fast) beats a character-class search several times over.
_ASCII_CONTROLS = tuple(chr(c) for c in (*range(0x09), *range(0x0E, 0x1C), 0x7F))
_OTHERS = tuple(
    chr(c)
    for c in (
        *range(0x80, 0x85),
        *range(0x86, 0xA0),
        0xAD,
        0x61C,
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2065),
        *range(0x2066, 0x2070),
        0xFEFF,
    )
)


def _untouched(text: str) -> bool:
    """True when the text holds nothing INVISIBLE would change."""
    if any(c in text for c in _ASCII_CONTROLS):
        return False
    return text.isascii() or not any(c in text for c in _OTHERS)


# Scripts whose words ZWJ/ZWNJ do not shape (inside such a word, or beside anything that is not
# a letter or mark, a joiner is removed).
_PLAIN = r"\p{Latin}\p{Greek}\p{Cyrillic}\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}"
_JOINERS = regex.compile(
    rf"(?<![\p{{L}}\p{{M}}])[\u200c\u200d]+|[\u200c\u200d]+(?![\p{{L}}\p{{M}}])"
    rf"|(?<=[{_PLAIN}]\p{{M}}*)[\u200c\u200d]+|[\u200c\u200d]+(?=[{_PLAIN}])"
)


class Invisible:
    """Remove terminal escapes, non-whitespace control characters and invisible format
    characters (ZWJ/ZWNJ only where they join nothing)."""

    name = "INVISIBLE"
    batchable = True  # nothing matches across a newline (see Pipeline.batch)

    def batch(self, texts: list[str]) -> list[str]:
        """`[self(t) for t in texts]`; one scan of all texts when none holds such a character."""
        if _untouched("\n".join(texts)):
            return list(texts)
        return [self(t) for t in texts]

    def __call__(self, text: str) -> str:
        if _untouched(text):
            return text
        if "\x1b" in text or "\x9b" in text:
            text = _ESCAPES.sub("", text)
        text = _REMOVE.sub("", text)
        if "\u200c" in text or "\u200d" in text:
            text = _JOINERS.sub("", text)
        return text


FORMS = ("NFC", "NFKC")


class UnicodeForm:
    """Unicode normalisation to `form` (NFC or NFKC), and every decimal digit to the ASCII
    digit of its value. Named UNICODE after its switch (`ScorerConfig.unicode`), as every step
    is; the form is `ScorerConfig.unicode_form`."""

    name = "UNICODE"
    batchable = True  # a newline never composes with a neighbour: joined texts give the same

    def __init__(self, form: str = "NFC") -> None:
        if form not in FORMS:
            raise ValueError(f"unicode form must be one of {FORMS}, not {form!r}")
        # (the literal type unicodedata's functions take; `form` is one of FORMS)
        self.form: Literal["NFC", "NFKC"] = "NFC" if form == "NFC" else "NFKC"

    def batch(self, texts: list[str]) -> list[str]:
        """`[self(t) for t in texts]`; one check of all texts when all are normalised."""
        joined = "\n".join(texts)
        # ASCII text is in every form and holds no other digit: one C scan instead of the
        # digit pattern's lookahead at every character (0.15 s over 5 MB)
        if joined.isascii() or (
            unicodedata.is_normalized(self.form, joined) and not _OTHER_DIGIT.search(joined)
        ):
            return list(texts)
        return [self(t) for t in texts]

    def __call__(self, text: str) -> str:
        if text.isascii():
            return text
        # after normalising: NFKC makes ASCII digits of some (full-width `１`, math `𝟏`) itself
        return _OTHER_DIGIT.sub(_ascii_digit, unicodedata.normalize(self.form, text))


def _ascii_digit(m: re.Match[str]) -> str:
    return "0123456789"[unicodedata.decimal(m.group())]
