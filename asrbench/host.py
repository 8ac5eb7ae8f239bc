"""This machine's CPU: its instruction-set flags, model name and x86-64 level, read in one place.

A model card's `cpu:` names the flags its runtime needs beyond the x86-64 baseline (moonshine-cpp's
libmoonshine is compiled for AVX-512 and dies with SIGILL without it); `check_cpu` refuses such a
model before anything is built or run. `run.json` records `cpu_model` and `isa_level` because a
runtime that dispatches at run time (CTranslate2, ONNX Runtime) decodes differently, and at
another speed, with and without AVX-512.
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from asrbench.errors import InputError

if TYPE_CHECKING:
    from asrbench.modelcard import Model

CPUINFO = Path("/proc/cpuinfo")

# The x86-64 psABI micro-architecture levels (x86-64-v2/v3/v4), highest first, by the flag
# names Linux gives in /proc/cpuinfo (LZCNT shows as `abm`). Each level includes the ones below.
ISA_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "x86-64-v4 (avx512)",
        frozenset({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}),
    ),
    (
        "x86-64-v3 (avx2)",
        frozenset({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}),
    ),
    ("x86-64-v2", frozenset({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"})),
)
BASELINE = "x86-64 baseline"


class CpuError(InputError):
    """A model whose runtime needs instructions this CPU lacks (it would die with SIGILL)."""


def _cpuinfo_field(names: tuple[str, ...], cpuinfo: Path) -> str | None:
    """The value of the first line of `cpuinfo` whose key is one of `names` (the first CPU's)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in names:
            return value.strip()
    return None


def cpu_flags(cpuinfo: Path | None = None) -> frozenset[str]:
    """The instruction-set flags of this machine's CPU (`flags` on x86, `Features` on ARM), or
    of the `cpuinfo` file given; empty where it cannot be read (not Linux): unknown, not 'none'."""
    if cpuinfo is None:
        return _this_cpu_flags()
    value = _cpuinfo_field(("flags", "Features"), cpuinfo)
    return frozenset(value.split()) if value else frozenset()


@functools.cache  # every run asks, and /proc/cpuinfo grows with the number of cores
def _this_cpu_flags() -> frozenset[str]:
    return cpu_flags(CPUINFO)


def cpu_model(cpuinfo: Path = CPUINFO) -> str | None:
    """The CPU's model name as the kernel reports it, else what Python's platform knows."""
    return _cpuinfo_field(("model name", "Model name"), cpuinfo) or platform.processor() or None


def isa_level(flags: Iterable[str] | None = None, machine: str | None = None) -> str | None:
    """The highest x86-64 psABI level `flags` (default: this CPU's) cover, e.g.
    'x86-64-v4 (avx512)'; None on another architecture or when the flags are unknown."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return None
    have = cpu_flags() if flags is None else frozenset(flags)
    if not have:
        return None
    for i, (name, _) in enumerate(ISA_LEVELS):
        # a level counts only with every level below it (v4 without v3 is not v4)
        if all(need <= have for _, need in ISA_LEVELS[i:]):
            return name
    return BASELINE


def missing_flags(required: Iterable[str], flags: Iterable[str] | None = None) -> list[str]:
    """The `required` flags that `flags` (default: this CPU's) lack, in the order given; none
    when the flags cannot be read (the check needs Linux's /proc/cpuinfo)."""
    have = cpu_flags() if flags is None else frozenset(flags)
    if not have:
        return []
    return [f for f in required if f not in have]


def check_cpu(model: Model, flags: Iterable[str] | None = None) -> None:
    """Refuse a model whose card's `cpu:` names flags this CPU lacks (CpuError, exit 2),
    before its image or virtualenv is made: its runtime would die with SIGILL."""
    missing = missing_flags(model.card.cpu, flags)
    if missing:
        raise CpuError(
            f"model {model.id}: its runtime needs CPU instructions this machine lacks "
            f"({', '.join(missing)}; {model.card_path} field 'cpu'); run it on a CPU that "
            "has them, or pick a model whose card does not need them (ops/models)"
        )
