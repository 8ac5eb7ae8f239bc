"""Utterance-specific untargeted PGD under an SNR budget (Madry et al. 2018, as SRB runs it).

Speech Robust Bench (through robust_speech) attacks each utterance `x` inside the L2 ball of
radius ||x||_2 / 10^(snr/20): a random start in the ball, then `steps` steps of
`step_ratio` x radius along the L2-normalised gradient of the target's loss on the TRUE
transcript (ascent: untargeted), the attacked audio clipped to [-1, 1] and the perturbation
projected back onto the ball after every step. With `restarts` > 1 the restart whose final loss
is highest is kept. Every random draw comes from the `numpy.random.Generator` the caller passes
(the bank derives it from seed, spec and utterance ID), so the attack is reproducible.

The result is meant to be written as 16-bit PCM: `to_written` quantises it the way the bank's
WAV writer does (soundfile writes `y` as `rint(y * 32768)`) and rescales the perturbation until
the SNR measured between the clean audio and the QUANTISED audio is within `SNR_TOL` dB of the
budget (aiming `SNR_AIM` dB above it, so the written file never exceeds the budget by more than
the tolerance). PGD ends on the ball's surface, so before quantisation the SNR is the budget.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from asrbench.errors import InputError

PCM_SCALE = 32768.0  # soundfile's PCM_16 scale, for writing (rint(y * 32768)) and reading
PCM_MAX = 32767
SNR_TOL = 0.1  # dB: the measured SNR of the written file is within this of the budget
SNR_AIM = 0.02  # dB above the budget the quantisation fit aims at
FIT_ROUNDS = 60


@dataclass(frozen=True)
class PgdSettings:
    """The attack's parameters (SRB's defaults)."""

    snr: float
    steps: int = 100
    step_ratio: float = 0.4
    restarts: int = 1


def l2_radius(x: np.ndarray, snr: float) -> float:
    """The L2 budget of an utterance at `snr` dB: ||x||_2 / 10^(snr/20)."""
    return float(np.linalg.norm(x) / 10.0 ** (snr / 20.0))


def snr_db(clean: np.ndarray, attacked: np.ndarray) -> float:
    """20 log10(||clean|| / ||attacked - clean||); inf when nothing changed."""
    noise = float(np.linalg.norm(np.asarray(attacked, np.float64) - clean))
    if noise == 0.0:
        return float("inf")
    return float(20.0 * np.log10(np.linalg.norm(clean) / noise))


def random_start(rng: np.random.Generator, n: int, radius: float) -> np.ndarray:
    """A point drawn uniformly from the n-dimensional L2 ball of `radius`."""
    d = rng.standard_normal(n)
    return d * (radius * rng.random() ** (1.0 / n) / max(np.linalg.norm(d), 1e-30))


def row_norms(t: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
    """Each row's L2 norm over its own samples only (`lengths`), not over the zero padding of a
    batch: torch's float sum of a row changes in its last bits with the row's length, and a
    batched attack must write the bytes it writes for the utterance alone."""
    if lengths is None:
        return t.norm(dim=1)
    return torch.stack([t[i, : int(n)].norm() for i, n in enumerate(lengths)])


def project(
    delta: torch.Tensor,
    x: torch.Tensor,
    radius: torch.Tensor,
    lengths: torch.Tensor | None = None,
) -> torch.Tensor:
    """Rows of `delta` scaled into their L2 balls, then x + delta clipped to [-1, 1] (which
    only shortens each sample's change, so the norm stays inside the ball)."""
    norms = row_norms(delta, lengths).clamp_min(1e-30)
    delta = delta * (radius / norms).clamp(max=1.0).unsqueeze(1)
    return (x + delta).clamp(-1.0, 1.0) - x


@contextlib.contextmanager
def deterministic() -> Iterator[None]:
    """torch's deterministic algorithms on for the attack, restored afterwards."""
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before)


