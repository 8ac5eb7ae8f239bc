"""Robustness perturbation bank: SRB, Aurora-2 and AequeVox perturbations, codecs, metrics.

Public entry points: `parse_spec`, `apply_spec`, `derive_dataset`, `all_perturbations`.
"""

from asrbench.perturb.apply import apply_spec
from asrbench.perturb.catalog import all_perturbations, get
from asrbench.perturb.derive import derive_dataset
from asrbench.perturb.registry import SpecError
from asrbench.perturb.spec import canonical_spec, parse_spec

__all__ = [
    "SpecError",
    "all_perturbations",
    "apply_spec",
    "canonical_spec",
    "derive_dataset",
    "get",
    "parse_spec",
]
