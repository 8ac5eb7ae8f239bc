"""Simulated room impulse responses (pyroomacoustics), binned by measured RT60 and cached.

A bank of RIRS_PER_BIN responses per bin is simulated once from a fixed seed (shoebox rooms of
random size, source and microphone positions; wall absorption from Sabine's formula for an RT60
drawn inside the bin), kept only when the RT60 measured on the simulated response (Schroeder
backward integration, T30 extrapolated to 60 dB) falls inside the bin, and cached as .npy under
`<cache>/perturb/rir/`. Each utterance then picks one with its own seeded RNG.
Users can supply real RIRs instead: put .wav files in $ASRBENCH_RIR_DIR/bin<k>/.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from asrbench.fsio import atomic_write_bytes
from asrbench.identity import derive_seed, digest, short
from asrbench.perturb.dsp import PerturbError
from asrbench.settings import settings

RT60_BINS: list[tuple[float, float]] = [(0.2, 0.45), (0.45, 0.75), (0.75, 1.1), (1.1, 1.6)]
RIRS_PER_BIN = 6


def schroeder_rt60(h: np.ndarray, sr: int) -> float:
    """RT60 by Schroeder backward integration: fit -5..-35 dB of the decay, extrapolate to 60 dB."""
    energy = np.cumsum((h.astype(np.float64) ** 2)[::-1])[::-1]
    edc = 10.0 * np.log10(energy / energy[0] + 1e-30)
    idx = np.nonzero((edc <= -5.0) & (edc >= -35.0))[0]
    if len(idx) < 2:
        return float("nan")
    t = idx / sr
    slope, _ = np.polyfit(t, edc[idx], 1)
    return float(-60.0 / slope)


def _simulate(target_rt60: float, sr: int, rng: np.random.Generator) -> np.ndarray:
    import pyroomacoustics as pra  # heavy import: only when a bank is built

    dim = np.array([rng.uniform(4, 10), rng.uniform(3, 8), rng.uniform(2.5, 4)])
    e_abs, max_order = pra.inverse_sabine(target_rt60, dim)
    room = pra.ShoeBox(dim, fs=sr, materials=pra.Material(e_abs), max_order=int(max_order))
    margin = 0.5
    room.add_source(rng.uniform(margin, dim - margin))
    room.add_microphone(rng.uniform(margin, dim - margin))
    room.compute_rir()
    h = np.asarray(room.rir[0][0], dtype=np.float64)
    return h / np.max(np.abs(h))


def build_bin(k: int, sr: int) -> list[np.ndarray]:
    """Simulate RIRS_PER_BIN responses whose measured RT60 lies in bin `k` (1-based)."""
    lo, hi = RT60_BINS[k - 1]
    rng = np.random.default_rng(derive_seed(20260, k, sr))
    out: list[np.ndarray] = []
    for _attempt in range(RIRS_PER_BIN * 8):
        target = rng.uniform(lo, hi)
        # Sabine over-predicts decay in the image-source model; shrink the target and retry.
        for _ in range(4):
            h = _simulate(target, sr, rng)
            measured = schroeder_rt60(h, sr)
            if lo <= measured <= hi:
                out.append(h)
                break
            target *= np.clip((lo + hi) / 2 / measured, 0.5, 1.5)
        if len(out) == RIRS_PER_BIN:
            return out
    raise PerturbError(f"could not simulate {RIRS_PER_BIN} RIRs with RT60 in {lo}-{hi} s")


@functools.lru_cache(maxsize=16)
def rir_bank(k: int, sr: int) -> tuple[np.ndarray, ...]:
    """The cached RIRs of bin `k` at rate `sr` (user folder, else simulated once)."""
    if not 1 <= k <= len(RT60_BINS):
        raise PerturbError(f"RT60 bin {k} does not exist; bins 1..{len(RT60_BINS)}")
    cfg = settings()
    if cfg.rir_dir:
        from asrbench.perturb.noise import _files_in, load_mono

        files = _files_in(Path(cfg.rir_dir) / f"bin{k}")
        if not files:
            raise PerturbError(f"$ASRBENCH_RIR_DIR={cfg.rir_dir}: no audio in bin{k}/")
        return tuple(load_mono(str(f), sr) for f in files)
    from asrbench.perturb.bank import code_digest

    key = short(digest("rir-bank", code=code_digest(), sr=sr, bin=k), 16)
    folder = cfg.cache / "perturb" / "rir" / key
    files = sorted(folder.glob("*.npy"))
    if len(files) < RIRS_PER_BIN:
        import io

        for i, h in enumerate(build_bin(k, sr)):
            buf = io.BytesIO()
            np.save(buf, h.astype(np.float32))
            atomic_write_bytes(folder / f"{i:02d}.npy", buf.getvalue())
        files = sorted(folder.glob("*.npy"))
    return tuple(np.load(f).astype(np.float64) for f in files[:RIRS_PER_BIN])


def pick_rir(k: int, sr: int, rng: np.random.Generator) -> np.ndarray:
    """One RIR of bin `k`, chosen with the utterance's RNG."""
    bank = rir_bank(k, sr)
    return bank[int(rng.integers(len(bank)))]
