"""The scorer's options: one table, one parser, for every way they are given.

`ops/score`'s flags, `ops/benchmark --score-opt KEY=VALUE`, a request file's `options.scorer`
and the platform's own calls all reach the scorer through `parse_options`: the same names (the
`ScorerConfig` fields; a flag is the name with `-` for `_`), the same coercion of a text value
(`true`/`false`, a whole number, a finite number, a text), the same errors. `preset=NAME`
(`--preset NAME`) expands into the options of a named step list (`scoring.normalize.steps`);
an option given beside it wins. Values are checked here for their type; their range and
choices (`unit`, `align`...) are `ScorerConfig`'s to check, once, wherever it is built.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from scoring.errors import ScoringError
from scoring.normalize.steps import BY_NAME, PRESETS, STEPS


@dataclass(frozen=True)
class Option:
    """One scorer option: its type (`bool`, `int`, `float`, `str`), default, and whether None
    (the language's or the mode's default) may be given."""

    name: str
    kind: type
    default: object
    nullable: bool = False

    @property
    def flag(self) -> str:
        """Its spelling as a flag (`unicode_form` -> `--unicode-form`)."""
        return "--" + self.name.replace("_", "-")


def _opt(name: str, kind: type, default: object, nullable: bool = False) -> Option:
    return Option(name, kind, default, nullable)


# Every ScorerConfig field a user may set, in its order (`lang` comes from the data's language,
# `cache_dir` from the platform's settings; a test keeps this table and the fields in step).
OPTIONS: dict[str, Option] = {
    o.name: o
    for o in (
        _opt("unit", str, None, nullable=True),
        _opt("invisible", bool, True),
        _opt("unicode", bool, True),
        _opt("unicode_form", str, "NFC"),
        _opt("case", bool, True),
        _opt("punc", bool, True),
        _opt("itj", bool, True),
        _opt("ukus", bool, True),
        _opt("nsw", bool, True),
        _opt("dae", bool, True),
        _opt("nonspeech", bool, True),
        _opt("optional", bool, True),
        _opt("hyphen", str, "space"),
        _opt("interjections", str, None, nullable=True),
        _opt("uk_us", str, None, nullable=True),
        _opt("alternatives", str, None, nullable=True),
        _opt("nonspeech_markers", str, None, nullable=True),
        _opt("bootstrap", int, 1000),
        _opt("confidence", float, 0.95),
        _opt("seed", int, 0),
        _opt("engine", str, "auto"),
        _opt("max_enum", int, 64),
        _opt("align", str, "minimal"),
        _opt("diacritics", str, "keep"),
        _opt("compounds", bool, None, nullable=True),
        _opt("alternations", bool, True),
        _opt("fragments", bool, False),
        _opt("ignore_id_case", bool, None, nullable=True),
    )
}
# Settings a preset makes besides its steps (the exact sclite mode is an aligner, not a step).
PRESET_SETTINGS: dict[str, dict[str, object]] = {
    "sclite": {"align": "sclite"},
    # fstalign keeps a hyphenated word one token, and its synonyms let the parts match it both
    # ways, a cut-off (`the-`) its stem (src/SynonymEngine.cpp; scoring.synonyms); its walk
    # chooses among equally cheap paths its own way (scoring.sclite_align._fst_table)
    "fstalign": {"hyphen": "synonym", "align": "fstalign"},
}
NOT_OPTIONS = {
    "lang": "scorer option 'lang' comes from the dataset's language (ops/score: --lang); do not "
    "pass it as --score-opt",
}


def preset_options(name: str) -> dict[str, object]:
    """The options of preset `name`: each switch whose value differs from its default (so the
    default preset is `{}`, and a preset names the same scorer as the options it stands for)."""
    if name not in PRESETS:
        raise ScoringError(f"preset {name!r}: give one of {', '.join(PRESETS)}")
    chosen = set(PRESETS[name])
    out: dict[str, object] = {}
    for step in STEPS:
        if step.option is None:
            continue
        value = step.on if step.name in chosen else step.off
        default = OPTIONS[step.option].default
        if value != default and not (default is None and value is False):
            out[step.option] = value
    out.update(PRESET_SETTINGS.get(name, {}))
    return out


def preset_steps(name: str) -> tuple[str, ...]:
    """The switchable steps preset `name` runs, in the pipeline's order."""
    if name not in PRESETS:
        raise ScoringError(f"preset {name!r}: give one of {', '.join(PRESETS)}")
    return tuple(s for s in PRESETS[name] if s in BY_NAME)


