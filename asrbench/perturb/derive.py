"""Derived datasets: perturb every utterance of a dataset, with provenance and a content cache.

Output: a normal dataset folder (metadata.tsv + dataset.yaml + audio/) whose dataset.yaml carries
`derived_from: {dataset, hash, spec, seed, code, assets}`; by default
`<cache>/perturb/datasets/<parent>__<spec-slug>__s<seed>` (outside the git tree, so a grid of
derived datasets never shows up as untracked files; `--out datasets/NAME` puts one in the tree).
Perturbed audio is cached by content under `<cache>/perturb/audio/<key>.wav`, where key is the
identity "perturb-audio" of (parent audio SHA-256, canonical spec, seed, utterance ID, the bank's
code and libraries, its noise/RIR assets): see asrbench/perturb/bank.py. The derived folder
hard-links (or copies) the cached file, so every model and every rerun reuses the same bytes; a
folder that already holds the same derivation (same `derived_from`, utterances and audio files) is
used as it is, so every campaign asking for it (ops/robustness, ops/fairness) shares one folder.

A one-step spec whose perturbation function carries a batch hook (`perturb_batch`: `pgd`, see
asrbench/perturb/adversarial.py) runs the utterances not cached yet ASRBENCH_ATTACK_BATCH at a
time (grouped by length, deterministically; each batch's files written as it ends). The keys
and bytes are those of one by one (tests/adversarial/test_attack_batch.py): the batch size is
no part of any identity, so batched and one-by-one runs share one cache.
"""

from __future__ import annotations

import functools
import json
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asrbench import audio
from asrbench.dataset import Dataset, DatasetError, load_dataset, write_dataset
from asrbench.errors import InternalError
from asrbench.fsio import atomic_link, atomic_write_bytes, replace_dir, stage_dir
from asrbench.identity import bytes_sha256, canonical, digest, files_sha256, short
from asrbench.ids import check_id, inside
from asrbench.longform.segments import DEFAULT_FILE, write_timed
from asrbench.perturb.apply import apply_spec, utterance_rng
from asrbench.perturb.bank import asset_identity, assets_digest, code_digest, perturb_key
from asrbench.perturb.dsp import PerturbError
from asrbench.perturb.noise import Context, babble_pool
from asrbench.perturb.spec import canonical_spec, parse_spec, spec_slug
from asrbench.resolve import resolve_dataset
from asrbench.settings import settings

# Attacks with a batch hook (pgd) run this many not-yet-cached utterances at once; the cache keys
# and the bytes do not depend on it (docs/ROBUSTNESS.md, "Cost"; docs/MEASUREMENTS.md).
ATTACK_BATCH_ENV = "ASRBENCH_ATTACK_BATCH"  # read by asrbench.settings


def encode_wav(y: np.ndarray, sr: int) -> bytes:
    """16-bit PCM WAV bytes (deterministic: soundfile writes no timestamps)."""
    return audio.pcm16_bytes(y, sr)


def default_output(parent: Dataset, spec: str, seed: int, utt_ids: list[str] | None = None) -> Path:
    """Where a derived dataset goes unless told otherwise; a subset gets its own folder (named
    by its utterances), so it never overwrites the full derived set or another subset."""
    name = f"{check_id(parent.id)}__{spec_slug(spec)}__s{seed}"
    if utt_ids is not None:
        chosen = [u.id for u in parent.utterances if u.id in set(utt_ids)]
        name += f"__u{len(chosen)}-{short(digest('selection', utterances=chosen), 8)}"
    check_id(name, "derived dataset ID", "give the derived dataset a folder with --out")
    base = settings().cache / "perturb" / "datasets"
    return inside(base, base / name, "derived dataset folder")


def audio_cache_path(key: str) -> Path:
    return settings().cache / "perturb" / "audio" / key[:2] / f"{key}.wav"


