"""Universal (utterance-agnostic) perturbations: Neekhara et al. 2019, as SRB runs them.

One perturbation `v` (`seconds` long, kept at unit RMS) is fitted per (target, SNR) on a dev
split: for utterance i it is tiled/cut to the utterance's length and scaled to its budget,
delta_i = tile(v) * ||x_i|| / 10^(snr/20) / ||tile(v)||, so every utterance gets exactly its SNR.
Each epoch takes one sign step (`step` x unit RMS) on the target's loss of the true transcript
for every dev utterance not yet fooled, in dataset order; an utterance counts as fooled (and is
skipped next epoch) once the CER between its clean and attacked greedy transcripts exceeds
`cer`. After each epoch the dev CER (mean over the dev utterances) is measured; the epoch with
the highest dev CER is kept. The random start comes from `seed`.

The dev split is disjoint from the utterances attacked, by speaker: the dataset's speakers
(SPEAKER column; an utterance without one is its own speaker) are ranked by SHA-256 of their
label and dealt greedily into two folds of near-equal utterance counts. An utterance is attacked
with the perturbation fitted on the OTHER fold (two-fold cross-fitting), so every utterance of
the dataset is attacked and none by a perturbation that saw its speaker. A dataset with a single
speaker is split the same way by utterance ID (documented in docs/ROBUSTNESS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch

from asrbench import audio
from asrbench.adversarial.artifact import (
    UniversalRecord,
    attack_code,
    load,
    save,
    universal_key,
)
from asrbench.adversarial.pgd import deterministic, l2_radius, long_labels
from asrbench.dataset import Dataset, Utterance
from asrbench.errors import InputError
from asrbench.identity import derive_seed, file_sha256, seed_digest
from scoring.align import levenshtein


@dataclass(frozen=True)
class UniversalSettings:
    """The fit's parameters; all of them are in the artifact's identity."""

    snr: float
    epochs: int = 10
    seconds: float = 3.0
    cer: float = 0.5
    seed: int = 0
    step: float = 0.05


def cer(ref: str, hyp: str) -> float:
    """Character error rate of `hyp` against `ref` (lower-cased, spaces collapsed)."""
    a, b = (" ".join(s.lower().split()) for s in (ref, hyp))
    if not a:
        return float(bool(b))
    return levenshtein([ord(c) for c in a], [ord(c) for c in b]) / len(a)


def tile(v: np.ndarray, n: int) -> np.ndarray:
    """`v` repeated and cut to `n` samples."""
    return np.resize(np.asarray(v, np.float64), n)


def scaled(v: np.ndarray, x: np.ndarray, snr: float) -> np.ndarray:
    """The perturbation of utterance `x`: `v` tiled to its length, at exactly its SNR budget."""
    t = tile(v, len(x))
    return t * (l2_radius(x, snr) / max(float(np.linalg.norm(t)), 1e-30))


def _speaker(u: Utterance) -> str:
    return u.extra.get("SPEAKER") or f"utt:{u.id}"


def folds(utts: Sequence[Utterance]) -> dict[str, int]:
    """Utterance ID -> fold 0/1: whole speakers dealt into two folds of near-equal size."""
    groups: dict[str, list[str]] = {}
    for u in utts:
        groups.setdefault(_speaker(u), []).append(u.id)
    if len(groups) < 2:  # one speaker: split by utterance instead
        groups = {f"utt:{u.id}": [u.id] for u in utts}
    order = sorted(groups, key=lambda g: seed_digest("universal-fold", g))
    sizes = [0, 0]
    out: dict[str, int] = {}
    for g in order:
        f = 0 if sizes[0] <= sizes[1] else 1
        sizes[f] += len(groups[g])
        out.update(dict.fromkeys(groups[g], f))
    return out


def _read(ds: Dataset, u: Utterance) -> np.ndarray:
    return audio.read_mono(ds.audio_path(u))


def perturbation_for(
    target, ds: Dataset, utt_id: str, x: np.ndarray, settings: UniversalSettings
) -> np.ndarray:
    """The (float) perturbation of utterance `utt_id`: the other fold's universal perturbation
    (fitted now, or loaded from its artifact), tiled and scaled to `x`'s budget."""
    fold = folds(ds.utterances)
    if utt_id not in fold:
        raise InputError(f"utterance {utt_id} is not in dataset {ds.id}")
    dev = [u for u in ds.utterances if fold[u.id] != fold[utt_id]]
    if not dev:
        raise InputError(
            f"dataset {ds.id} has no utterance outside {utt_id}'s fold to fit a universal "
            "perturbation on: it needs at least two utterances"
        )
    untexted = [u.id for u in dev if not u.text.strip()]
    if untexted:
        raise InputError(
            f"the universal perturbation for {utt_id} is fitted on the other fold of {ds.id}, "
            f"and {len(untexted)} of its utterances have no reference text "
            f"({', '.join(untexted[:3])}{', ...' if len(untexted) > 3 else ''}): the fit "
            "needs the true transcript of every dev utterance; attack a dataset with TEXT"
        )
    v, _ = fitted(target, ds, dev, settings)
    return scaled(v, x, settings.snr)


