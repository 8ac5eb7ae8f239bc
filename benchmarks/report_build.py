"""Report build time and size on a synthetic results tree (docs/BENCHMARKS.md, "Report").

Generates 10 models x 5 datasets x 2,000 utterances (by default) the way the platform stores
them: dataset folders (metadata.tsv, dataset.yaml, 16 kHz WAV audio), and per cell the scorer's
result written by the platform's own writers (`utterances.jsonl` from
`asrbench.results.reports.utterance_lines`, `summary.json` from `write_summary`, a run.json
with the provenance fields the report reads). Texts are seeded: mixed case and punctuation,
fillers, British spellings and contractions, so that every ablation step has work; no digits
(NSW would call nemo on every new string). Models differ in their error rates, so some pairs
are significantly different and some are not. Then it times `ops/report` (a fresh process, as
a user runs it) cold (empty ablation cache) and warm, reports the site's size and file count,
and (with --browser) loads the largest cell page in headless Chromium to time its first render
and a search over its utterances.

    .venv/bin/python benchmarks/report_build.py [--models 10] [--datasets 5] [--utts 2000]
        [--work DIR] [--keep] [--browser] [--audio copy|link|none]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.scoring import WORDS as _COMMON  # noqa: E402 - after the sys.path line

# the scoring benchmark's common words, plus words every ablation step has work on
WORDS = _COMMON + "colour favourite centre organise behaviour london paris monday".split()
UK = {
    "colour": "color",
    "favourite": "favorite",
    "centre": "center",
    "organise": "organize",
    "behaviour": "behavior",
}
DAE = [("going to", "gonna"), ("do not", "don't"), ("it is", "it's"), ("want to", "wanna")]
PUNCT = [",", ".", "?", "!", ";"]


def _ref_text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(5, 25))]
    if rng.random() < 0.2:
        i = rng.randrange(len(words))
        words[i:i] = rng.choice(DAE)[0].split()
    out = []
    for i, w in enumerate(words):
        if i == 0 or w in ("london", "paris", "monday") or rng.random() < 0.03:
            w = w.capitalize()
        if rng.random() < 0.08:
            w += rng.choice(PUNCT)
        out.append(w)
    return " ".join(out) + "."


def _hyp_text(ref: str, rng: random.Random, err: float) -> str:
    """A recogniser's output: ~err word errors, lower case, no punctuation, fillers, UK-US."""
    toks = [t.strip(",.?!;").lower() for t in ref.split()]
    text = " ".join(toks)
    for full, short in DAE:
        if full in text and rng.random() < 0.7:
            text = text.replace(full, short, 1)
    out = []
    for t in text.split():
        r = rng.random()
        if r < err * 0.6:
            out.append(rng.choice(WORDS))  # substitution
        elif r < err * 0.85:
            continue  # deletion
        else:
            out.append(UK.get(t, t) if rng.random() < 0.5 else t)
        if rng.random() < err * 0.15:
            out.append(rng.choice(WORDS))  # insertion
        if rng.random() < 0.02:
            out.append("uh")
    if rng.random() < 0.3:
        out[0:1] = [out[0].capitalize()] if out else []
    return " ".join(out)