def perturb_utterance(
    ds: Dataset, utt_index: int, spec: str, seed: int, key: str
) -> tuple[str, Path | None, float]:
    """Perturb one utterance through the cache (`key` from perturb_key); (ID, wav, seconds),
    with no wav when the perturbation left no audio at all."""
    utt = ds.utterances[utt_index]
    out = audio_cache_path(key)
    if out.is_file():
        info = audio.info(out)
        if info.frames > 0:
            return utt.id, out, info.frames / info.samplerate
        out.unlink(missing_ok=True)  # an empty result cached by an older version: never served
    x, sr = audio.read(ds.audio_path(utt))
    y = apply_spec(
        x.mean(axis=1), sr, spec, seed=seed, utt_id=utt.id, ctx=Context(dataset=ds, utt=utt)
    )
    if len(y) == 0:  # nothing left to hear: neither cached nor placed (derive_dataset says so)
        return utt.id, None, 0.0
    atomic_write_bytes(out, encode_wav(y, sr))
    return utt.id, out, len(y) / sr


@functools.lru_cache(maxsize=4)
def _dataset(root: str) -> Dataset:
    return load_dataset(root, check_audio=False)  # once per worker process, not per utterance


def _worker(args: tuple[str, int, str, int, str]) -> tuple[str, Path | None, float]:
    root, idx, spec, seed, key = args
    return perturb_utterance(_dataset(root), idx, spec, seed, key)


@dataclass
class DeriveResult:
    """What derive_dataset produced."""

    path: Path
    parent: Path
    spec: str
    seed: int
    n_utts: int
    cached: int


def derive_dataset(
    parent: str | Path,
    spec: str,
    seed: int = 0,
    out: Path | None = None,
    jobs: int = 1,
    utt_ids: list[str] | None = None,
) -> DeriveResult:
    """Write the derived dataset of `parent` under `spec` and `seed`; returns where it went."""
    ds = resolve_dataset(parent)
    canon = canonical_spec(spec)
    out = Path(out) if out else default_output(ds, canon, seed, utt_ids)
    check_id(out.name, "derived dataset ID (the --out folder's name)", "choose another --out")
    if out.resolve() == ds.root.resolve():
        raise PerturbError(f"output {out} is the parent dataset itself; choose another --out")
    indices = list(range(len(ds.utterances)))
    if utt_ids is not None:
        wanted = set(utt_ids)
        unknown = wanted - {u.id for u in ds.utterances}
        if unknown:
            raise PerturbError(f"utterances not in {ds.id}: {', '.join(sorted(unknown))}")
        indices = [i for i in indices if ds.utterances[i].id in wanted]
    # Every parent file is hashed once (memoised); the dataset hash reuses those hashes.
    parent_hash = ds.content_hash()
    shas = files_sha256([ds.audio_path(ds.utterances[i]) for i in indices])
    assets = asset_identity(settings(), parent_hash)
    adigest = assets_digest(assets)
    keys = [
        perturb_key(sha, _keyed(canon), seed, ds.utterances[i].id, adigest)
        for i, sha in zip(indices, shas, strict=True)
    ]
    prov = {
        "dataset": ds.id,
        "hash": parent_hash,
        "spec": canon,
        "seed": seed,
        "code": code_digest(),
        "assets": adigest,
        "asset_files": assets,
        "babble_pool": babble_pool(ds),
        "utterances": len(indices),
        **_depends(canon),
    }
    if _up_to_date(out, prov, [ds.utterances[i].id for i in indices]):
        return DeriveResult(out, ds.root, canon, seed, len(indices), len(indices))
    before = sum(audio_cache_path(k).is_file() for k in keys)
    jobs = 1 if prov.get("depends") else jobs
    results = _perturb_all(ds, indices, canon, seed, keys, jobs)
    empty = [uid for uid, cached, _ in results if cached is None]
    if empty:
        raise PerturbError(
            f"{canon} leaves no audio at all in {len(empty)} of {len(results)} utterance(s) of "
            f"{ds.id} ({', '.join(empty[:5])}{', ...' if len(empty) > 5 else ''}); nothing was "
            "written: choose a milder setting (a lower severity or ratio, shorter chunks)"
        )
    if ds.longform:
        _check_timing_kept(ds, canon, indices, results)
    final = out
    out = stage_dir(final)  # built beside its place, moved in whole once it validates
    rows = _place_audio(ds, out, indices, results)
    meta = {k: v for k, v in ds.meta.items() if k not in ("id", "derived_from")}
    meta.update(
        {
            "id": final.name,
            "name": f"{ds.meta.get('name', ds.id)} perturbed by {canon} (seed {seed})",
            "description": f"Derived from {ds.id} by ops/perturb -p '{canon}' --seed {seed}.",
            "derived_from": prov,
        }
    )
    try:
        if ds.longform:  # the segment references of the sessions kept, times unchanged
            kept = {r.id for r in rows}
            segs = [seg for seg in ds.segments if seg.session_id in kept]
            write_timed(out / DEFAULT_FILE, segs, "seglst")
            meta["segments"] = DEFAULT_FILE
        write_dataset(out, meta, ds.columns, rows)
        load_dataset(out)  # the same validator as any dataset, before it is placed
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    replace_dir(out, final)
    return DeriveResult(final, ds.root, canon, seed, len(rows), before)