def fitted(
    target, ds: Dataset, dev: Sequence[Utterance], settings: UniversalSettings
) -> tuple[np.ndarray, UniversalRecord]:
    """The universal perturbation of (target, dev utterances, settings): stored or fitted."""
    inputs = {
        "target": target.identity(),
        "dev": [[u.id, file_sha256(ds.audio_path(u))] for u in dev],
        "settings": asdict(settings),
        "code": attack_code(),
    }
    key = universal_key(inputs)
    have = load(key, inputs)
    if have is not None:
        return have[1], have[0]
    xs = [_read(ds, u) for u in dev]
    v, dev_cer = fit(target, xs, [u.text for u in dev], settings)
    record = UniversalRecord(
        key, inputs, [u.id for u in dev], dev_cer, int(np.argmax(dev_cer)) + 1, target.sample_rate
    )
    save(record, v)
    return v, record


def fit(
    target, xs: Sequence[np.ndarray], texts: Sequence[str], settings: UniversalSettings
) -> tuple[np.ndarray, list[float]]:
    """Fit one perturbation on dev audio; (the best epoch's v, dev CER after each epoch)."""
    rng = np.random.default_rng(derive_seed(settings.seed, "universal", hashed=True))
    v = rng.standard_normal(int(round(settings.seconds * target.sample_rate)))
    v /= np.sqrt(np.mean(v**2))
    clean = [_transcribe(target, x) for x in xs]
    labels = [_labels(target, x) for x in xs]
    fooled = [False] * len(xs)
    best, best_cer, history = v, -1.0, []
    with deterministic():
        for _ in range(settings.epochs):
            for i, x in enumerate(xs):
                if not fooled[i]:
                    v = _sign_step(target, v, x, texts[i], labels[i], settings)
            cers = [
                cer(c, _transcribe(target, np.clip(x + scaled(v, x, settings.snr), -1, 1)))
                for c, x in zip(clean, xs, strict=True)
            ]
            fooled = [c > settings.cer for c in cers]
            history.append(float(np.mean(cers)))
            if history[-1] > best_cer:
                best, best_cer = v.copy(), history[-1]
    return best, history


def _transcribe(target, x: np.ndarray) -> str:
    return target.transcribe(torch.from_numpy(np.asarray(x, np.float32)).unsqueeze(0))[0]


def _labels(target, x: np.ndarray) -> list[str]:
    samples = torch.from_numpy(np.asarray(x, np.float32)).unsqueeze(0)
    return long_labels(target, samples, torch.tensor([len(x)]))[0]


def _sign_step(
    target, v: np.ndarray, x: np.ndarray, text: str, labels: list[str], s: UniversalSettings
) -> np.ndarray:
    """One sign step of v up the loss of `text` on x + scaled(v); v back at unit RMS."""
    vt = torch.from_numpy(v.astype(np.float32)).requires_grad_(True)
    xt = torch.from_numpy(np.asarray(x, np.float32))
    reps = -(-len(x) // len(v))
    t = vt.repeat(reps)[: len(x)]
    delta = t * (l2_radius(x, s.snr) / t.norm().clamp_min(1e-30))
    loss = target.loss((xt + delta).clamp(-1.0, 1.0).unsqueeze(0), [text], windows=[labels])
    (grad,) = torch.autograd.grad(loss.sum(), vt)
    v = v + s.step * np.sign(grad.double().numpy())
    return v / np.sqrt(np.mean(v**2))