def _batch(xs: Sequence[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Zero-padded [B, T] float32 audio, lengths and the mask of real samples."""
    lengths = torch.tensor([len(x) for x in xs])
    audio = torch.zeros(len(xs), int(lengths.max()), dtype=torch.float32)
    for i, x in enumerate(xs):
        audio[i, : len(x)] = torch.from_numpy(np.asarray(x, np.float32))
    mask = torch.arange(audio.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    return audio, lengths, mask.float()


def long_labels(target, audio: torch.Tensor, lengths: torch.Tensor) -> list[list[str]]:
    """The clean audio's per-window labels for utterances over one 30-s window (fixed while
    the audio moves); an empty list for the others, whose label is their transcript."""
    limit = 29 * target.sample_rate  # a margin: the target decides how many windows there are
    long = [i for i, n in enumerate(lengths.tolist()) if n > limit]
    labels: list[list[str]] = [[] for _ in range(len(lengths))]
    if long:
        got = target.window_labels(audio[long], lengths[long])
        for i, lab in zip(long, got, strict=True):
            labels[i] = lab
    return labels


def pgd(
    target,
    xs: Sequence[np.ndarray],
    texts: Sequence[str],
    settings: PgdSettings,
    rngs: Sequence[np.random.Generator],
) -> tuple[list[np.ndarray], list[float]]:
    """PGD on a batch of utterances; (perturbation per utterance, its final loss), each the
    best of `settings.restarts` restarts. `rngs[i]` draws utterance i's random starts."""
    audio, lengths, mask = _batch(xs)
    radius = torch.tensor([l2_radius(np.asarray(x), settings.snr) for x in xs])
    labels = long_labels(target, audio, lengths)
    batch = _Batch(audio, lengths, mask, radius, list(texts), labels)
    best = [np.zeros(len(x)) for x in xs]
    best_loss = [-np.inf] * len(xs)
    with deterministic():
        for _ in range(settings.restarts):
            delta, loss = _one_restart(target, batch, rngs, settings)
            for i, x in enumerate(xs):
                if loss[i] > best_loss[i]:
                    best_loss[i] = loss[i]
                    best[i] = delta[i, : len(x)].double().numpy()
    return best, best_loss


@dataclass(frozen=True)
class _Batch:
    """A padded batch and what every step needs about it."""

    audio: torch.Tensor
    lengths: torch.Tensor
    mask: torch.Tensor
    radius: torch.Tensor
    texts: list[str]
    labels: list[list[str]]


def _one_restart(target, b: _Batch, rngs, settings: PgdSettings):
    """Random start in each ball, then `settings.steps` normalised-gradient ascent steps."""
    starts = torch.zeros_like(b.audio)
    for i, rng in enumerate(rngs):
        n = int(b.lengths[i])
        starts[i, :n] = torch.from_numpy(
            random_start(rng, n, float(b.radius[i])).astype(np.float32)
        )
    delta = project(starts, b.audio, b.radius, b.lengths) * b.mask
    step = (settings.step_ratio * b.radius).unsqueeze(1)
    for _ in range(settings.steps):
        delta.requires_grad_(True)
        loss = target.loss(b.audio + delta, b.texts, b.lengths, windows=b.labels)
        (grad,) = torch.autograd.grad(loss.sum(), delta)
        with torch.no_grad():
            grad = grad * b.mask
            unit = grad / row_norms(grad, b.lengths).clamp_min(1e-30).unsqueeze(1)
            delta = project(delta.detach() + step * unit, b.audio, b.radius, b.lengths) * b.mask
    with torch.no_grad():
        final = target.loss(b.audio + delta, b.texts, b.lengths, windows=b.labels)
    return delta.detach(), final.tolist()


def quantise(y: np.ndarray) -> np.ndarray:
    """The 16-bit samples a WAV writer stores for float audio `y` (soundfile: rint(y * 32768))."""
    return np.clip(np.rint(np.asarray(y, np.float64) * PCM_SCALE), -PCM_SCALE, PCM_MAX)


def to_written(x: np.ndarray, delta: np.ndarray, snr: float, utt: str = "?") -> np.ndarray:
    """x + s * delta on the 16-bit grid (as float, exactly representable: the writer stores
    it unchanged), with the scale s fitted so the SNR of the quantised audio against `x` is
    within SNR_TOL dB of `snr` (aiming SNR_AIM above). The quantised SNR is a step function of
    s (samples flip one LSB at a time), so s is bracketed, then narrowed by secant guesses
    that fall back to bisection. InputError when 16 bits cannot hold the budget."""
    x = np.asarray(x, np.float64)
    lo, hi, scale, got = 0.0, np.inf, 1.0, float("nan")
    for _ in range(FIT_ROUNDS):
        y = quantise(np.clip(x + scale * delta, -1.0, 1.0)) / PCM_SCALE
        got = snr_db(x, y)
        if snr <= got <= snr + SNR_TOL:
            return y
        if got > snr:  # too little perturbation
            lo = scale
        else:
            hi = scale
        guess = scale * 10.0 ** ((got - snr - SNR_AIM) / 20.0) if np.isfinite(got) else 2 * scale
        scale = guess if lo < guess < hi else (2 * lo if hi == np.inf else np.sqrt(lo * hi))
        if lo == 0.0 and not 0.0 < scale < hi:
            scale = hi / 2
    raise InputError(
        f"utterance {utt}: the written 16-bit audio cannot meet {snr:g} dB SNR within "
        f"{SNR_TOL} dB (got {got:.3f} dB): the utterance is too quiet for this budget; "
        "use a lower snr"
    )


def attack(
    target,
    xs: Sequence[np.ndarray],
    texts: Sequence[str],
    settings: PgdSettings,
    rngs: Sequence[np.random.Generator],
    ids: Sequence[str] | None = None,
) -> list[np.ndarray]:
    """PGD on a batch, each result on the 16-bit grid and within the SNR budget when written."""
    deltas, _ = pgd(target, xs, texts, settings, rngs)
    ids = ids or ["?"] * len(xs)
    return [to_written(x, d, settings.snr, u) for x, d, u in zip(xs, deltas, ids, strict=True)]
