"""Apply a (composed) spec to one utterance with a seeded RNG derived from (seed, spec, ID)."""

from __future__ import annotations

import numpy as np

from asrbench.identity import derive_seed
from asrbench.perturb.dsp import PerturbError
from asrbench.perturb.noise import Context
from asrbench.perturb.spec import Step, canonical_spec, parse_spec


def utterance_rng(seed: int, spec: str, utt_id: str, step: int = 0) -> np.random.Generator:
    """RNG from (seed, canonical spec, utterance ID, step): independent of processing order."""
    return np.random.default_rng(derive_seed(seed, spec, utt_id, step, hashed=True))


def apply_spec(
    x: np.ndarray,
    sr: int,
    spec: str | list[Step],
    seed: int = 0,
    utt_id: str = "",
    ctx: Context | None = None,
) -> np.ndarray:
    """Run every step of `spec` on mono audio `x` (float, [-1, 1]); returns float64 audio."""
    steps = parse_spec(spec) if isinstance(spec, str) else spec
    canon = canonical_spec(steps)
    ctx = ctx or Context()
    y = np.asarray(x, dtype=np.float64)
    if y.ndim != 1:
        raise PerturbError(f"utterance {utt_id or '?'}: expected mono audio, got shape {y.shape}")
    for i, step in enumerate(steps):
        rng = utterance_rng(seed, canon, utt_id, i)
        try:
            y = np.asarray(step.perturbation.fn(y, sr, rng, ctx, **step.params), dtype=np.float64)
        except PerturbError as exc:
            raise PerturbError(
                f"utterance {utt_id or '?'}, step {step.canonical()}: {exc}"
            ) from exc
        if not np.all(np.isfinite(y)):
            raise PerturbError(
                f"utterance {utt_id or '?'}, step {step.canonical()}: produced NaN/inf samples"
            )
    return y
