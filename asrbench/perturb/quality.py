"""Speech quality of a perturbed utterance against its clean original: PESQ, STOI, DNSMOS.

PESQ (ITU-T P.862, `pesq` package: wide-band at 16 kHz, narrow-band at 8 kHz) and STOI (`pystoi`)
are intrusive: they need the clean reference time-aligned, so they are reported as None for
perturbations that change the duration (tempo, speed, frame drops). DNSMOS (P.835 SIG/BAK/OVRL and
P.808 MOS, ONNX models shipped in the `speechmos` package) needs no reference and is always given.
Scores are cached by the two files' content under `<cache>/perturb/quality/`.
"""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path

import numpy as np

from asrbench import audio
from asrbench.fsio import atomic_write_json
from asrbench.identity import digest, file_sha256
from asrbench.perturb.dsp import resample
from asrbench.settings import settings

METRICS = ("pesq", "stoi", "dnsmos_ovrl", "dnsmos_sig", "dnsmos_bak", "dnsmos_p808")


def pesq_score(ref: np.ndarray, deg: np.ndarray, sr: int) -> float | None:
    """PESQ MOS-LQO (wb at 16 kHz, nb at 8 kHz, other rates resampled to 16 kHz); None if n/a."""
    from pesq import PesqError, pesq

    if len(ref) != len(deg):
        return None
    if sr not in (8000, 16000):
        ref, deg, sr = resample(ref, sr, 16000), resample(deg, sr, 16000), 16000
    try:
        return float(pesq(sr, ref, deg, "wb" if sr == 16000 else "nb"))
    except PesqError:  # e.g. no utterance detected in a silenced or clipped signal
        return None


def stoi_score(ref: np.ndarray, deg: np.ndarray, sr: int) -> float | None:
    """Short-time objective intelligibility (0..1); None if lengths differ."""
    from pystoi import stoi

    if len(ref) != len(deg):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stoi(ref, deg, sr, extended=False))


def dnsmos_scores(deg: np.ndarray, sr: int) -> dict[str, float]:
    """DNSMOS P.835 (sig, bak, ovrl) and P.808 MOS of one signal (16 kHz, reference-free)."""
    from speechmos import dnsmos

    x = resample(deg, sr, 16000).astype(np.float32)
    peak = float(np.max(np.abs(x))) if len(x) else 0.0
    if peak > 1.0:
        x = x / peak
    if len(x) < 16000:  # the models read at least one second
        x = np.pad(x, (0, 16000 - len(x)))
    r = dnsmos.run(x, 16000)
    return {
        "dnsmos_ovrl": float(r["ovrl_mos"]),
        "dnsmos_sig": float(r["sig_mos"]),
        "dnsmos_bak": float(r["bak_mos"]),
        "dnsmos_p808": float(r["p808_mos"]),
    }


def quality_scores(ref: np.ndarray, deg: np.ndarray, sr: int) -> dict[str, float | None]:
    """All quality scores of `deg` against `ref` (both mono at `sr`)."""
    out: dict[str, float | None] = {
        "pesq": pesq_score(ref, deg, sr),
        "stoi": stoi_score(ref, deg, sr),
    }
    out.update(dnsmos_scores(deg, sr))
    return out


@functools.lru_cache(maxsize=1)
def _code() -> dict:
    """What the scores depend on: this module's source and the scoring packages' versions."""
    from importlib import metadata

    return {
        "source": file_sha256(__file__),
        "packages": {
            n: metadata.version(n)
            for n in ("pesq", "pystoi", "speechmos", "onnxruntime", "numpy", "scipy")
        },
    }


def cached_quality(ref_path: Path, deg_path: Path) -> dict[str, float | None]:
    """quality_scores of two files, cached by their content hashes."""
    key = digest(
        "quality", reference=file_sha256(ref_path), degraded=file_sha256(deg_path), code=_code()
    )
    cache = settings().cache / "perturb" / "quality" / key[:2] / f"{key}.json"
    if cache.is_file():
        return json.loads(cache.read_text(encoding="utf-8"))
    ref, sr = audio.read(ref_path)
    deg, sr2 = audio.read(deg_path)
    if sr2 != sr:
        deg = resample(deg.mean(axis=1), sr2, sr)[:, None]
    scores = quality_scores(ref.mean(axis=1), deg.mean(axis=1), sr)
    atomic_write_json(cache, scores)
    return scores


def dataset_quality(parent_root: Path, derived_root: Path) -> dict:
    """Per-utterance and mean quality of a derived dataset against its parent."""
    from asrbench.dataset import load_dataset

    parent = load_dataset(parent_root, check_audio=False)
    derived = load_dataset(derived_root, check_audio=False)
    by_id = {u.id: u for u in parent.utterances}
    per_utt: dict[str, dict] = {}
    for u in derived.utterances:
        if u.id not in by_id:
            raise ValueError(f"{derived_root}: utterance {u.id} is not in parent {parent.id}")
        per_utt[u.id] = cached_quality(parent.audio_path(by_id[u.id]), derived.audio_path(u))
    means = {}
    for m in METRICS:
        vals = [s[m] for s in per_utt.values() if s.get(m) is not None]
        means[m] = float(np.mean(vals)) if vals else None
    return {"per_utterance": per_utt, "mean": means}
