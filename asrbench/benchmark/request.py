"""The job spec: how every cell of a benchmark job runs, from a request file and the flags.

    # request.yaml
    models: [pocketsphinx_en, whisper_tiny_en]
    datasets: [mini_en, /data/my_set]
    options: {jobs: 2, max_utts: 20, seed: 0, runner: docker, results: results,
              scorer: {nsw: false}, env: {OPENAI_BASE_URL: "http://127.0.0.1:8000/v1"}}

`load_request` reads and checks a file into a `Request` (an error names the file and the key);
`RequestOptions` is what a file or the command line sets (None: not set); `JobSpec.build` lays
the flags over the file and fills in the defaults. The frozen `JobSpec` is what
`run_benchmark` and `run_matrix` take and carry through prepare, run and finish.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import yaml

from asrbench.benchmark.errors import RequestError
from asrbench.errors import InputError
from asrbench.runners import RunOptions

T = TypeVar("T")

# A portable environment variable name (POSIX): what every runner passes on unchanged.
SEGMENT_MODES = ("auto", "none", "vad", "windows")  # see asrbench/benchmark/pieces.py

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _frozen(items: Mapping[str, T]) -> Mapping[str, T]:
    """A read-only copy, keys sorted (the order a file or the flags gave means nothing)."""
    return MappingProxyType(dict(sorted(items.items())))


def check_env(env: Mapping[Any, Any], where: str) -> Mapping[str, str]:
    """Settings for the model programs (`--env`, `env:`): portable names, text values; an
    InputError naming `where` and the setting otherwise."""
    for name, value in env.items():
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise InputError(
                f"{where} {name!r}: not an environment variable name (letters, digits and _, "
                "not starting with a digit)"
            )
        if not isinstance(value, str):
            raise InputError(
                f'{where}.{name}: {value!r} is not a text; quote it ({name}: "{value}") so the '
                "program gets exactly what was written"
            )
        if "\0" in value:
            raise InputError(f"{where}.{name}: the value holds a NUL character")
    return _frozen(env)


def _check_seconds(value: float | None, what: str) -> None:
    if value is not None and not (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    ):
        raise InputError(f"{what} {value!r}: give a number of seconds above 0")


@dataclass(frozen=True)
class JobSpec:
    """How every cell of a job runs: one value per option, the defaults filled in.

    `timeout_s`, `memory`, `cpus` and `env` are the runner's options (`run_options()`);
    `utt_timeout_s` and `gpus` are added per model (a card with `gpu: none` gets no GPU);
    `scorer_options` go to the scorer; `replace`, `progress` and `command` say how the cells
    are stored, shown and recorded; `force_language` runs a card on a dataset whose language
    it does not list (`--force`, marked in summary.json). `env` and `scorer_options` are
    read-only mappings.
    """

    runner: str = "auto"
    results_root: Path | None = None  # None: $ASRBENCH_RESULTS or ./results
    cache_root: Path | None = None  # None: $ASRBENCH_CACHE/hyps
    jobs: int = 1
    max_utts: int | None = None  # None: every utterance
    seed: int = 0
    utt_timeout_s: float | None = None
    timeout_s: float = RunOptions.timeout_s
    memory: str | None = None
    cpus: float | None = None
    gpus: str | None = None  # "all" or a count
    env: Mapping[str, str] = field(default_factory=dict)
    scorer_options: Mapping[str, Any] = field(default_factory=dict)
    replace: bool = False
    force_language: bool = False  # run a card on a language it does not list (marked)
    progress: bool = True
    progress_every_s: float = 10.0
    command: tuple[str, ...] | None = None  # None: sys.argv
    # long recordings (docs/BENCHMARK.md, "Long recordings"): auto | none | vad | windows,
    # and the segmenter's parameters over the card's limit
    segment: str = "auto"
    segment_options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1:
            raise InputError(f"--jobs {self.jobs!r}: give at least 1")
        _check_seconds(self.utt_timeout_s, "utt_timeout_s")
        _check_seconds(self.timeout_s, "timeout_s")
        object.__setattr__(self, "env", check_env(self.env, "env"))
        object.__setattr__(self, "scorer_options", _frozen(self.scorer_options))
        object.__setattr__(self, "segment_options", _frozen(self.segment_options))
        if self.segment not in SEGMENT_MODES:
            raise InputError(f"--segment {self.segment!r}: give one of {', '.join(SEGMENT_MODES)}")
        if self.gpus is not None:
            object.__setattr__(self, "gpus", str(self.gpus))
        for name in ("results_root", "cache_root"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, Path(getattr(self, name)))
        if self.command is not None:
            object.__setattr__(self, "command", tuple(self.command))

    def run_options(self) -> RunOptions:
        """The runner's options, before the per-model ones (utterance timeout, GPUs)."""
        return RunOptions(
            timeout_s=self.timeout_s, memory=self.memory, cpus=self.cpus, env=dict(self.env)
        )

    @classmethod
    def build(
        cls,
        file: RequestOptions,
        flags: RequestOptions,
        *,
        replace: bool = False,
        progress: bool = True,
        command: Iterable[str] | None = None,
        force_language: bool = False,
    ) -> JobSpec:
        """The flags over the file's options over the defaults; `env` and `scorer` per key."""
        d = cls()
        return cls(
            runner=_first(flags.runner, file.runner, d.runner),
            results_root=_first(flags.results, file.results, d.results_root),
            cache_root=_first(flags.cache, file.cache, d.cache_root),
            jobs=_first(flags.jobs, file.jobs, d.jobs),
            max_utts=_first(flags.max_utts, file.max_utts, d.max_utts),
            seed=_first(flags.seed, file.seed, d.seed),
            utt_timeout_s=_first(flags.utt_timeout_s, file.utt_timeout_s, d.utt_timeout_s),
            timeout_s=_first(flags.timeout_s, file.timeout_s, d.timeout_s),
            memory=_first(flags.memory, file.memory, d.memory),
            cpus=_first(flags.cpus, file.cpus, d.cpus),
            gpus=_first(flags.gpus, file.gpus, d.gpus),
            env={**file.env, **flags.env},
            scorer_options={**file.scorer, **flags.scorer},
            replace=replace,
            force_language=force_language,
            progress=progress,
            command=tuple(command) if command is not None else None,
            segment=_first(flags.segment, file.segment, d.segment),
            segment_options={**file.segment_opt, **flags.segment_opt},
        )


