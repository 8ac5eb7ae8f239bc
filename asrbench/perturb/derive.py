"""Derived datasets: perturb every utterance of a dataset, with provenance and a content cache.

Output: a normal dataset folder (metadata.tsv + dataset.yaml + audio/) whose dataset.yaml carries
`derived_from: {dataset, hash, spec, seed}`; by default
`cache_dir()/perturb/datasets/<parent>__<spec-slug>__s<seed>` (outside the git tree, so a grid of
derived datasets never shows up as untracked files; `--out datasets/NAME` puts one in the tree).
Perturbed audio is cached by content under `cache_dir()/perturb/audio/<key>.wav`, where key =
sha256(parent audio sha256, canonical spec, seed, utterance ID, code version); the derived folder
hard-links (or copies) the cached file, so every model and every rerun reuses the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import yaml

from asrbench.dataset import Dataset, load_dataset, write_metadata
from asrbench.fsio import atomic_write_bytes, atomic_write_text, file_sha256
from asrbench.paths import REPO_ROOT, cache_dir
from asrbench.perturb.apply import apply_spec
from asrbench.perturb.dsp import PerturbError
from asrbench.perturb.noise import Context
from asrbench.perturb.spec import canonical_spec, spec_slug

# Bump when a perturbation's output changes for the same spec, so stale cache entries are unused.
CODE_VERSION = "perturb-v2"  # v2: codec delay removed (mp3, gsm)


def cache_key(audio_sha: str, spec: str, seed: int, utt_id: str) -> str:
    """Content key of one perturbed utterance."""
    blob = f"{CODE_VERSION}\0{audio_sha}\0{spec}\0{seed}\0{utt_id}".encode()
    return hashlib.sha256(blob).hexdigest()


def encode_wav(y: np.ndarray, sr: int) -> bytes:
    """16-bit PCM WAV bytes (deterministic: soundfile writes no timestamps)."""
    buf = io.BytesIO()
    sf.write(buf, np.clip(y, -1.0, 1.0), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def default_output(parent: Dataset, spec: str, seed: int) -> Path:
    """Where a derived dataset goes unless told otherwise."""
    return cache_dir() / "perturb" / "datasets" / f"{parent.id}__{spec_slug(spec)}__s{seed}"


def perturb_utterance(ds: Dataset, utt_index: int, spec: str, seed: int) -> tuple[str, Path, float]:
    """Perturb one utterance through the cache; (ID, cached wav path, duration s)."""
    utt = ds.utterances[utt_index]
    src = ds.audio_path(utt)
    key = cache_key(file_sha256(src), spec, seed, utt.id)
    out = cache_dir() / "perturb" / "audio" / key[:2] / f"{key}.wav"
    if out.is_file():
        info = sf.info(str(out))
        return utt.id, out, info.frames / info.samplerate
    x, sr = sf.read(str(src), dtype="float64", always_2d=True)
    y = apply_spec(x.mean(axis=1), sr, spec, seed=seed, utt_id=utt.id,
                   ctx=Context(dataset=ds, utt=utt))
    atomic_write_bytes(out, encode_wav(y, sr))
    return utt.id, out, len(y) / sr


def _worker(args: tuple[str, int, str, int]) -> tuple[str, Path, float]:
    root, idx, spec, seed = args
    return perturb_utterance(load_dataset(root, check_audio=False), idx, spec, seed)


@dataclass
class DeriveResult:
    """What derive_dataset produced."""

    path: Path
    spec: str
    seed: int
    n_utts: int
    cached: int


def derive_dataset(parent: str | Path, spec: str, seed: int = 0, out: Path | None = None,
                   jobs: int = 1, utt_ids: list[str] | None = None) -> DeriveResult:
    """Write the derived dataset of `parent` under `spec` and `seed`; returns where it went."""
    ds = load_dataset(_resolve(parent))
    canon = canonical_spec(spec)
    out = Path(out) if out else default_output(ds, canon, seed)
    if out.resolve() == ds.root.resolve():
        raise PerturbError(f"output {out} is the parent dataset itself; choose another --out")
    indices = list(range(len(ds.utterances)))
    if utt_ids is not None:
        wanted = set(utt_ids)
        unknown = wanted - {u.id for u in ds.utterances}
        if unknown:
            raise PerturbError(f"utterances not in {ds.id}: {', '.join(sorted(unknown))}")
        indices = [i for i in indices if ds.utterances[i].id in wanted]
    before = _cached_count(ds, indices, canon, seed)
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_worker, [(str(ds.root), i, canon, seed) for i in indices]))
    else:
        results = [perturb_utterance(ds, i, canon, seed) for i in indices]
    (out / "audio").mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (uid, cached, dur) in zip(indices, results, strict=True):
        utt = ds.utterances[i]
        rel = f"audio/{uid}.wav"
        _link(cached, out / rel)
        rows.append({"ID": uid, "AUDIO": rel, "DURATION": f"{dur:.3f}", "TEXT": utt.text,
                     **utt.extra})
    write_metadata(out, ds.columns, rows)
    meta = {k: v for k, v in ds.meta.items() if k not in ("id", "derived_from")}
    meta.update({
        "id": out.name,
        "name": f"{ds.meta.get('name', ds.id)} perturbed by {canon} (seed {seed})",
        "description": f"Derived from {ds.id} by ops/perturb -p '{canon}' --seed {seed}.",
        "derived_from": {"dataset": ds.id, "hash": ds.content_hash(), "spec": canon,
                         "seed": seed, "code_version": CODE_VERSION,
                         "utterances": len(rows)},
    })
    atomic_write_text(out / "dataset.yaml", yaml.safe_dump(meta, sort_keys=False,
                                                           allow_unicode=True))
    load_dataset(out)  # the derived folder must pass the same validator as any dataset
    return DeriveResult(out, canon, seed, len(rows), before)


def _cached_count(ds: Dataset, indices: list[int], spec: str, seed: int) -> int:
    n = 0
    for i in indices:
        utt = ds.utterances[i]
        key = cache_key(file_sha256(ds.audio_path(utt)), spec, seed, utt.id)
        n += (cache_dir() / "perturb" / "audio" / key[:2] / f"{key}.wav").is_file()
    return n


def _link(src: Path, dst: Path) -> None:
    tmp = dst.with_name(f".{dst.name}.tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:  # other file system: copy instead
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def _resolve(dataset: str | Path) -> Path:
    path = Path(dataset)
    if (path / "metadata.tsv").is_file():
        return path
    candidate = REPO_ROOT / "datasets" / str(dataset)
    if (candidate / "metadata.tsv").is_file():
        return candidate
    raise PerturbError(f"dataset {dataset!r} not found (looked for {candidate}/metadata.tsv)")
