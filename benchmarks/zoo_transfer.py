"""Zoo transfer throughput vs plain boto3, on a ~500 MB dataset and SeaweedFS on loopback.

    .venv/bin/python benchmarks/zoo_transfer.py [--mb 500] [--files 250] [--reps 3]

Generates the dataset under /tmp (reused across runs), starts SeaweedFS on free loopback
ports, then for each repetition, on a fresh bucket prefix (so every push is cold):
  zoo push      hash every file, HEAD each object, multipart-upload the missing ones, publish
  zoo pull      into an empty cache: ranged GETs, SHA-256 of every object, hard-link into place
  boto3         `upload_file` / `download_file` of the same files, one after the other (the
                plain script a user would write), and the same calls from 10 threads
Prints a markdown table (median of the repetitions) and a JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench.testing.seaweed import run_seaweedfs
from asrbench.zoo import pull, push

ACCESS, SECRET = "BENCHACCESSKEY", "bench-secret-key-not-for-real-use"
BUCKET = "zoo"


def make_dataset(root: Path, total_mb: int, files: int) -> Path:
    """Noise WAVs (16 kHz mono 16-bit) adding up to `total_mb` MB; reused when present."""
    marker = root / ".complete"
    if marker.is_file() and marker.read_text() == f"{total_mb}/{files}":
        return root
    shutil.rmtree(root, ignore_errors=True)
    (root / "audio").mkdir(parents=True)
    frames = total_mb * 1_000_000 // files // 2
    rng = np.random.default_rng(0)
    rows = ["ID\tAUDIO\tDURATION\tTEXT"]
    for i in range(files):
        sf.write(
            root / "audio" / f"b{i:05d}.wav",
            (rng.standard_normal(frames) * 2000).astype(np.int16),
            16000,
            subtype="PCM_16",
        )
        rows.append(f"b{i:05d}\taudio/b{i:05d}.wav\t{frames / 16000:.3f}\tnoise {i}")
    (root / "metadata.tsv").write_text("\n".join(rows) + "\n")
    (root / "dataset.yaml").write_text(
        "id: bench\nlanguage: en\nsample_rate: 16000\nlicence: CC0\ndescription: benchmark noise\n"
    )
    marker.write_text(f"{total_mb}/{files}")
    return root


def files_of(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--files", type=int, default=250)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "asrbench-zoo-bench"
    )
    args = ap.parse_args()

    data = make_dataset(args.workdir / "dataset" / "bench", args.mb, args.files)
    files = files_of(data)
    nbytes = sum(p.stat().st_size for p in files)
    run = args.workdir / f"run-{os.getpid()}"
    run.mkdir(parents=True)
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": ACCESS,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    )
    results: dict[str, list[float]] = {
        k: []
        for k in (
            "zoo push",
            "zoo pull",
            "boto3 upload_file (loop)",
            "boto3 download_file (loop)",
            "boto3 upload_file (10 threads)",
            "boto3 download_file (10 threads)",
        )
    }
    try:
        with run_seaweedfs(run / "seaweed", ACCESS, SECRET, BUCKET) as server:
            from boto3.s3.transfer import TransferConfig

            client = server.client()
            tcfg = TransferConfig()  # boto3's defaults: 8 MB multipart, 10 threads per file

            def timed(name: str, fn) -> None:
                t0 = time.perf_counter()
                fn()
                results[name].append(time.perf_counter() - t0)

            for rep in range(args.reps):
                prefix = f"bench-{uuid.uuid4().hex[:8]}"
                cfg = run / f"zoo-{rep}.yaml"
                cfg.write_text(
                    json.dumps(
                        {
                            "remotes": {
                                "s3": {
                                    "url": f"s3://{BUCKET}/{prefix}/zoo",
                                    "endpoint_url": server.endpoint,
                                }
                            }
                        }
                    )
                )
                os.environ["ASRBENCH_CACHE"] = str(run / f"cache-{rep}")
                timed("zoo push", lambda c=cfg: push("dataset", "bench", source=data, config=c))
                timed(
                    "zoo pull",
                    lambda c=cfg, r=rep: pull(
                        "dataset", "bench", config=c, dest=run / f"pulled-{r}"
                    ),
                )
                keys = [f"{prefix}/plain/{p.relative_to(data)}" for p in files]

                def up_loop(keys=keys) -> None:
                    for p, k in zip(files, keys, strict=True):
                        client.upload_file(str(p), BUCKET, k, Config=tcfg)

                def down_loop(keys=keys, r=rep) -> None:
                    for p, k in zip(files, keys, strict=True):
                        dest = run / f"plain-{r}" / p.relative_to(data)
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        client.download_file(BUCKET, k, str(dest), Config=tcfg)

                timed("boto3 upload_file (loop)", up_loop)
                timed("boto3 download_file (loop)", down_loop)
                tkeys = [f"{prefix}/threads/{p.relative_to(data)}" for p in files]

                def up_threads(keys=tkeys) -> None:
                    with ThreadPoolExecutor(10) as pool:
                        list(
                            pool.map(
                                lambda pk: client.upload_file(
                                    str(pk[0]), BUCKET, pk[1], Config=tcfg
                                ),
                                zip(files, keys, strict=True),
                            )
                        )

                def down_threads(keys=tkeys, r=rep) -> None:
                    def one(pk) -> None:
                        dest = run / f"threads-{r}" / pk[0].relative_to(data)
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        client.download_file(BUCKET, pk[1], str(dest), Config=tcfg)

                    with ThreadPoolExecutor(10) as pool:
                        list(pool.map(one, zip(files, keys, strict=True)))

                timed("boto3 upload_file (10 threads)", up_threads)
                timed("boto3 download_file (10 threads)", down_threads)
                # Keep the disk small: drop this repetition's local copies.
                for d in (f"pulled-{rep}", f"plain-{rep}", f"threads-{rep}", f"cache-{rep}"):
                    shutil.rmtree(run / d, ignore_errors=True)
    finally:
        shutil.rmtree(run, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in results.items()}
    mbps = {k: nbytes / 1e6 / v for k, v in med.items()}
    print(
        f"\n{len(files)} files, {nbytes / 1e6:.0f} MB, SeaweedFS on loopback, "
        f"{os.cpu_count()} CPU(s), median of {args.reps}\n"
    )
    print("| transfer | seconds | MB/s |")
    print("|---|---:|---:|")
    for k in med:
        print(f"| {k} | {med[k]:.2f} | {mbps[k]:.0f} |")
    ratios = {
        "push / upload_file loop": med["boto3 upload_file (loop)"] / med["zoo push"],
        "pull / download_file loop": med["boto3 download_file (loop)"] / med["zoo pull"],
        "push / upload_file 10 threads": med["boto3 upload_file (10 threads)"] / med["zoo push"],
        "pull / download_file 10 threads": med["boto3 download_file (10 threads)"]
        / med["zoo pull"],
    }
    print()
    for k, v in ratios.items():
        print(f"throughput ratio {k}: {v:.2f}")
    print(
        json.dumps(
            {
                "files": len(files),
                "bytes": nbytes,
                "reps": args.reps,
                "seconds": results,
                "ratios": ratios,
            }
        )
    )


if __name__ == "__main__":
    main()