def _first(flag: T | None, file: T | None, default: T) -> T:
    if flag is not None:
        return flag
    return file if file is not None else default


@dataclass(frozen=True)
class RequestOptions:
    """The options a request file (`options:`) or the command line sets; None: not set.

    A file's keys are these names: `results` and `cache` are folders, `scorer` the scorer's
    options (as `--score-opt`), `env` settings for the model programs (as `--env`).
    """

    runner: str | None = None
    results: Path | None = None
    cache: Path | None = None
    jobs: int | None = None
    max_utts: int | None = None
    seed: int | None = None
    utt_timeout_s: float | None = None
    timeout_s: float | None = None
    memory: str | None = None
    cpus: float | None = None
    gpus: str | None = None
    scorer: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    segment: str | None = None
    segment_opt: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scorer", _frozen(self.scorer))
        object.__setattr__(self, "env", _frozen(self.env))
        object.__setattr__(self, "segment_opt", _frozen(self.segment_opt))

    @classmethod
    def from_file(cls, raw: object, path: Path) -> RequestOptions:
        """The `options:` of request file `path`, every value checked (RequestError naming
        the file and the key) and typed."""
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise RequestError(f"request {path}: options must be a mapping ({{jobs: 2, ...}})")
        bad = set(raw) - set(_READERS)
        if bad:
            raise RequestError(
                f"request {path}: unknown option(s) {sorted(map(str, bad))}; known: "
                f"{', '.join(sorted(_READERS))}"
            )
        values: dict[str, Any] = {}
        for key, value in raw.items():
            if value is None:
                continue  # `key:` with nothing after it: not set
            try:
                values[key] = _READERS[key](value)
            except InputError as exc:  # from check_env: it names the setting
                raise RequestError(f"request {path}: options.{exc}") from None
            except (TypeError, ValueError) as exc:
                raise RequestError(f"request {path}: options.{key} {exc}") from None
        return cls(**values)


