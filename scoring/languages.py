"""The language registry: a BCP-47 tag (`es`, `es-MX`, `pt-BR`, `zh-Hans`, `sr-Latn`) resolved to
the profile that decides how the scorer normalises and counts.

A profile says, for the tag's primary language subtag: its script, whether words are separated by
spaces (Chinese, Japanese, Thai, Lao, Khmer, Burmese and Tibetan are not: they are scored by
character), how letter case folds (Turkish and Azeri dotted and dotless i), the apostrophe
convention (French, Italian, Catalan elided clitics such as `l'`, `dell'`), the curated data files
the language has and whether an NSW grammar exists for it.

English and Chinese keep the pipelines they had before the registry existed (`legacy`): same
steps, same data files, same numbers. Every other language, listed or not, gets the
language-neutral steps (INVISIBLE, UNICODE, NONSPEECH, OPTIONAL, script-correct CASE, PUNC); a
listed language adds its own conventions. A well-formed tag whose language is not listed is
scored with those neutral steps (`known` is False, recorded in the result's configuration) rather
than refused: nothing in them is specific to a language. A malformed tag is a ScoringError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from scoring.errors import ScoringError

# RFC 5646 "langtag" (the irregular grandfathered tags are not accepted): language (2-3 letters;
# the 5-8 letter form is allowed by the grammar but none is registered, and refusing it catches
# `english` or `french`) with up to three extlangs, then script, region, variants, extensions
# and a private-use part. `_` is accepted for `-` (POSIX locales write `fr_CA`).
_TAG = re.compile(
    r"(?P<lang>[a-z]{2,3}(?:-[a-z]{3}){0,3})"
    r"(?:-(?P<script>[a-z]{4}))?"
    r"(?:-(?P<region>[a-z]{2}|[0-9]{3}))?"
    r"(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*"
    r"(?:-[0-9a-wyz](?:-[a-z0-9]{2,8})+)*"
    r"(?:-x(?:-[a-z0-9]{1,8})+)?",
    re.IGNORECASE,
)

# Scripts (ISO 15924) whose words are not separated by spaces: scored by character.
UNSPACED_SCRIPTS = frozenset(
    {"Hans", "Hant", "Hani", "Jpan", "Thai", "Laoo", "Khmr", "Mymr", "Tibt"}
)

# Clitics written with an apostrophe before the next word. ELISION splits `l'utente` into
# `l' utente` (PUNC then drops the apostrophe left at the word's end: `l utente`), so that the
# article and the noun are two words, as they are when spoken and as the Open ASR Leaderboard
# counts them; lexicalised words with an apostrophe (`aujourd'hui`, `prud'homme`, English
# `don't`) stay one word.
ELISIONS: dict[str, tuple[str, ...]] = {
    "fr": (
        "c", "d", "j", "l", "m", "n", "s", "t", "qu",
        "jusqu", "lorsqu", "puisqu", "quoiqu",
    ),
    "it": (
        "l", "d", "c", "m", "n", "s", "t", "v", "un", "gl", "dell", "all", "dall", "nell",
        "sull", "coll", "pell", "dev", "quell", "quest", "bell", "sant", "nessun", "tutt",
        "com", "dov", "cos", "anch", "senz",
    ),
    "ca": ("l", "d", "m", "n", "s", "t"),
}  # fmt: skip


@dataclass(frozen=True)
class Profile:
    """How one language tag is normalised and counted (see the module docstring)."""

    tag: str  # the tag in canonical case (`pt-BR`, `sr-Latn`, `zh-Hans`)
    language: str  # its primary language subtag (`pt`, `sr`, `zh`)
    script: str | None  # ISO 15924: the tag's script subtag, else the language's usual one
    known: bool  # listed here (False: a well-formed tag scored by the neutral steps only)
    spaced: bool  # words are separated by spaces
    unit: str  # the default scoring unit: "word", "char" or "mixed" (Chinese)
    case: str  # "lower" (English and Chinese, as before), "fold" or "turkic"
    apostrophe: str  # "keep" (words with an apostrophe stay whole) or "elision"
    data: dict[str, str] = field(default_factory=dict)  # data-file kind -> scoring/data name
    nsw: bool = False  # an NSW grammar exists for the language
    legacy: bool = False  # English or Chinese: the pipeline and numbers of before the registry
    fullwidth: bool = False  # FW step: full-width Latin letters and digits to half-width

    @property
    def elisions(self) -> tuple[str, ...]:
        """The clitics ELISION splits off (empty unless `apostrophe == "elision"`)."""
        return ELISIONS.get(self.language, ()) if self.apostrophe == "elision" else ()

    def to_dict(self) -> dict:
        """What a result records of the profile (its data files are recorded apart)."""
        return {
            "tag": self.tag,
            "language": self.language,
            "script": self.script,
            "known": self.known,
            "spaced": self.spaced,
            "case": self.case,
            "apostrophe": self.apostrophe,
            "nsw": self.nsw,
        }


# language -> usual script (ISO 15924). Latin, Cyrillic and the others below are listed apart.
_SCRIPTS = {
    **dict.fromkeys(
        "af ast br bs ca cs cy da de en eo es et eu fi fil fo fr fy ga gd gl ha haw hr ht hu id "
        "is it jv la lb ln lt lv mg mi ms mt nb nl nn no oc pl pt rm ro sk sl sn so sq su sv sw "
        "tk tl tr az uz vi wo yo zu".split(),
        "Latn",
    ),
    **dict.fromkeys("ru uk be bg mk sr kk ky tg mn ba tt".split(), "Cyrl"),
    **dict.fromkeys("ar fa ur ps sd ug".split(), "Arab"),
    **dict.fromkeys("he yi".split(), "Hebr"),
    **dict.fromkeys("hi mr ne sa".split(), "Deva"),
    **dict.fromkeys("bn as".split(), "Beng"),
    "el": "Grek",
    "hy": "Armn",
    "ka": "Geor",
    "am": "Ethi",
    "pa": "Guru",
    "gu": "Gujr",
    "or": "Orya",
    "ta": "Taml",
    "te": "Telu",
    "kn": "Knda",
    "ml": "Mlym",
    "si": "Sinh",
    "ko": "Kore",
    "zh": "Hani",  # zh-Hans or zh-Hant: the tag says which, the pipeline is the same
    "yue": "Hant",
    "ja": "Jpan",
    "th": "Thai",
    "lo": "Laoo",
    "km": "Khmr",
    "my": "Mymr",
    "bo": "Tibt",
}
_HAN = frozenset({"Hani", "Hans", "Hant"})  # Chinese: code-switched text is common
_TURKIC = frozenset({"tr", "az"})  # dotted İ/i and dotless I/ı are two letters
_LEGACY_DATA = {
    "en": {
        "interjections": "interjections.txt",
        "uk_us": "uk_us.tsv",
        "alternatives": "alternatives_en.txt",
        "nonspeech_markers": "nonspeech.txt",
    },
    "zh": {"interjections": "fillers_zh.txt", "nonspeech_markers": "nonspeech.txt"},
}
_NEUTRAL_DATA = {"nonspeech_markers": "nonspeech.txt"}  # markers such as <noise>, [music]
DATA = Path(__file__).resolve().parent / "data"


def _data_files(lang: str) -> dict[str, str]:
    """The curated files of a language: English's and Chinese's as before; for the others the
    neutral markers, and `interjections_<lang>.txt` where the language has one."""
    if lang in _LEGACY_DATA:
        return dict(_LEGACY_DATA[lang])
    out = dict(_NEUTRAL_DATA)
    if (DATA / f"interjections_{lang}.txt").is_file():
        out["interjections"] = f"interjections_{lang}.txt"
    return out


def nsw_languages() -> frozenset[str]:
    """Primary subtags with an NSW grammar: the NSW step's `LANGUAGES` where it declares
    them (scoring/normalize/nsw.py owns that list), else English only."""
    from scoring.normalize import nsw

    return frozenset(getattr(nsw, "LANGUAGES", ("en",)))


def _canonical(tag: str) -> tuple[str, str, str | None]:
    """The tag in canonical case (language lower, Script title, REGION upper), its language
    and script subtags."""
    m = _TAG.fullmatch(tag.replace("_", "-")) if isinstance(tag, str) else None
    if m is None:
        raise ScoringError(
            f"language tag {tag!r} is not a BCP-47 tag (e.g. 'en', 'es-MX', 'pt-BR', "
            "'zh-Hans', 'sr-Latn'); fix the dataset's `language` (dataset.yaml) or --lang"
        )
    script, region = m.group("script"), m.group("region")
    parts = [m.group("lang").lower()]
    if script:
        parts.append(script.title())
    if region:
        parts.append(region.upper())
    rest = m.group(0)[m.end("region" if region else "script" if script else "lang") :]
    canon = "-".join(parts) + rest.lower()
    return canon, parts[0].split("-")[0], script.title() if script else None


def resolve(tag: str) -> Profile:
    """The profile of a BCP-47 tag; ScoringError for a malformed one."""
    canon, lang, script = _canonical(tag)
    known = lang in _SCRIPTS
    script = script or _SCRIPTS.get(lang)
    spaced = script not in UNSPACED_SCRIPTS
    legacy = lang in _LEGACY_DATA
    if script in _HAN:
        unit = "mixed"  # Chinese characters and runs of other characters (SpeechColab's)
    else:
        unit = "word" if spaced else "char"
    return Profile(
        tag=canon,
        language=lang,
        script=script,
        known=known,
        spaced=spaced,
        unit=unit,
        case="lower" if legacy else ("turkic" if lang in _TURKIC else "fold"),
        apostrophe="elision" if lang in ELISIONS else "keep",
        data=_data_files(lang),
        nsw=lang in nsw_languages(),
        legacy=legacy,
        fullwidth=lang in ("zh", "yue", "ja"),
    )
