"""Attack conditions in a robustness grid: white-box vs transfer, and the same-SNR noise check.

An attack condition is a spec whose one step is of the `attack` family (`pgd`, `universal`:
`asrbench.perturb.adversarial`). Its audio was optimised against one model, the spec's
`target`: for that model the row is **white-box**, for every other model it is **transfer**
(the black-box table Speech Robust Bench discusses). As SRB does, attacks are reported by WERD,
not NWERD: a quality-based difficulty says nothing about audio made to fool one model.

Beside every attack the grid runs Gaussian noise at the same SNR (`companions`): an attack
that raises WER no more than white noise of the same energy is loud, not adversarial. Each
attack row carries that noise's WER and the difference attack - noise with a bootstrap CI over
utterances (paired: one draw takes the same utterances under both conditions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from asrbench.identity import derive_seed
from asrbench.perturb.spec import Step, canonical_spec, parse_spec
from scoring.stats import resample_indices

FAMILY = "attack"
NOISE = "gaussian_noise"
N_BOOT = 1000
CI = 0.95

# per utterance ID: (errors, reference words)
Counts = Mapping[str, tuple[int, int]]

COLUMNS = [
    "model",
    "attack",
    "target",
    "mode",
    "snr",
    "n_utts",
    "wer_clean",
    "wer",
    "werd",
    "noise_wer",
    "noise_werd",
    "attack_minus_noise",
    "ci_low",
    "ci_high",
]


def attack_step(condition: str) -> Step | None:
    """The attack step of a one-step attack condition; None for anything else."""
    steps = parse_spec(condition)
    if len(steps) == 1 and steps[0].perturbation.family == FAMILY:
        return steps[0]
    return None


def is_attack(condition: str) -> bool:
    return attack_step(condition) is not None


def noise_condition(step: Step) -> str:
    """The Gaussian-noise condition at the attack's SNR (canonical spelling)."""
    return canonical_spec(f"{NOISE}:snr={float(step.params['snr']):g}")


def _effect(condition: str) -> tuple:
    """What a condition does, whatever its spelling (`gaussian_noise:2` is snr=20)."""
    return tuple((s.name, tuple(sorted(s.params.items()))) for s in parse_spec(condition))


def find_noise(step: Step, conditions: Sequence[str]) -> str | None:
    """The condition among `conditions` that is Gaussian noise at the attack's SNR."""
    want = _effect(noise_condition(step))
    return next((c for c in conditions if c != "clean" and _effect(c) == want), None)


def companions(specs: Sequence[str]) -> list[str]:
    """`specs` with, after them, the same-SNR Gaussian noise of every attack that lacks it."""
    out = list(specs)
    for s in specs:
        step = attack_step(s)
        if step is not None and find_noise(step, out) is None:
            out.append(noise_condition(step))
    return out


def _rate(counts: Counts, ids: Sequence[str]) -> float:
    n = sum(counts[i][1] for i in ids)
    return sum(counts[i][0] for i in ids) / n if n else float("nan")


def paired_difference(
    attacked: Counts, noisy: Counts, seed: int = 0, n_boot: int = N_BOOT
) -> tuple[float, float, float, int]:
    """(WER attacked - WER noisy, CI low, CI high, utterances) over the utterances both
    conditions scored, resampled together (a WERD difference: the clean WER cancels)."""
    ids = sorted(set(attacked) & set(noisy))
    if not ids:
        return float("nan"), float("nan"), float("nan"), 0
    n_ref = np.array([attacked[i][1] for i in ids], dtype=float)
    diff = np.array([attacked[i][0] - noisy[i][0] for i in ids], dtype=float)
    point = diff.sum() / max(n_ref.sum(), 1.0)
    idx = resample_indices(np.random.default_rng(derive_seed(seed)), len(ids), n_boot)
    draws = diff[idx].sum(axis=1) / np.maximum(n_ref[idx].sum(axis=1), 1.0)
    lo, hi = np.quantile(draws, [(1 - CI) / 2, (1 + CI) / 2])
    return float(point), float(lo), float(hi), len(ids)


def attack_rows(
    models: Sequence[str],
    conditions: Sequence[str],
    wers: Mapping[str, Mapping[str, float]],
    counts: Mapping[str, Mapping[str, Counts]],
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per model x attack condition: white-box or transfer, WER and WERD, and the
    same-SNR noise's (when the grid ran it) with the paired difference and its CI.

    `wers[model][condition]` ("clean" included); `counts[model][condition]` per-utterance
    (errors, reference words) from the cells' utterances.jsonl."""
    rows = []
    for cond in conditions:
        step = attack_step(cond)
        if step is None:
            continue
        noise = find_noise(step, conditions) or noise_condition(step)
        for m in models:
            clean, wer = wers[m]["clean"], wers[m][cond]
            row: dict[str, Any] = {
                "model": m,
                "condition": cond,
                "attack": step.name,
                "target": str(step.params.get("target")),
                "mode": "white-box" if m == step.params.get("target") else "transfer",
                "snr": float(step.params["snr"]),
                "n_utts": len(counts.get(m, {}).get(cond, {})),
                "wer_clean": clean,
                "wer": wer,
                "werd": wer - clean,
                "noise_condition": noise,
                "noise_wer": None,
                "noise_werd": None,
                "attack_minus_noise": None,
                "ci_low": None,
                "ci_high": None,
            }
            if noise in wers[m]:
                row |= {"noise_wer": wers[m][noise], "noise_werd": wers[m][noise] - clean}
                if cond in counts.get(m, {}) and noise in counts[m]:
                    d, lo, hi, _ = paired_difference(counts[m][cond], counts[m][noise], seed)
                    row |= {"attack_minus_noise": d, "ci_low": lo, "ci_high": hi}
            rows.append(row)
    return rows


def to_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The white-box vs transfer table (WERD; NWERD is not reported for attacks, as SRB)."""
    from asrbench.table import markdown

    return (
        "Attacks (white-box: the model attacked; transfer: audio attacked through the target, "
        "heard by another model). `noise_*`: Gaussian noise at the same SNR; "
        f"`attack_minus_noise`: WER difference with a {int(CI * 100)}% paired bootstrap CI over "
        f"utterances ({N_BOOT} draws).\n\n" + markdown(list(rows), COLUMNS)
    )
