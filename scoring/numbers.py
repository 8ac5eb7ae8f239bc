"""The value of a run of English number words or digits: "thirty" 30, "twenty twenty" 2020.

Used to tell a wrong value ("thirteen" for "thirty") from another way of writing the same one
("two thousand twenty" for "twenty twenty"; "30" for "thirty" where NSW is off). Readings are
those a speaker uses for numbers, years and digit strings: a run with a scale word (hundred,
thousand, ...) is a cardinal ("two thousand and twenty" 2020); a run without one that falls
into several groups is read group after group ("twenty twenty" 2020, "nineteen oh five" 1905,
"two zero" 20). Ordinals read as their cardinal ("third" 3).
"""

from __future__ import annotations

import re
from decimal import Decimal

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_ORD_UNITS = (
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
).split()
_ORD_TENS = "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth".split()

SMALL: dict[str, int] = {w: i for i, w in enumerate(_UNITS)}
SMALL.update({w: i for i, w in enumerate(_ORD_UNITS)})
SMALL["oh"] = 0
TENS: dict[str, int] = {w: 20 + 10 * i for i, w in enumerate(_TENS)}
TENS.update({w: 20 + 10 * i for i, w in enumerate(_ORD_TENS)})
SCALES = {
    "hundred": 100,
    "hundredth": 100,
    "thousand": 1000,
    "thousandth": 1000,
    "million": 10**6,
    "millionth": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
}
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
_JOINERS = {"and", "point", "oh"}  # number words only between two others ("oh": the interjection)


def is_number_word(word: str) -> bool:
    """A word that can be part of a spoken or written number ("and", "point" only inside)."""
    w = word.lower()
    if w in _JOINERS:
        return False
    return w in SMALL or w in TENS or w in SCALES or _digits(w) is not None


def is_joiner(word: str) -> bool:
    """ "and", "point" and "oh": number words only between two others."""
    return word.lower() in _JOINERS


def _digits(word: str) -> Decimal | None:
    text = word.replace(",", "").strip("$€£%")
    if not text or not any(c.isdigit() for c in text):
        return None
    text = text.removesuffix("st").removesuffix("nd").removesuffix("rd").removesuffix("th")
    # plain decimals only: Decimal() also reads "5e3", "1_000", "nan5" and "1e999999999", which a
    # hypothesis token may hold; read as numbers they gave wrong values, NaNs that raise when
    # compared, and an overflow
    if _DECIMAL.fullmatch(text) is None:
        return None
    return Decimal(text)


def _cardinal(words: list[str]) -> Decimal | None:
    total: Decimal = Decimal(0)
    current: Decimal = Decimal(0)
    for w in words:
        if w == "and":
            continue
        if w in SCALES:
            scale = SCALES[w]
            current = (current or Decimal(1)) * scale
            if scale >= 1000:
                total, current = total + current, Decimal(0)
        elif w in TENS:
            current += TENS[w]
        elif w in SMALL:
            current += SMALL[w]
        else:
            d = _digits(w)
            if d is None:
                return None
            current += d
    return total + current


def _groups(words: list[str]) -> list[list[str]] | None:
    """Words without a scale word as groups read one after another: a ten may take a unit
    after it (twenty five); anything else starts a group."""
    groups: list[list[str]] = []
    for w in words:
        if w == "and":
            return None
        last = groups[-1] if groups else None
        if last is not None and len(last) == 1 and last[0] in TENS and 0 < SMALL.get(w, 0) < 10:
            last.append(w)
        else:
            groups.append([w])
    return groups


def value(words: list[str]) -> Decimal | None:
    """The number a run of words reads as, or None when it is not one."""
    words = [w.lower() for w in words]
    if not words or not all(is_number_word(w) or is_joiner(w) for w in words):
        return None
    if "point" in words:
        i = words.index("point")
        whole = value(words[:i]) if i else Decimal(0)
        frac = "".join(str(SMALL.get(w, _digits(w) or "")) for w in words[i + 1 :])
        if whole is None or not frac.isdigit():
            return None
        return whole + Decimal("0." + frac)
    if any(w in SCALES for w in words):
        return _cardinal(words)
    groups = _groups(words)
    if groups is None:
        return _cardinal(words)
    if len(groups) == 1:
        return _cardinal(groups[0])
    parts = [_cardinal(g) for g in groups]
    # groups read one after another are digits side by side: a signed or fractional group
    # ("5 -3", as a written hypothesis may hold) makes no such number
    if any(p is None or p < 0 or p != p.to_integral_value() for p in parts):
        return None
    return Decimal("".join(str(int(p)) for p in parts))  # type: ignore[arg-type]
