"""Every perturbation the bank ships, looked up by name.

The family modules (SRB, Aurora-2, AequeVox, channels, attacks) register their perturbations into
`registry.REGISTRY` when imported; importing them here, above the registry, is what fills it.
"""

from __future__ import annotations

from asrbench.perturb import (  # noqa: F401  (they register)
    adversarial,
    aequevox,
    aurora,
    channels,
    srb,
)
from asrbench.perturb.registry import REGISTRY, Perturbation, SpecError


def get(name: str) -> Perturbation:
    """The perturbation called `name`; SpecError listing every registered name otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise SpecError(
            f"unknown perturbation {name!r}; available: {', '.join(sorted(REGISTRY))}"
        ) from None


def all_perturbations() -> dict[str, Perturbation]:
    """Every registered perturbation, by name."""
    return dict(sorted(REGISTRY.items()))