def _step_identities(canon: str) -> list:
    """What the spec's steps depend on beyond their parameters (an attack's target model)."""
    return [s.perturbation.identity(s.params) for s in parse_spec(canon) if s.perturbation.identity]


def _keyed(canon: str) -> str:
    """The spec as keyed: with the digest of what its steps depend on, when any does."""
    deps = _step_identities(canon)
    return canon + "@" + bytes_sha256(canonical(deps)) if deps else canon


def _perturb_all(
    ds: Dataset, indices: list[int], canon: str, seed: int, keys: list[str], jobs: int
) -> list:
    """Each utterance's (ID, cached audio path or None, seconds), in `jobs` worker processes.
    An attack (a spec with dependencies) is given jobs=1 by the caller: it runs its torch model
    in this process, where a forked worker would inherit torch's thread pool with its locks held
    and hang; torch uses every core in one process anyway."""
    hook = batch_hook(canon)
    if jobs <= 1 and hook is not None and attack_batch() > 1:
        return _perturb_batched(ds, indices, canon, seed, keys, hook)
    if jobs <= 1:
        return [
            perturb_utterance(ds, i, canon, seed, k) for i, k in zip(indices, keys, strict=True)
        ]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        work = [(str(ds.root), i, canon, seed, k) for i, k in zip(indices, keys, strict=True)]
        return list(pool.map(_worker, work))


def attack_batch() -> int:
    """How many utterances a perturbation with a batch hook (`pgd`) runs at once:
    ASRBENCH_ATTACK_BATCH (asrbench.settings, default 4); 1 runs them one by one."""
    return settings().attack_batch


def batch_hook(canon: str) -> Any:
    """The batch hook of a one-step spec whose perturbation has one (`perturb_batch` on its
    function, see asrbench/perturb/adversarial.py's BatchHook), else None: composed specs and
    every other perturbation run utterance by utterance."""
    steps = parse_spec(canon)
    return getattr(steps[0].perturbation.fn, "perturb_batch", None) if len(steps) == 1 else None


@dataclass(frozen=True)
class _Pending:
    """An utterance whose perturbed audio is not cached yet: its length and where it goes."""

    index: int
    key: str
    frames: int
    sr: int


def _perturb_batched(
    ds: Dataset, indices: list[int], canon: str, seed: int, keys: list[str], hook: Any
) -> list[tuple[str, Path | None, float]]:
    """Like the one-by-one path, byte for byte and key for key, but the utterances not cached
    yet run `attack_batch()` at a time through the hook; each batch's files are written as soon
    as it ends, so a killed run resumes from the last finished batch."""
    done: dict[int, tuple[str, Path | None, float]] = {}
    pending = []
    for i, k in zip(indices, keys, strict=True):
        if audio_cache_path(k).is_file():  # served (and checked) as the one-by-one path does
            done[i] = perturb_utterance(ds, i, canon, seed, k)
            continue
        info = audio.info(ds.audio_path(ds.utterances[i]))  # read when its batch runs
        pending.append(_Pending(i, k, info.frames, info.samplerate))
    for group in _groups(ds, pending, attack_batch(), hook.max_seconds, hook.same_length):
        done.update(_run_group(ds, group, canon, seed, hook))
    return [done[i] for i in indices]


def _groups(
    ds: Dataset, pending: list[_Pending], size: int, max_seconds: float, same_length: bool
) -> list[list[_Pending]]:
    """Batches of at most `size`, by sample rate then length (little padding), deterministic
    (ties by utterance ID); an utterance over `max_seconds` is a batch of its own, and with
    `same_length` only utterances of one sample count share a batch."""
    order = sorted(pending, key=lambda p: (p.sr, p.frames, ds.utterances[p.index].id))
    groups: list[list[_Pending]] = []
    for p in order:
        last = groups[-1] if groups else None
        if last and len(last) < size and _fits(last[0], p, max_seconds, same_length):
            last.append(p)
        else:
            groups.append([p])
    return groups


