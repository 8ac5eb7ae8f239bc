"""Import throughput (hours of audio per minute) of the folder, lhotse and HF importers, side by
side in one run, on the same generated set, against an anchor.

    .venv/bin/python benchmarks/import_throughput.py [--hours 2] [--reps 1]

The set: real speech (mini_en's 35 utterances, 16 kHz) tiled to `--hours` of audio as 22.05 kHz
FLAC files of 5-15 s (so every importer decodes, resamples to 16 kHz and writes WAV), described
three ways: a folder + TSV table, lhotse manifests (one recording and one supervision per file)
and a saved Hugging Face dataset (audio bytes in Arrow). Generated once under /tmp and reused.

Anchor: the bare work any importer must do, in one loop without the platform: decode each FLAC
with soundfile, resample with soxr (same quality), write 16-bit WAV. Ratios = importer time /
anchor time, taken in the same run (the machine is shared: absolute figures move, ratios less).
Prints a Markdown table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench.dataset import load_dataset
from asrbench.importers.common import build_dataset
from asrbench.settings import REPO_ROOT

SRC_RATE = 22050


def make_set(root: Path, hours: float) -> dict[str, Path]:
    marker = root / ".complete"
    if marker.is_file() and marker.read_text() == str(hours):
        return _paths(root)
    shutil.rmtree(root, ignore_errors=True)
    (root / "audio").mkdir(parents=True)
    mini = load_dataset(REPO_ROOT / "datasets" / "mini_en")
    speech = np.concatenate([sf.read(str(mini.audio_path(u)), dtype="float32")[0] for u in mini])
    speech = soxr.resample(speech, 16000, SRC_RATE)
    rng = np.random.default_rng(0)
    total, i, pos = hours * 3600 * SRC_RATE, 0, 0
    rows = ["file\ttext\tspeaker"]
    entries = []
    while total > 0:
        n = int(rng.uniform(5, 15) * SRC_RATE)
        clip = np.take(speech, np.arange(pos, pos + n), mode="wrap")
        pos, total = (pos + n) % len(speech), total - n
        name = f"u{i:05d}.flac"
        sf.write(root / "audio" / name, clip, SRC_RATE)
        rows.append(f"audio/{name}\tutterance number {i}\tspk{i % 20}")
        entries.append((f"u{i:05d}", name, n, i))
        i += 1
    (root / "table.tsv").write_text("\n".join(rows) + "\n")
    _lhotse(root, entries)
    _hf(root, entries)
    marker.write_text(str(hours))
    return _paths(root)


def _paths(root: Path) -> dict[str, Path]:
    return {
        "root": root,
        "table": root / "table.tsv",
        "hf": root / "hf",
        "recordings": root / "recordings.jsonl.gz",
        "supervisions": root / "supervisions.jsonl.gz",
    }


def _lhotse(root: Path, entries: list) -> None:
    from lhotse import Recording, RecordingSet, SupervisionSegment, SupervisionSet

    recs = [
        Recording.from_file(root / "audio" / name, recording_id=uid) for uid, name, _, _ in entries
    ]
    sups = [
        SupervisionSegment(
            id=uid,
            recording_id=uid,
            start=0.0,
            duration=r.duration,
            channel=0,
            text=f"utterance number {i}",
            speaker=f"spk{i % 20}",
        )
        for (uid, _, _, i), r in zip(entries, recs, strict=True)
    ]
    RecordingSet.from_recordings(recs).to_file(root / "recordings.jsonl.gz")
    SupervisionSet.from_segments(sups).to_file(root / "supervisions.jsonl.gz")


def _hf(root: Path, entries: list) -> None:
    import datasets

    struct = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
    feats = datasets.Features(
        {"audio": struct, "id": datasets.Value("string"), "text": datasets.Value("string")}
    )

    def gen():
        for uid, name, _, i in entries:
            yield {
                "audio": {"bytes": (root / "audio" / name).read_bytes(), "path": name},
                "id": uid,
                "text": f"utterance number {i}",
            }

    ds = datasets.Dataset.from_generator(gen, features=feats, cache_dir=str(root / ".hf-cache"))
    ds.cast_column("audio", datasets.Audio()).save_to_disk(str(root / "hf"))
    shutil.rmtree(root / ".hf-cache", ignore_errors=True)


def anchor(paths: dict[str, Path], out: Path) -> None:
    out.mkdir(parents=True)
    for f in sorted((paths["root"] / "audio").glob("*.flac")):
        x, rate = sf.read(str(f), dtype="float32", always_2d=True)
        y = soxr.resample(x.mean(axis=1), rate, 16000, quality="VHQ")
        sf.write(out / f"{f.stem}.wav", y, 16000, subtype="PCM_16")


def run(kind: str, paths: dict[str, Path], out: Path) -> None:
    if kind == "anchor":
        anchor(paths, out)
        return
    if kind == "folder":
        from asrbench.importers.folder import import_folder

        items = import_folder(paths["root"], paths["table"])
    elif kind == "lhotse":
        from asrbench.importers.lhotse_io import import_lhotse

        items = import_lhotse(paths["recordings"], paths["supervisions"])
    else:
        from asrbench.importers.hf import import_hf

        items = import_hf(paths["hf"])
    build_dataset(out, items, dataset_id="bench")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "asrbench-import-bench"
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    paths = make_set(args.workdir / "set", args.hours)
    print(f"set ready in {time.perf_counter() - t0:.0f} s: {paths['root']}", file=sys.stderr)
    audio_h = sum(sf.info(str(f)).duration for f in (paths["root"] / "audio").glob("*.flac"))
    audio_h /= 3600
    times: dict[str, list[float]] = {k: [] for k in ("anchor", "folder", "lhotse", "hf")}
    kinds = list(times)
    for rep in range(args.reps):
        # The order rotates each repetition, so no path always runs first (cold page cache)
        # or always beside the same neighbour's load on a shared machine.
        for kind in kinds[rep % len(kinds) :] + kinds[: rep % len(kinds)]:
            out = args.workdir / f"out-{kind}"
            shutil.rmtree(out, ignore_errors=True)
            start = time.perf_counter()
            run(kind, paths, out)
            times[kind].append(time.perf_counter() - start)
            shutil.rmtree(out, ignore_errors=True)
            print(f"rep {rep + 1} {kind}: {times[kind][-1]:.1f} s", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in times.items()}
    # Per repetition ratio to that repetition's anchor, then the median of those ratios.
    ratios = {
        k: statistics.median(t / a for t, a in zip(v, times["anchor"], strict=True))
        for k, v in times.items()
    }
    n_files = len(list((paths["root"] / "audio").glob("*.flac")))
    print(f"\n{audio_h:.2f} h of audio, {n_files} files, median of {args.reps} (range)\n")
    print("| path | wall s | hours of audio per minute | time vs anchor (per-rep median) |")
    print("|---|---|---|---|")
    for k, v in times.items():
        print(
            f"| {k} | {med[k]:.1f} ({min(v):.1f}-{max(v):.1f}) | {audio_h / (med[k] / 60):.2f} "
            f"| {ratios[k]:.2f}x |"
        )
    print(
        json.dumps(
            {
                "audio_hours": round(audio_h, 3),
                "seconds": times,
                "ratio_vs_anchor": {k: round(r, 3) for k, r in ratios.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
