"""A newcomer's first hour, measured on a fresh clone (issue 39, item 5).

Clones this checkout into CLONE (its own virtualenv, its own `.cache`, its own results), then:

1. `make demo`'s phases, overlapped as the Makefile overlaps them: the lean virtualenv
   (`make venv-demo`, pip downloading from the registry with no pip cache) beside the base
   image (`scripts/build_base_image.sh`, debootstrap, under a probe tag so the machine's own
   base image and model images are not reused), then the demo language's NSW grammars
   (`make grammars-demo`) beside the model image (`make image-demo`, on the probe base: a
   real build), then the run (`ops/benchmark`).
2. The rest of `make setup`'s grammars (`scripts/build_grammars.py`), then the first and the
   second `ops/score` of each embedded dataset language (its metadata.tsv against itself, one
   hypothesis given a number no cache has seen, so the NSW step must load its grammars).
3. The disk the builds left: the probe images, the `<none>` images created meanwhile, the
   clone's cache folders and virtualenv.

apt is not timed (the packages must already be installed; `make apt` checks them). One JSON
object on stdout; progress on stderr. The probe images are removed at the end (--keep keeps).

    .venv/bin/python benchmarks/first_hour.py [--clone /tmp/asrbench_first_hour]
        [--model pocketsphinx_en] [--dataset mini_en] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROBE_BASE = "asrbench/base:first-hour"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def start(name: str, cmd: list[str], clone: Path, env: dict[str, str]) -> tuple:
    log(f"{name}: {' '.join(cmd)}")
    out = open(clone.parent / f"{clone.name}.{name}.log", "w")  # closed in wait_all
    proc = subprocess.Popen(cmd, cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT)
    return name, proc, out, time.perf_counter()


def wait_all(running: list[tuple]) -> dict[str, float]:
    """Wait for every process; each one's own wall seconds (polled, so a step that ends first
    is not charged its neighbour's time), or exit naming the log of one that failed."""
    took: dict[str, float] = {}
    while len(took) < len(running):
        for name, proc, out, t0 in running:
            if name in took or proc.poll() is None:
                continue
            took[name] = round(time.perf_counter() - t0, 1)
            out.close()
            if proc.returncode != 0:
                raise SystemExit(f"{name} failed (exit {proc.returncode}); see {out.name}")
            log(f"{name}: {took[name]} s")
        time.sleep(0.5)
    return took


def group(
    clone: Path, env: dict[str, str], steps: dict[str, list[str]]
) -> tuple[dict[str, float], float]:
    """Run `steps` side by side; each one's seconds, and the group's wall seconds."""
    t0 = time.perf_counter()
    took = wait_all([start(name, cmd, clone, env) for name, cmd in steps.items()])
    return took, round(time.perf_counter() - t0, 1)


def demo_phases(clone: Path, env: dict[str, str], model: str, dataset: str) -> dict:
    base = ["scripts/build_base_image.sh", PROBE_BASE]
    first, wall1 = group(clone, env, {"venv_demo": ["make", "venv-demo"], "base_image": base})
    grammars, image = ["make", "grammars-demo"], ["make", "image-demo"]
    second, wall2 = group(clone, env, {"grammars_demo": grammars, "model_image": image})
    run, wall3 = group(clone, env, {"run": ["ops/benchmark", "-m", model, "-d", dataset]})
    return {
        "phases_s": {**first, **second, **run},
        "groups_s": [wall1, wall2, wall3],
        "total_s": round(wall1 + wall2 + wall3, 1),
        # what the same steps take one after the other (the overlap's gain)
        "sequential_s": round(sum(first.values()) + sum(second.values()) + wall3, 1),
    }


def embedded_languages(clone: Path) -> dict[str, str]:
    """language -> the first embedded dataset (sorted) in that language."""
    import yaml

    out: dict[str, str] = {}
    for card in sorted((clone / "datasets").glob("*/dataset.yaml")):
        lang = str(yaml.safe_load(card.read_text(encoding="utf-8")).get("language", ""))
        out.setdefault(lang, card.parent.name)
    return out


