"""The normaliser's steps, in the order they run: one registry (jiwer's `Compose`, by name).

`STEPS` lists every step once: its name (as `summary.json`'s `scorer.steps` shows it), the
`ScorerConfig` option that switches it (None: the language decides), what it does, and how it
is built for a configuration. `Scorer` builds its pipeline by walking `STEPS` in order, so the
order here is the order a text goes through; nothing else lists the steps. Presets (`PRESETS`)
are named step lists, expanded into options by `scoring.options.parse_options`; `LADDER` is the
order the report's ablation switches the steps on.

Light on purpose: the step classes are imported when a step is built, so reading the registry
(the CLI checking `--score-opt`) loads no normalisation code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scoring.languages import Profile
    from scoring.normalize.itj import Itj

# A ScorerConfig (scoring.scorer imports this module: naming the class here would make a cycle)
ScorerConfig = Any


@dataclass(frozen=True)
class Context:
    """What a step is built from: the configuration, its language profile, the data files read."""

    cfg: ScorerConfig
    profile: Profile
    files: dict[str, Path]


def _form(cfg: ScorerConfig) -> str | None:
    """The Unicode form the text is in when a late step sees it (None: UNICODE is off)."""
    return cfg.unicode_form if cfg.unicode else None


def _invisible(c: Context) -> Any:
    from scoring.normalize.invisible import Invisible

    return Invisible() if c.cfg.invisible else None


def _unicode(c: Context) -> Any:
    from scoring.normalize.invisible import UnicodeForm

    return UnicodeForm(c.cfg.unicode_form) if c.cfg.unicode else None


def _nonspeech(c: Context) -> Any:
    from scoring.normalize.nonspeech import NonSpeech

    if c.cfg.nonspeech and "nonspeech_markers" in c.files:
        return NonSpeech(c.files["nonspeech_markers"])
    return None


def _alternation(c: Context) -> Any:
    from scoring.normalize.alternation import Alternation

    # sclite's markup before any step that reads text: NSW would read the `/` of `{ a / b }`
    # as "slash" and a null word `@` as "at"
    return Alternation() if c.cfg.alternations and c.cfg.unit != "char" else None


def _nsw(c: Context) -> Any:
    from scoring.normalize.nsw import nsw_step

    # nemo's grammar for the language, else num2words, else none
    return nsw_step(c.profile.language, c.cfg.cache_dir) if c.cfg.nsw and c.profile.nsw else None


def _fullwidth(c: Context) -> Any:
    from scoring.normalize.zh import FullWidth

    return FullWidth() if c.profile.fullwidth else None


def _fragment(c: Context) -> Any:
    from scoring.normalize.alternation import Fragment

    return Fragment() if c.cfg.fragments and c.cfg.unit != "char" else None


def _optional(c: Context) -> Any:
    from scoring.normalize.optional import Optional

    return Optional() if c.cfg.optional else None


def _case(c: Context) -> Any:
    from scoring.normalize.case import AsciiCase, Case
    from scoring.normalize.script import Fold

    if not c.cfg.case:
        return None
    if c.cfg.align == "sclite":
        return AsciiCase()
    if c.profile.case == "lower":  # English and Chinese: `lower()`, as before
        return Case()
    return Fold(turkic=c.profile.case == "turkic", form=_form(c.cfg))


def _diacritics(c: Context) -> Any:
    from scoring.normalize.script import Diacritics

    return Diacritics(_form(c.cfg)) if c.cfg.diacritics == "strip" else None


def _elision(c: Context) -> Any:
    from scoring.normalize.script import Elision

    # puts its space after the clitic's apostrophe for PUNC to drop: with PUNC only
    return Elision(c.profile.elisions) if c.profile.elisions and c.cfg.punc else None


def _geresh(c: Context) -> Any:
    from scoring.normalize.script import Geresh

    # removes marks PUNC would split a word at: with PUNC only
    return Geresh() if c.profile.language in ("he", "yi") and c.cfg.punc else None


def _punc(c: Context) -> Any:
    from scoring.normalize.punc import Punc

    return Punc(c.cfg.hyphen, marks=not c.profile.legacy) if c.cfg.punc else None


def itj_step(cfg: ScorerConfig, path: Path) -> Itj:
    """ITJ on the list at `path`; with `diacritics="strip"` its words are stripped too, as the
    text is before ITJ sees it (`äh` is then `ah`)."""
    from scoring.normalize.itj import Itj
    from scoring.normalize.script import Diacritics

    step = Itj(path)
    if cfg.diacritics == "strip":
        strip = Diacritics(_form(cfg))
        step.words = frozenset(map(strip, step.words))
    return step


def _itj(c: Context) -> Any:
    if c.cfg.itj and "interjections" in c.files:
        return itj_step(c.cfg, c.files["interjections"])
    return None


def _ukus(c: Context) -> Any:
    from scoring.normalize.ukus import UkUs

    return UkUs(c.files["uk_us"]) if c.cfg.ukus and "uk_us" in c.files else None


@dataclass(frozen=True)
class Step:
    """One named step. `stage`: "text" (on the string), "token" (after tokenising) or "dae"
    (built by the scorer with the alternatives, on the hypothesis only). `on`/`off`: the
    values of `option` that switch it on and off (None: no switch of its own)."""

    name: str
    option: str | None
    what: str
    stage: str
    build: Callable[[Context], Any] | None = None
    on: object = True
    off: object = False

    @property
    def switchable(self) -> bool:
        return self.option is not None


STEPS: tuple[Step, ...] = (
    Step(
        "INVISIBLE",
        "invisible",
        "remove terminal escapes, controls, invisible format characters",
        "text",
        _invisible,
    ),
    Step(
        "UNICODE",
        "unicode",
        "Unicode normalisation (unicode_form: NFC or NFKC), digits to ASCII",
        "text",
        _unicode,
    ),
    Step(
        "NONSPEECH",
        "nonspeech",
        "remove markers such as <beep>, [noise] (nonspeech_markers)",
        "text",
        _nonspeech,
    ),
    Step(
        "ALTERNATION",
        "alternations",
        "sclite's { a / b } and null word @ (word level)",
        "text",
        _alternation,
    ),
    Step("NSW", "nsw", "verbalise numbers, money, dates... (nemo, else num2words)", "text", _nsw),
    Step("FW", None, "full-width to half-width (zh, yue, ja: the language's)", "text", _fullwidth),
    Step(
        "FRAGMENT",
        "fragments",
        "sclite's -F: th- or -ing matches a word it begins or ends",
        "text",
        _fragment,
    ),
    Step(
        "OPTIONAL",
        "optional",
        "sclite's (word): optionally deletable reference words",
        "text",
        _optional,
    ),
    Step(
        "CASE",
        "case",
        "lower-case (fold case outside en and zh; ASCII only with align=sclite)",
        "text",
        _case,
    ),
    Step(
        "DIACRITICS",
        "diacritics",
        "strip optional diacritics (accents, harakat, niqqud)",
        "text",
        _diacritics,
        on="strip",
        off="keep",
    ),
    Step(
        "ELISION",
        None,
        "split French, Italian, Catalan clitics (the language's; with PUNC)",
        "text",
        _elision,
    ),
    Step("GERESH", None, "remove Hebrew geresh and gershayim (he, yi; with PUNC)", "text", _geresh),
    Step("PUNC", "punc", "remove Unicode punctuation (hyphen: space, keep or join)", "text", _punc),
    Step("ITJ", "itj", "drop interjections and fillers (interjections)", "token", _itj),
    Step("UK-US", "ukus", "British to American spelling (uk_us)", "token", _ukus),
    Step("DAE", "dae", "alternative spellings on the hypothesis only (alternatives)", "dae"),
    Step(
        "COMPOUNDS", "compounds", "a word joined on one side matches its parts (inside DAE)", "dae"
    ),
)

BY_NAME: dict[str, Step] = {s.name: s for s in STEPS}

# The report's ablation order (asrbench/report/ablation.py): SpeechColab's Table VII first
# (+CASE +PUNC +ITJ +UK-US +NSW), then the steps added since, in the order they came, DAE last.
LADDER: tuple[str, ...] = (
    "CASE",
    "PUNC",
    "ITJ",
    "UK-US",
    "NSW",
    "INVISIBLE",
    "UNICODE",
    "NONSPEECH",
    "OPTIONAL",
    "ALTERNATION",
    "FRAGMENT",
    "DAE",
)

# The steps on by default (every switch at its default; the language adds FW, ELISION, GERESH
# and decides COMPOUNDS).
_DEFAULT = tuple(
    s.name for s in STEPS if s.switchable and s.name not in ("DIACRITICS", "FRAGMENT", "COMPOUNDS")
)

# Presets: named step lists (the switchable steps that run), today's flag combinations.
# `align` is not a step: the sclite preset also sets it (scoring.options.PRESET_SETTINGS).
PRESETS: dict[str, tuple[str, ...]] = {
    "default": _DEFAULT,
    "no-dae": tuple(s for s in _DEFAULT if s != "DAE"),
    # the sclite parity tests' steps: what sclite itself does (case and punctuation aside)
    "sclite": tuple(s for s in _DEFAULT if s not in ("NSW", "ITJ", "UK-US", "DAE")),
    # the text as written, no step at all: the ablation's first row (`raw`)
    "raw": (),
    # Rev's fstalign (the Earnings-21/22 tables; docs/SCORING.md#the-fstalign-preset): tokens
    # compared as written, lower-cased (src/OneBestFstLoader.cpp, src/Nlp.cpp: ICU toLower
    # unless --use-case): no PUNC, so "1" against "1%" and "1,300" against "1300" are errors
    # and a token of punctuation alone is a word; an NLP file's punctuation column is not part
    # of its token (src/Nlp.cpp pushes it as a token only with --use-punctuation;
    # scoring.nlp.hypothesis_text). Fillers kept as words (no ITJ step: "uh", "um" are
    # reference tokens), tags such as <inaudible> counted as words (no NONSPEECH: src/Nlp.cpp
    # adds them to the vocabulary as tokens), hyphenated words whole but matching their parts
    # (`hyphen=synonym`: PRESET_SETTINGS, scoring.synonyms), no UK-US or alternative
    # spellings (synonyms only with --syn). No NSW: fstalign reads no number; an NLP
    # reference's normalisation sidecar gives an entity's readings, its written tokens among
    # them (scoring/nlp.py), as sclite alternations: ALTERNATION reads them.
    "fstalign": ("INVISIBLE", "UNICODE", "ALTERNATION", "CASE"),
}


def build(stage: str, ctx: Context) -> list[Any]:
    """The steps of `stage` ("text" or "token") for a configuration, built in order."""
    built = (s.build(ctx) for s in STEPS if s.stage == stage and s.build is not None)
    return [step for step in built if step is not None]
