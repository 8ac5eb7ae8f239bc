"""The perturbation registry: named, parameterised, seeded functions of (audio, sample rate).

Every perturbation is registered once with its family, its parameters (typed, with ranges) and
its severity table (severity -> parameter values). A perturbation function has the signature
`fn(x, sr, rng, ctx, **params) -> y` where `x` is mono float64 audio in [-1, 1], `rng` is a
`numpy.random.Generator` derived from (seed, spec, utterance ID) and `ctx` gives access to the
dataset (for babble from other speakers) and user-supplied noise folders.

The family modules register into it; `asrbench.perturb.catalog` imports them all and looks
perturbations up by name (this module imports none of them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from asrbench.errors import InputError


class SpecError(InputError):
    """A perturbation spec that cannot be used; the message lists what exists."""


@dataclass(frozen=True)
class Param:
    """One parameter of a perturbation: its type, allowed range or choices, default."""

    name: str
    kind: type = float  # float, int or str
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None  # None = required unless a severity supplies it
    help: str = ""
    allow: tuple[str, ...] = ()  # extra literal values accepted for numeric params ("clean")

    def coerce(self, raw: Any, where: str) -> Any:
        """Convert a spec string (or value) to this parameter's type; SpecError if impossible."""
        if isinstance(raw, str) and raw in self.allow:
            return raw
        if self.kind is str:
            value = str(raw)
            if self.choices and value not in self.choices:
                raise SpecError(
                    f"{where}: {self.name}={value!r} is not one of {', '.join(self.choices)}"
                )
            return value
        try:
            num = self.kind(float(raw)) if self.kind is int else float(raw)
            if self.kind is int and float(raw) != int(float(raw)):
                raise ValueError
        except (TypeError, ValueError):
            extra = f" or {', '.join(self.allow)}" if self.allow else ""
            raise SpecError(
                f"{where}: {self.name}={raw!r} is not "
                f"{'an integer' if self.kind is int else 'a number'}{extra}"
            ) from None
        if not np.isfinite(num):
            raise SpecError(f"{where}: {self.name}={raw!r} must be finite")
        if (self.lo is not None and num < self.lo) or (self.hi is not None and num > self.hi):
            raise SpecError(f"{where}: {self.name}={num:g} is outside [{self.lo:g}, {self.hi:g}]")
        return num

    def describe(self) -> str:
        if self.choices:
            rng = "|".join(self.choices)
        elif self.lo is not None or self.hi is not None:
            rng = f"{self.lo:g}..{self.hi:g}"
        else:
            rng = self.kind.__name__
        if self.allow:
            rng += "|" + "|".join(self.allow)
        dflt = "" if self.default is None else f"={self.default}"
        return f"{self.name}{dflt} ({rng})"


PerturbFn = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Perturbation:
    """A registered perturbation."""

    name: str
    family: str
    fn: PerturbFn
    params: tuple[Param, ...]
    severities: dict[int, dict[str, Any]] = field(default_factory=dict)
    description: str = ""
    keeps_length: bool = True  # False for tempo/speed/frame drops: output duration differs
    validate: Callable[[dict[str, Any]], None] | None = None  # cross-parameter checks
    # what the output depends on beyond the parameters (an attack's target model): it enters
    # the cache key and provenance of derived audio (set after registering: `with_identity`)
    identity: Callable[[dict[str, Any]], Any] | None = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        names = ", ".join(p.name for p in self.params) or "none"
        raise SpecError(f"{self.name}: unknown parameter {name!r}; parameters: {names}")

    def resolve(self, severity: int | None, given: dict[str, str]) -> dict[str, Any]:
        """Defaults, then the severity's values, then explicit parameters; all validated."""
        where = self.name
        values: dict[str, Any] = {p.name: p.default for p in self.params}
        if severity is not None:
            if not self.severities:
                raise SpecError(
                    f"{where}: has no severities; give parameters instead "
                    f"({', '.join(p.describe() for p in self.params) or 'none'})"
                )
            if severity not in self.severities:
                lo, hi = min(self.severities), max(self.severities)
                raise SpecError(f"{where}: severity {severity} is out of range; use {lo}..{hi}")
            values.update(self.severities[severity])
        for key, raw in given.items():
            values[key] = self.param(key).coerce(raw, where)
        missing = [k for k, v in values.items() if v is None]
        if not missing and self.validate:
            self.validate(values)
        if missing:
            sev = ""
            if self.severities:
                sev = f"a severity {min(self.severities)}..{max(self.severities)} or "
            raise SpecError(
                f"{where}: give {sev}{', '.join(missing)} "
                f"(e.g. {self.name}:{min(self.severities) if self.severities else ''})"
            )
        return values


REGISTRY: dict[str, Perturbation] = {}


def register(
    name: str,
    family: str,
    params: tuple[Param, ...] = (),
    severities: dict[int, dict[str, Any]] | None = None,
    description: str = "",
    keeps_length: bool = True,
    validate: Callable[[dict[str, Any]], None] | None = None,
) -> Callable[[PerturbFn], PerturbFn]:
    """Decorator adding a perturbation function to the registry under `name`."""

    def deco(fn: PerturbFn) -> PerturbFn:
        if name in REGISTRY:
            raise RuntimeError(f"perturbation {name!r} registered twice")
        REGISTRY[name] = Perturbation(
            name,
            family,
            fn,
            params,
            dict(severities or {}),
            description or (fn.__doc__ or "").strip().split("\n")[0],
            keeps_length,
            validate,
        )
        return fn

    return deco


def with_identity(name: str, identity: Callable[[dict[str, Any]], Any]) -> None:
    """Give the registered perturbation `name` an identity hook (see Perturbation.identity)."""
    REGISTRY[name] = replace(REGISTRY[name], identity=identity)


def sev_table(param: str, values: list[Any], **fixed: Any) -> dict[int, dict[str, Any]]:
    """Severity table {1: {param: values[0], **fixed}, 2: ...}."""
    return {i + 1: {param: v, **fixed} for i, v in enumerate(values)}
