"""Option types shared by the subcommands, so the same flag means the same thing everywhere."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import typer

from asrbench.errors import InputError

ModelsOpt = typer.Option(None, "-m", "--model", help="model ID, folder or ID@VERSION (repeatable)")
DatasetsOpt = typer.Option(
    None, "-d", "--dataset", help="dataset ID, folder or ID@VERSION (repeatable)"
)
RunnerOpt = typer.Option(None, "--runner", help="docker, local or auto (default auto)")
ResultsOpt = typer.Option(
    None, "--results", help="results root (default $ASRBENCH_RESULTS, else results/)"
)
JobsOpt = typer.Option(None, "-j", "--jobs", help="parallel containers/processes")
SeedOpt = typer.Option(None, "--seed", help="seed (default 0)")
JsonOpt = typer.Option(False, "--json", help="print machine-readable JSON")
QuietOpt = typer.Option(False, "--quiet", "-q", help="no progress bar")
MaxUttsOpt = typer.Option(
    None, "--max-utts", help="a seeded sample of N utterances (--seed), as ops/benchmark takes"
)
UttsOpt = typer.Option(
    None, "--utts", help="subset: comma-separated IDs (N alone: the same as --max-utts N)"
)


def campaign_subset(utts: str | None, max_utts: int | None) -> list[str] | int | None:
    """A campaign's selection: the IDs of `--utts`, or N for the seeded sample of `--max-utts N`
    (`--utts N` kept as its old spelling); None for every utterance."""
    if utts and max_utts is not None:
        raise InputError("--utts and --max-utts both given: keep one")
    if max_utts is not None:
        return max_utts
    if not utts:
        return None
    return int(utts) if utts.isdigit() else [u for u in utts.split(",") if u]


def parse_pairs(items: Iterable[str] | None, flag: str) -> dict[str, str]:
    """`KEY=VALUE` items into a dict; a malformed or repeated key is an InputError."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"{flag} {item!r}: expected KEY=VALUE")
        if key in out:
            raise InputError(f"{flag} {key} given twice ({out[key]!r} and {value!r}); keep one")
        out[key] = value
    return out


def typed_value(value: str) -> bool | int | float | str:
    """`true`/`false` -> bool, integers -> int, decimals -> float, else the string."""
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def typed_pairs(items: Iterable[str] | None, flag: str) -> dict[str, bool | int | float | str]:
    """`parse_pairs` with each value through `typed_value`; a value that reads as nan or
    infinity is an InputError naming the flag and key, as the float options refuse them."""
    out = {k: typed_value(v) for k, v in parse_pairs(items, flag).items()}
    for key, value in out.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{flag} {key}={value}: not a finite number; give a number")
    return out


def score_options(items: Iterable[str] | None, flag: str = "--score-opt") -> dict[str, object]:
    """`--score-opt KEY=VALUE` items as scorer options, read by the scorer's one option parser
    (`scoring.options.parse_options`: the names, coercion and errors of ops/score's flags)."""
    from scoring.options import parse_options  # (loads the step registry: only when used)

    return parse_options(parse_pairs(items, flag), flag)


def score_flag_options(
    params: Mapping[str, object], preset: str | None, items: Iterable[str] | None
) -> dict[str, object]:
    """ops/score's scorer options: its parameters named as scorer options (None: the flag
    was not given), the preset, then `--score-opt` items, through the scorer's one option
    parser (`scoring.options.flag_options`)."""
    from scoring.options import OPTIONS, flag_options

    flags = {name: value for name, value in params.items() if name in OPTIONS}
    return flag_options(flags, preset, "ops/score", parse_pairs(items, "--score-opt"))


def existing_file(path: Path, what: str) -> Path:
    if not Path(path).is_file():
        raise InputError(f"{what} {path}: no such file")
    return Path(path)


def positive_seconds(value: object, flag: str) -> float | None:
    """A duration option (`--timeout`, `--utt-timeout`): None, or a finite number of seconds
    above 0; anything else (negative, 0, NaN, infinite, not a number) is an InputError."""
    if value is None:
        return None
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise InputError(f"{flag} {value!r}: give a number of seconds above 0")
    return seconds