def score_once(clone: Path, env: dict[str, str], dataset: str, tag: str) -> float:
    """Seconds of one `ops/score` of the dataset against itself, one hypothesis numbered."""
    work = clone.parent / f"{clone.name}.score" / f"{dataset}.{tag}"
    work.mkdir(parents=True, exist_ok=True)
    rows = (clone / "datasets" / dataset / "metadata.tsv").read_text(encoding="utf-8")
    header, *lines = rows.splitlines()
    cols = header.split("\t")
    rows_ = (x.split("\t") for x in lines)
    ref = ["ID\tTEXT"] + [f"{c[cols.index('ID')]}\t{c[cols.index('TEXT')]}" for c in rows_]
    hyp = list(ref)
    hyp[1] += f" {time.time_ns() % 1_000_000}"  # unseen: the NSW result cache cannot answer it
    (work / "ref.tsv").write_text("\n".join(ref) + "\n", encoding="utf-8")
    (work / "hyp.tsv").write_text("\n".join(hyp) + "\n", encoding="utf-8")
    lang = yaml_language(clone, dataset)
    cmd = ["ops/score", str(work / "ref.tsv"), str(work / "hyp.tsv"), "-o", str(work / "out")]
    cmd += ["--lang", lang, "--bootstrap", "0"]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=clone, env=env, check=True, capture_output=True)
    return round(time.perf_counter() - t0, 2)


def yaml_language(clone: Path, dataset: str) -> str:
    import yaml

    card = clone / "datasets" / dataset / "dataset.yaml"
    return str(yaml.safe_load(card.read_text(encoding="utf-8"))["language"])


def first_scores(clone: Path, env: dict[str, str]) -> dict:
    t0 = time.perf_counter()
    grammars = ["ops/_py", "scripts/build_grammars.py"]
    subprocess.run(grammars, cwd=clone, env=env, check=True, stdout=sys.stderr)  # stdout: JSON
    built = round(time.perf_counter() - t0, 1)
    scores = {}
    for lang, dataset in embedded_languages(clone).items():
        first = score_once(clone, env, dataset, "first")
        second = score_once(clone, env, dataset, "second")
        scores[lang] = {"dataset": dataset, "first_s": first, "second_s": second}
        log(f"ops/score {lang} ({dataset}): first {first} s, second {second} s")
    return {"grammars_rest_s": built, "first_score": scores}


def du(path: Path) -> int:
    if not path.exists():
        return 0
    out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def docker_images(fmt: str, *filters: str) -> list[str]:
    cmd = ["docker", "images", "--no-trunc", "--format", fmt]
    for f in filters:
        cmd += ["-f", f]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()


def disk(clone: Path, dangling_before: set[str]) -> dict:
    probe = docker_images("{{.ID}}", f"reference={PROBE_BASE}")
    since = (f"since={PROBE_BASE}", "label=org.asrbench.model")
    ours = docker_images("{{.ID}}", *since) if probe else []
    new_dangling = sorted(set(docker_images("{{.ID}}", "dangling=true")) - dangling_before)

    def size(ids: list[str]) -> int:
        if not ids:
            return 0
        cmd = ["docker", "image", "inspect", "--format", "{{.Size}}", *ids]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return sum(int(x) for x in out.split())

    cache = clone / ".cache"
    folders = {p.name: du(p) for p in sorted(cache.iterdir())} if cache.is_dir() else {}
    return {
        "base_image_bytes": size(probe),
        "model_images": len(ours),
        "model_images_bytes": size(ours),
        # created while this ran, by anyone on the engine (other builds may share it)
        "dangling_new": len(new_dangling),
        "dangling_new_bytes": size(new_dangling),
        "cache_bytes": folders,
        "venv_bytes": du(clone / ".venv"),
        "_remove": ours + probe,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clone", type=Path, default=Path("/tmp/asrbench_first_hour"))
    ap.add_argument("--model", default="pocketsphinx_en")
    ap.add_argument("--dataset", default="mini_en")
    ap.add_argument("--keep", action="store_true", help="keep the probe images")
    args = ap.parse_args(argv)
    clone = args.clone.resolve()
    if clone.exists():
        raise SystemExit(f"{clone} exists: pass a fresh --clone")
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True
    ).stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASRBENCH_", "VIRTUAL_ENV"))}
    env.update(PIP_NO_CACHE_DIR="1", ASRBENCH_BASE_IMAGE=PROBE_BASE)
    dangling_before = set(docker_images("{{.ID}}", "dangling=true"))
    result = {"commit": commit, "cpus": os.cpu_count(), "load_before": os.getloadavg()}
    result["demo"] = demo_phases(clone, env, args.model, args.dataset)
    result.update(first_scores(clone, env))
    result["load_after"] = os.getloadavg()
    result["disk"] = disk(clone, dangling_before)
    remove = result["disk"].pop("_remove")
    if not args.keep and remove:
        subprocess.run(["docker", "rmi", *remove], capture_output=True)
    print(json.dumps(result, indent=1))
    if not args.keep:  # the clone, its step logs and its score folders
        for path in [clone, *clone.parent.glob(f"{clone.name}.*")]:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