def make_tree(work: Path, n_models: int, n_datasets: int, n_utts: int, seed: int = 0) -> Path:
    """Write datasets under work/datasets and results under work/results; return results."""
    import numpy as np
    import soundfile as sf

    from asrbench.dataset import load_dataset
    from asrbench.fsio import atomic_write_json, atomic_write_text
    from asrbench.identity import digest
    from asrbench.results.reports import utterance_lines, write_utterances
    from asrbench.results.summary import Selection, Summary, write_summary
    from asrbench.scorers import get_scorer, scorer_config, scorer_identity

    rng = random.Random(seed)
    results = work / "results"
    scorer = get_scorer("en", {})
    sid = scorer_identity(scorer).to_dict()
    cfg = scorer_config(scorer)
    sr = 16000
    for d in range(n_datasets):
        ds_id = f"synth_{d}"
        folder = work / "datasets" / ds_id
        (folder / "audio").mkdir(parents=True, exist_ok=True)
        rows = ["ID\tAUDIO\tDURATION\tTEXT"]
        refs = {}
        durs = {}
        t = np.arange(int(0.5 * sr)) / sr
        for i in range(n_utts):
            uid = f"{ds_id}-{i:05d}"
            ref = _ref_text(rng)
            refs[uid] = ref
            wav = 0.1 * np.sin(2 * np.pi * (200 + 7 * i % 800) * t) * np.hanning(len(t))
            sf.write(folder / "audio" / f"{uid}.wav", wav, sr, subtype="PCM_16")
            durs[uid] = 0.5
            rows.append(f"{uid}\taudio/{uid}.wav\t0.500\t{ref}")
        atomic_write_text(folder / "metadata.tsv", "\n".join(rows) + "\n")
        atomic_write_text(
            folder / "dataset.yaml",
            f"id: {ds_id}\nname: synthetic {ds_id}\nlanguage: en\n"
            "sample_rate: 16000\nlicence: CC0\ndescription: report benchmark\n",
        )
        ds = load_dataset(folder, check_audio=False)
        ds_hash = ds.content_hash()
        ids = list(refs)
        sel = Selection(
            n_utts=n_utts, n_dataset_utts=n_utts, ids_sha256=digest("selection", utterances=ids)
        )
        for m in range(n_models):
            model = f"model_{m:02d}"
            err = 0.05 + 0.02 * (m // 2) + 0.002 * (m % 2) + 0.01 * d  # pairs of near-ties
            hyps = {u: _hyp_text(refs[u], rng, err) for u in ids}
            result = scorer.score(refs, hyps)
            cell = results / model / ds_id
            cell.mkdir(parents=True, exist_ok=True)
            write_utterances(cell / "utterances.jsonl", utterance_lines(result, refs, hyps, durs))
            proc = [0.05 + 0.02 * m + rng.random() * 0.01 for _ in ids]
            timing = {
                "n_timed": n_utts,
                "processing_s": round(sum(proc), 4),
                "audio_s": 0.5 * n_utts,
                "rtf": round(sum(proc) / (0.5 * n_utts), 5),
                "latency_s": {
                    "p50": round(sorted(proc)[n_utts // 2], 4),
                    "p90": round(sorted(proc)[int(n_utts * 0.9)], 4),
                    "p95": round(sorted(proc)[int(n_utts * 0.95)], 4),
                    "p99": round(sorted(proc)[int(n_utts * 0.99)], 4),
                },
                "latency_max_s": round(max(proc), 4),
            }
            key = digest(
                "result",
                hyps=f"{model}{ds_id}",
                dataset=ds_hash,
                selection=sel.to_dict(),
                scorer=sid,
            )
            summary = Summary(
                producer="benchmark",
                result_key="sha256:" + key,
                metrics=result.metrics,
                selection=sel,
                scorer=sid,
                model=model,
                model_identity=f"sha256:{digest('selection', utterances=[model])}",
                runner="local",
                dataset=ds_id,
                dataset_hash=ds_hash,
                hyps_key=key[:32],
                timing=timing,
            )
            write_summary(cell / "summary.json", summary)
            atomic_write_text(cell / "hyp.raw.tsv", "".join(f"{u}\t{hyps[u]}\n" for u in ids))
            atomic_write_json(
                cell / "run.json",
                {
                    "format": "asrbench-run-v2",
                    "command": ["ops/benchmark", "-m", model, "-d", ds_id],
                    "git": {"commit": "synthetic", "dirty": False},
                    "model": {
                        "id": model,
                        "identity": summary.model_identity,
                        "image": f"asrbench/{model}:synthetic",
                        "runner": "local",
                        "card": {
                            "id": model,
                            "name": f"Synthetic model {m}",
                            "type": "open-source",
                            "licence": "none",
                            "architecture": "synthetic error generator",
                        },
                    },
                    "dataset": {
                        "id": ds_id,
                        "hash": ds_hash,
                        "folder": str(folder.resolve()),
                        "meta": ds.meta,
                        "n_utts": n_utts,
                    },
                    "selection": sel.to_dict(),
                    "result_key": summary.result_key,
                    "options": {"scorer": {}},
                    "scorer": {**sid, "config": cfg},
                    "packages": {},
                    "host": {},
                    "times": {"started": "synthetic"},
                },
            )
    return results


def _size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def _report(results: Path, out: Path, audio: str, cache: Path) -> tuple[float, float]:
    """(wall s, CPU s of the ops/report process): CPU time is what a loaded machine inflates
    least, wall time what a user waits."""
    env = {**os.environ, "ASRBENCH_CACHE": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    proc = subprocess.run(
        [
            str(ROOT / "ops" / "report"),
            "--results",
            str(results),
            "-o",
            str(out),
            "--audio",
            audio,
            "-q",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"ops/report failed ({proc.returncode}):\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _browser(out: Path) -> dict:
    sys.path.insert(0, str(ROOT / "tests" / "report"))
    from browser import open_browser  # the tests' launcher: Debian chromium, network blocked

    cells = sorted((out / "cell").rglob("*.html"), key=lambda p: p.stat().st_size)
    page_path = cells[-1]
    with open_browser() as (ctx, _errors):
        page = ctx.new_page()
        t = time.monotonic()
        page.goto(page_path.as_uri())
        page.wait_for_selector(".utt")
        first = time.monotonic() - t
        t = time.monotonic()
        page.fill("#utt-search", "the")
        page.wait_for_timeout(0)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
        search = time.monotonic() - t
        shown = page.locator(".utt").count()
    return {
        "page": str(page_path.relative_to(out)),
        "page_bytes": page_path.stat().st_size,
        "first_render_s": round(first, 3),
        "search_s": round(search, 3),
        "utterances_rendered": shown,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--datasets", type=int, default=5)
    ap.add_argument("--utts", type=int, default=2000)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--browser", action="store_true")
    ap.add_argument("--audio", default="copy", choices=["copy", "link", "none"])
    a = ap.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="report-bench-"))
    t = time.monotonic()
    if (work / "results").is_dir() and a.work:
        results = work / "results"  # a tree generated by an earlier run: reused
    else:
        results = make_tree(work, a.models, a.datasets, a.utts)
    gen = time.monotonic() - t
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    # NSW keeps its grammars in the cache: link the checkout's so a cold run is cold for the
    # report (ablation cache), not for nemo's grammar compilation (no text has a digit anyway).
    cache.mkdir()
    nemo = ROOT / ".cache" / "nemo_tn"
    if nemo.is_dir():
        os.symlink(nemo, cache / "nemo_tn")
    out1, out2 = work / "site1", work / "site2"
    load_before = os.getloadavg()[0]
    cold, cold_cpu = _report(results, out1, a.audio, cache)
    warm, warm_cpu = _report(results, out2, a.audio, cache)
    same = (
        subprocess.run(["diff", "-r", "-q", str(out1), str(out2)], capture_output=True).returncode
        == 0
    )
    size, files = _size(out1)
    html = sum(p.stat().st_size for p in out1.rglob("*.html"))
    audio_bytes = _size(out1 / "audio")[0] if (out1 / "audio").is_dir() else 0
    res = {
        "models": a.models,
        "datasets": a.datasets,
        "utts": a.utts,
        "audio": a.audio,
        "generate_s": round(gen, 1),
        "build_cold_s": round(cold, 2),
        "build_cold_cpu_s": round(cold_cpu, 2),
        "build_warm_s": round(warm, 2),
        "build_warm_cpu_s": round(warm_cpu, 2),
        "byte_identical": same,
        "site_bytes": size,
        "site_files": files,
        "html_bytes": html,
        "audio_bytes": audio_bytes,
        "peak_rss_children_mb": round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
        ),
        "load_avg_1m_before": round(load_before, 2),
        "load_avg_1m_after": round(os.getloadavg()[0], 2),
    }
    if a.browser:
        res["browser"] = _browser(out1)
    print(json.dumps(res, indent=2))
    if not a.keep and not a.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