def _preset(name: object, where: str) -> str:
    if name not in PRESETS:
        raise ScoringError(_at(where, f"preset={name!r}: give one of {', '.join(PRESETS)}"))
    return str(name)


def _at(where: str, text: str) -> str:
    return f"{where} {text}" if where else text


def _coerce(opt: Option, value: object, where: str) -> object:
    """`value` as `opt`'s type: a text is read (true/false, a number), a typed value checked."""
    if value is None and opt.nullable:
        return None
    kind = opt.kind
    if isinstance(value, str) and kind is not str:
        text = value.strip().lower()
        if kind is bool and text in ("true", "false"):
            return text == "true"
        try:
            value = int(text) if kind is int else float(text)
        except ValueError:
            pass  # refused below, naming the type wanted
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
        if kind is float and not math.isfinite(value):  # type: ignore[arg-type]
            raise ScoringError(
                _at(where, f"{opt.name}={value}: not a finite number; give a number")
            )
        return value
    want = {bool: "true or false", int: "a whole number", float: "a number", str: "a text"}
    raise ScoringError(_at(where, f"{opt.name}={value!r}: give {want[kind]}"))


def parse_options(given: Mapping[str, object] | None, where: str = "--score-opt") -> dict:
    """The scorer options `given` (texts from the command line, or typed values), each name
    known and each value of its type; `preset` expanded (the options given beside it win).
    `where` names the source in errors (`--score-opt`, `ops/score`, a request file's key).
    Raises ScoringError (an input error) naming the option and what to give."""
    given = dict(given or {})
    out: dict[str, object] = {}
    preset = given.pop("preset", None)
    if preset is not None:
        out.update(preset_options(_preset(preset, where)))
    for key, value in given.items():
        if key in NOT_OPTIONS:
            raise ScoringError(NOT_OPTIONS[key])
        if key not in OPTIONS:
            known = ", ".join(["preset", *OPTIONS])
            raise ScoringError(_at(where, f"{key}: unknown scorer option; known: {known}"))
        out[key] = _coerce(OPTIONS[key], value, where)
    return out


# The options ops/score records in summary.json's `scorer.options` even at their default (the
# switches it always had, the Unicode form, the bootstrap), so its summaries stay as they were;
# any other option is recorded where it differs from its default.
ALWAYS_RECORDED = (
    "case",
    "punc",
    "itj",
    "ukus",
    "nsw",
    "dae",
    "nonspeech",
    "optional",
    "invisible",
    "unicode",
    "unicode_form",
    "bootstrap",
)


def flag_options(
    given: Mapping[str, object],
    preset: str | None,
    where: str,
    extra: Mapping[str, object] | None = None,
) -> dict:
    """A command's option flags (`given`: name -> value, None where the flag was not given)
    as scorer options, through `parse_options`: a flag not given takes the preset's value,
    else the default; `extra` (`--score-opt KEY=VALUE`, any option, with or without a flag of
    its own) comes last and wins. Recorded as `ALWAYS_RECORDED` says, any other option where
    it differs from its default (so `--score-opt dae=false` records what `--no-dae` does)."""
    base = preset_options(_preset(preset, where)) if preset is not None else {}
    merged = {name: base.get(name) if value is None else value for name, value in given.items()}
    merged.update({k: v for k, v in base.items() if k not in given})  # no flag of its own
    merged.update(parse_options(extra, "--score-opt"))
    out: dict[str, object] = {}
    for name, value in merged.items():
        if value is None:
            value = OPTIONS[name].default
        if name in ALWAYS_RECORDED or value != OPTIONS[name].default:
            out[name] = value
    return parse_options(out, where)