def _fits(first: _Pending, p: _Pending, max_seconds: float, same_length: bool) -> bool:
    """Whether `p` may join the batch that `first` opened."""
    short = first.frames <= max_seconds * first.sr and p.frames <= max_seconds * p.sr
    return short and first.sr == p.sr and (not same_length or first.frames == p.frames)


def _run_group(
    ds: Dataset, group: list[_Pending], canon: str, seed: int, hook: Any
) -> dict[int, tuple[str, Path | None, float]]:
    """One batch through the hook, with the RNG, context and checks of apply_spec's one step;
    each result written to the cache (the bytes perturb_utterance writes)."""
    (step,) = parse_spec(canon)
    utts = [ds.utterances[p.index] for p in group]
    spec = canonical_spec([step])
    rngs = [utterance_rng(seed, spec, u.id, 0) for u in utts]
    ctxs = [Context(dataset=ds, utt=u) for u in utts]
    sr = group[0].sr
    names = ", ".join(u.id for u in utts)
    xs = [audio.read(ds.audio_path(u))[0] for u in utts]
    try:
        ys = hook.run([x.mean(axis=1) for x in xs], sr, rngs, ctxs, **step.params)
    except PerturbError as exc:
        raise PerturbError(f"utterances {names}, step {step.canonical()}: {exc}") from exc
    out: dict[int, tuple[str, Path | None, float]] = {}
    for p, u, y in zip(group, utts, ys, strict=True):
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise PerturbError(
                f"utterance {u.id}, step {step.canonical()}: produced NaN/inf samples"
            )
        if len(y) == 0:
            out[p.index] = (u.id, None, 0.0)
            continue
        atomic_write_bytes(audio_cache_path(p.key), encode_wav(y, sr))
        out[p.index] = (u.id, audio_cache_path(p.key), len(y) / sr)
    return out


def _depends(canon: str) -> dict:
    """The provenance entry of those dependencies (none for the non-attack perturbations)."""
    deps = _step_identities(canon)
    return {"depends": deps} if deps else {}


def _place_audio(
    ds: Dataset, out: Path, indices: list[int], results: list[tuple[str, Path | None, float]]
) -> list:
    """Link each cached perturbed file into the staged folder; the rows that describe them."""
    (out / "audio").mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (uid, cached, dur) in zip(indices, results, strict=True):
        rel = f"audio/{uid}.wav"
        if cached is None:  # derive_dataset refuses empty outputs before anything is placed
            raise InternalError(f"utterance {uid}: no perturbed audio to place")
        atomic_link(cached, out / rel)
        rows.append(ds.utterances[i].replaced(audio=rel, duration=round(dur, 3)))
    return rows


def _check_timing_kept(
    ds: Dataset, canon: str, indices: list[int], results: list[tuple[str, Path | None, float]]
) -> None:
    """A long-form recording's segment times hold only if the perturbation keeps its timing."""
    for i, (uid, _, dur) in zip(indices, results, strict=True):
        if abs(dur - ds.utterances[i].duration) > 0.02:
            raise PerturbError(
                f"{canon} changes the length of long-form recording {uid} of {ds.id} "
                f"({ds.utterances[i].duration:.2f} s -> {dur:.2f} s), so its segment times "
                "would no longer hold; nothing was written: use a perturbation that keeps the "
                "timing (noise, reverberation, filters, codecs), not speed or tempo"
            )


def _up_to_date(folder: Path, derived_from: dict, ids: list[str]) -> bool:
    """`folder` holds this very derivation, whole (same parent content, spec, seed, code,
    assets and utterances, every audio file there): it is used as it is, never rewritten under
    a campaign or a model that may be reading it."""
    try:
        have = load_dataset(folder, check_audio=False)
    except (DatasetError, OSError):
        return False
    same = json.loads(json.dumps(have.meta.get("derived_from"))) == json.loads(
        json.dumps(derived_from)
    )
    return (
        same
        and [u.id for u in have.utterances] == ids
        and all(have.audio_path(u).is_file() for u in have.utterances)
    )