def _whole(low: int) -> Callable[[object], int]:
    def read(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{value!r}: give a whole number, at least {low}")
        return value

    return read


def _number(value: object, what: str = "a number") -> float:
    """A number above 0, kept as written (2 stays 2: run.json records it as given)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{value!r}: give {what} above 0")
    return value


def _seconds(value: object) -> float:
    return float(_number(value, "a number of seconds"))


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{value!r}: give a text")
    return value


def _memory(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return str(value)  # bytes
    return _text(value)


def _gpus(value: object) -> str:
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if text != "all" and not (isinstance(text, str) and text.isdigit()):
        raise ValueError(f"{value!r}: give all or a number of GPUs")
    return text


def _scorer(value: object) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{value!r}: give the scorer's options as a mapping, e.g. {{nsw: false}}")
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, (bool, int, float, str)):
            raise ValueError(f"{k}: {v!r}: give true/false, a number or a text")
    from scoring.options import parse_options  # (loads the step registry: only when asked)

    return parse_options(value, "")  # the one check, as --score-opt's (ScoringError: a ValueError)


def _env(value: object) -> Mapping[str, str]:
    if not isinstance(value, dict):
        raise ValueError(f'{value!r}: give a mapping NAME: "value", e.g. {{MY_SETTING: "on"}}')
    return check_env(value, "env")


def _segment(value: object) -> str:
    if value not in SEGMENT_MODES:
        raise ValueError(f"{value!r}: give one of {', '.join(SEGMENT_MODES)}")
    return str(value)


def _segment_opt(value: object) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(
            f"{value!r}: give the segmenter's parameters as a mapping, e.g. {{threshold: 0.4}}"
        )
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, (bool, int, float, str)):
            raise ValueError(f"{k}: {v!r}: give true/false, a number or a text")
    from scoring.options import parse_options  # (loads the step registry: only when asked)

    return parse_options(value, "")  # the one check, as --score-opt's (ScoringError: a ValueError)


_READERS: dict[str, Callable[[Any], Any]] = {
    "runner": _text,
    "results": lambda v: Path(_text(v)),
    "cache": lambda v: Path(_text(v)),
    "jobs": _whole(1),
    "max_utts": _whole(1),
    "seed": _whole(0),
    "utt_timeout_s": _seconds,
    "timeout_s": _seconds,
    "memory": _memory,
    "cpus": _number,
    "gpus": _gpus,
    "scorer": _scorer,
    "env": _env,
    "segment": _segment,
    "segment_opt": _segment_opt,
}


@dataclass(frozen=True)
class Request:
    """The cells to run (every model on every dataset) and the options they share."""

    models: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    options: RequestOptions = field(default_factory=RequestOptions)

    def cells(self) -> list[tuple[str, str]]:
        return [(m, d) for m in self.models for d in self.datasets]


def load_request(path: Path) -> Request:
    """Parse and check a request file; errors name the file and the key."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RequestError(f"request {path}: cannot read it: {exc}") from None
    if not isinstance(raw, dict):
        raise RequestError(f"request {path}: top level must be a mapping with models, datasets")
    unknown = set(raw) - {"models", "datasets", "options"}
    if unknown:
        raise RequestError(
            f"request {path}: unknown field(s) {sorted(map(str, unknown))}; use models, "
            "datasets, options"
        )
    lists = {}
    for key in ("models", "datasets"):
        value = raw.get(key)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise RequestError(f"request {path}: {key} must be a non-empty list of IDs/paths")
        lists[key] = tuple(value)
    return Request(
        lists["models"], lists["datasets"], RequestOptions.from_file(raw.get("options"), path)
    )
