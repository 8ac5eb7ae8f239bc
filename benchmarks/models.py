#!/usr/bin/env python3
"""Every local model of the zoo on one dataset, side by side, in one run: accuracy, speed,
start-up, memory and image size.

Per model, one after the other on the same machine (never two at once: they share 2 cores):
  - image: size of the model's Docker image, the part above the shared base image, and whether
    any build tool (cc, gcc, make, ld) is inside;
  - cold start: `docker run` of the image on a one-utterance list (the shortest utterance),
    median of --repeats runs: wall time minus the program's own processing time for that
    utterance (timing.tsv), i.e. container start + interpreter + imports + model load;
  - the platform's own `ops/benchmark -m MODEL -d DATASET --runner docker --jobs 1` with a
    fresh cache: TER, mTER, RTF and latency from its summary.json;
  - peak memory during that run: the largest resident memory of the container (anonymous
    pages + mapped files, from its cgroup's memory.stat), sampled every 0.1 s while it runs.

    .venv/bin/python benchmarks/models.py [-m MODEL ...] [--dataset mini_en] [--json out.json]

A dataset in a language the platform's scorer does not know yet (it has en and zh; e.g.
`--dataset mini_fr`): the model runs through the Docker runner with `ASRBENCH_LANGUAGE` set to
the dataset's language, and `ops/score` scores it with the language-neutral steps only (CASE
and PUNC; no English interjections, UK-US spellings, number normalisation or alternatives):

    .venv/bin/python benchmarks/models.py -m whisper_base --dataset mini_fr

Quote timings only from an idle machine: the script prints the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from asrbench.dataset import load_dataset
from asrbench.images import BASE_IMAGE, build_model_image, client
from asrbench.modelcard import human, load_all
from asrbench.runners import read_tsv_pairs
from asrbench.settings import REPO_ROOT, settings

BUILD_TOOLS = "cc gcc g++ make ld"


def image_facts(tag: str) -> dict:
    c = client()
    size = int(c.images.get(tag).attrs["Size"])
    base = int(c.images.get(BASE_IMAGE).attrs["Size"])
    found = c.containers.run(
        tag,
        entrypoint=["/bin/sh", "-c", f"for t in {BUILD_TOOLS}; do command -v $t; done; true"],
        network_mode="none",
        remove=True,
    )
    return {
        "image_bytes": size,
        "above_base_bytes": size - base,
        "build_tools": found.decode().split() or [],
    }


def cold_start(tag: str, dataset, repeats: int) -> dict:
    """Median over `repeats` fresh containers of (wall - processing) on the shortest utterance."""
    utt = min(dataset.utterances, key=lambda u: u.duration)
    samples, walls = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="asrbench-cold-") as tmp:
            work = Path(tmp)
            (work / "wav.lst").write_text(f"{utt.id}\t/data/{utt.audio}\n")
            os.chmod(work, 0o777)
            start = time.perf_counter()
            subprocess.run(
                [
                    "docker",
                    "run",
                    "--rm",
                    "--network",
                    "none",
                    "--user",
                    "10001:10001",
                    "-v",
                    f"{dataset.root.resolve()}:/data:ro",
                    "-v",
                    f"{work}:/work",
                    tag,
                    "/work/wav.lst",
                    "/work/out",
                ],
                check=True,
                capture_output=True,
            )
            wall = time.perf_counter() - start
            processing = float(read_tsv_pairs(work / "out" / "timing.tsv")[utt.id].split("\t")[0])
        walls.append(wall)
        samples.append(wall - processing)
    return {
        "cold_start_s": statistics.median(samples),
        "one_utt_wall_s": statistics.median(walls),
        "utterance": utt.id,
        "utterance_s": utt.duration,
    }


class PeakMemory:
    """The largest resident memory (anonymous + mapped files) of every container of `model_id`,
    sampled every 0.1 s from its cgroup's memory.stat while it runs. (The cgroup's own
    high-water mark is no use here: it counts page cache, which fills up to the limit.)"""

    def __init__(self, model_id: str):
        self.model_id, self.peak, self._stop = model_id, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _read(cid: str) -> int | None:
        for folder, keys in (
            (f"/sys/fs/cgroup/system.slice/docker-{cid}.scope", ("anon", "file_mapped")),
            (f"/sys/fs/cgroup/docker/{cid}", ("anon", "file_mapped")),
            (f"/sys/fs/cgroup/memory/docker/{cid}", ("total_rss", "total_mapped_file")),
        ):
            try:
                stat = dict(
                    line.split() for line in Path(folder, "memory.stat").read_text().splitlines()
                )
            except (OSError, ValueError):
                continue
            return sum(int(stat.get(k, 0)) for k in keys)
        return None

    def _run(self) -> None:
        c = client()
        while not self._stop.is_set():
            for ctr in c.containers.list(filters={"label": f"org.asrbench.model={self.model_id}"}):
                value = self._read(ctr.id)
                if value:
                    self.peak = max(self.peak, value)
            self._stop.wait(0.1)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def benchmark(model_id: str, dataset_id: str, work: Path) -> dict:
    results, cache = work / "results", work / "cache"
    cmd = [
        str(REPO_ROOT / "ops" / "benchmark"),
        "-m",
        model_id,
        "-d",
        dataset_id,
        "--runner",
        "docker",
        "--jobs",
        "1",
        "--results",
        str(results),
        "--cache",
        str(cache),
        "--no-progress",
        "--max-failed",
        "100%",
    ]  # a failed utterance is reported, not fatal
    with PeakMemory(model_id) as mem:
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"ops/benchmark failed for {model_id}:\n{proc.stderr[-3000:]}")
    (summary_path,) = (results / model_id / dataset_id).glob("summary.json")
    summary = json.loads(summary_path.read_text())
    metrics, timing = summary["metrics"], summary.get("timing") or {}
    failed = read_tsv_pairs(summary_path.parent / "failed.tsv")
    return {
        "failed": failed,
        "ter": metrics.get("ter"),
        "mter": metrics.get("mter"),
        "coverage": metrics.get("coverage"),
        "n_utts": metrics.get("n_utts"),
        "rtf": timing.get("rtf"),
        "latency_p50_s": (timing.get("latency_s") or {}).get("p50"),
        "benchmark_wall_s": wall,
        "peak_memory_bytes": mem.peak or None,
    }


def serve_latency(model_id: str, dataset, requests_n: int = 10) -> dict:
    """`ops/serve -m MODEL` (warm), then a 1-second 16 kHz clip of real speech posted
    `requests_n` times: median wall time per request and the model's own processing time."""
    import io
    import urllib.request
    import wave

    utt = next(u for u in sorted(dataset.utterances, key=lambda u: u.duration) if u.duration > 2)
    with wave.open(str(dataset.audio_path(utt)), "rb") as w:
        frames = w.readframes(w.getframerate())  # the first second
        params = w.getparams()
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setparams(params)
        w.writeframes(frames)
    clip = buf.getvalue()
    proc = subprocess.Popen(
        [str(REPO_ROOT / "ops" / "serve"), "-m", model_id, "--runner", "docker", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        t0 = time.perf_counter()
        base = proc.stdout.readline().strip()
        ready_s = time.perf_counter() - t0
        boundary = "asrbenchboundary"
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n'
                f'{model_id}\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                f'filename="clip.wav"\r\nContent-Type: audio/wav\r\n\r\n'
            ).encode()
            + clip
            + f"\r\n--{boundary}--\r\n".encode()
        )
        walls, processing = [], []
        for _ in range(requests_n):
            req = urllib.request.Request(
                base + "/audio/transcriptions",
                data=body,
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            )
            start = time.perf_counter()
            with urllib.request.urlopen(req, timeout=300) as resp:
                resp.read()
                processing.append(float(resp.headers["X-Processing-Seconds"]))
            walls.append(time.perf_counter() - start)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {
        "serve_ready_s": ready_s,
        "serve_request_wall_s": statistics.median(walls),
        "serve_processing_s": statistics.median(processing),
        "serve_requests": requests_n,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-m", "--model", action="append", help="model ID (default: every local one)")
    ap.add_argument("--dataset", default="mini_en")
    ap.add_argument("--repeats", type=int, default=3, help="cold starts per model")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument(
        "--serve",
        action="append",
        default=[],
        metavar="MODEL",
        help="also time ops/serve -m MODEL (warm): a 1-second clip, 10 requests",
    )
    args = ap.parse_args()
    models, _ = load_all(settings().models_dir)
    local = [
        m for m in models if m.card.type == "open-source" and (not args.model or m.id in args.model)
    ]
    ds = load_dataset(REPO_ROOT / "datasets" / args.dataset)
    print(f"load average before: {os.getloadavg()}", file=sys.stderr)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="asrbench-models-bench-") as tmp:
        for m in local:
            print(f"{m.id}: building / reusing the image...", file=sys.stderr)
            tag, _ = build_model_image(m)
            facts = {"tag": tag, **image_facts(tag)}
            facts.update(cold_start(tag, ds, args.repeats))
            # every language is scored with its own normalisation (scoring.languages) and
            # reaches the model from the dataset (ops/benchmark sets it)
            facts.update(benchmark(m.id, ds.id, Path(tmp) / m.id))
            if m.id in args.serve:
                facts.update(serve_latency(m.id, ds))
            rows[m.id] = facts
            print(
                f"{m.id}: {json.dumps({k: v for k, v in facts.items() if k != 'hypotheses'})}",
                file=sys.stderr,
            )
    print(f"load average after: {os.getloadavg()}", file=sys.stderr)
    audio = ds.total_duration
    print(
        f"{len(rows)} local models on {ds.id} ({len(ds)} utterances, {audio:.1f} s), "
        f"docker runner, one at a time, {os.cpu_count()} cores"
    )
    print(
        "| model | TER % | mTER % | failed | RTF | latency p50 s | cold start s | peak memory | "
        "image | above base | build tools |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mid, f in rows.items():
        print(
            f"| {mid} | {100 * f['ter']:.2f} | {100 * f['mter']:.2f} | "
            f"{len(f.get('failed') or {})} | {f['rtf']:.3f} | "
            f"{f['latency_p50_s']:.2f} | {f['cold_start_s']:.2f} | "
            f"{human(f['peak_memory_bytes'], 'B')} | {human(f['image_bytes'], 'B')} | "
            f"{human(f['above_base_bytes'], 'B')} | {' '.join(f['build_tools']) or 'none'} |"
        )
    if args.serve:
        print(
            "\n| model | ops/serve ready s | 1-s clip: request s (median of 10) | of which "
            "inference s | one-utterance docker run s (cold path) |"
        )
        print("|---|---|---|---|---|")
        for mid, f in rows.items():
            if "serve_ready_s" not in f:
                continue
            print(
                f"| {mid} | {f['serve_ready_s']:.1f} | {f['serve_request_wall_s']:.3f} | "
                f"{f['serve_processing_s']:.3f} | {f['one_utt_wall_s']:.2f} |"
            )
    if args.json:
        args.json.write_text(
            json.dumps({"dataset": ds.id, "audio_s": audio, "models": rows}, indent=2)
        )


if __name__ == "__main__":
    main()
