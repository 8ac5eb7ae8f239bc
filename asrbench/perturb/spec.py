"""Spec syntax: `name[:SEVERITY][,key=value...]`, composed left to right with `+`.

Examples: `gaussian_noise:3`, `echo:delay=250`, `aurora:set=A,noise=babble,snr=10`,
`rir:2+gsm`. A bare integer inside the argument list is the severity; `key=value` pairs override
the severity's values. The canonical form (sorted keys, normalised numbers) names caches and
derived datasets, so equivalent spellings share them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from asrbench.perturb.catalog import get
from asrbench.perturb.registry import Perturbation, SpecError

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Step:
    """One resolved step of a spec."""

    perturbation: Perturbation
    severity: int | None
    given: tuple[tuple[str, str], ...]
    params: dict[str, Any]

    @property
    def name(self) -> str:
        return self.perturbation.name

    def canonical(self) -> str:
        items = [] if self.severity is None else [str(self.severity)]
        items += [f"{k}={_norm(v)}" for k, v in sorted(self.given)]
        return self.name + (":" + ",".join(items) if items else "")


def _norm(value: str) -> str:
    try:
        f = float(value)
    except ValueError:
        return value
    return f"{f:g}"


def parse_spec(text: str) -> list[Step]:
    """Parse and validate a spec; SpecError says what is wrong and what exists."""
    if not text or not text.strip():
        raise SpecError("empty perturbation spec; e.g. gaussian_noise:2 (see `ops/perturb list`)")
    steps: list[Step] = []
    for part in text.strip().split("+"):
        part = part.strip()
        name, _, args = part.partition(":")
        name = name.strip()
        if not _NAME_RE.match(name):
            raise SpecError(f"bad step {part!r} in spec {text!r}: expected name[:severity][,k=v]")
        pert = get(name)
        severity: int | None = None
        given: dict[str, str] = {}
        for item in filter(None, (a.strip() for a in args.split(","))):
            if "=" in item:
                key, _, value = item.partition("=")
                key, value = key.strip(), value.strip()
                pert.param(key)  # raises with the list of parameters
                if key in given:
                    raise SpecError(f"{name}: parameter {key!r} given twice in {text!r}")
                given[key] = value
            else:
                if severity is not None:
                    raise SpecError(f"{name}: two severities in {part!r}")
                try:
                    severity = int(item)
                except ValueError:
                    raise SpecError(
                        f"{name}: {item!r} is neither a severity (integer) nor key=value; "
                        f"parameters: {', '.join(p.describe() for p in pert.params) or 'none'}"
                    ) from None
        params = pert.resolve(severity, given)
        steps.append(Step(pert, severity, tuple(sorted(given.items())), params))
    return steps


def canonical_spec(text_or_steps: str | list[Step]) -> str:
    """The canonical spelling of a spec."""
    steps = parse_spec(text_or_steps) if isinstance(text_or_steps, str) else text_or_steps
    return "+".join(s.canonical() for s in steps)


def spec_slug(spec: str) -> str:
    """A folder-safe name for a canonical spec: `aurora:set=A,snr=10` -> `aurora-set_A-snr_10`."""
    slug = canonical_spec(spec).replace("+", "__").replace(":", "-").replace(",", "-")
    slug = slug.replace("=", "_")
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", slug)
