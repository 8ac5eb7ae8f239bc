"""Helpers of the Ray tests: the driver command, small datasets, fake models, comparisons."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

from asrbench.settings import REPO_ROOT
from tests import factories

OPS = REPO_ROOT / "ops"
# A model secret the nodes and the driver hold; a fake model echoes it (redaction test).
FAKE_SECRET = "sk-ray-test-SECRET-4f9a1c77"


def clean_env() -> dict[str, str]:
    """This process's environment without the developer's AWS, ASRBENCH and RAY settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ASRBENCH_", "RAY_"))}


def bench(
    *args: str | Path, env: dict[str, str], timeout: float = 900, prefix: list[str] | None = None
) -> subprocess.CompletedProcess:
    """`ops/benchmark ARGS` as a user runs it (optionally behind a wrapper command)."""
    cmd = [*(prefix or []), str(OPS / "benchmark"), *map(str, args)]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO_ROOT
    )


# --- datasets ----------------------------------------------------------------------------------


def make_tiny_datasets(root: Path, n: int = 3) -> list[Path]:
    """Two datasets of `n` short mini_en utterances each (distinct utterances), under `root`."""
    from asrbench.dataset import load_dataset, write_dataset

    src = load_dataset(REPO_ROOT / "datasets" / "mini_en")
    short = sorted(src.utterances, key=lambda u: (u.duration, u.id))
    out = []
    for k, name in enumerate(("tiny_a", "tiny_b")):
        utts = sorted(short[k * n : (k + 1) * n], key=lambda u: u.id)
        folder = root / name
        (folder / "audio").mkdir(parents=True)
        for u in utts:
            shutil.copy2(src.root / u.audio, folder / u.audio)
        write_dataset(folder, {**src.meta, "id": name}, src.columns, utts)
        out.append(folder)
    return out


# --- fake models ---------------------------------------------------------------------------

FAKE = textwrap.dedent(r'''
    """Fake ASR for the Ray tests; modes: ok, slow (SLEEP s per utterance), poison (after a
    failure on FAIL_IDS every later utterance of the process fails, and the failure echoes
    $FAKE_API_KEY, as an API error body would)."""
    import os, sys, time
    from pathlib import Path

    wav_list, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    poisoned = False
    with open(out / "hyp.tsv", "a") as hyp, open(out / "failed.tsv", "a") as failed, \
         open(out / "timing.tsv", "a") as timing:
        for line in Path(wav_list).read_text().splitlines():
            uid, _, path = line.partition("\t")
            size = os.path.getsize(path)  # reads its audio where the runner says it is
            if MODE == "slow":
                time.sleep(SLEEP)
            if poisoned or uid in FAIL_IDS:
                why = "decoder in a bad state" if poisoned else (
                    "401 from API: key " + os.environ.get("FAKE_API_KEY", "?") + " refused")
                print("request failed with key", os.environ.get("FAKE_API_KEY"))
                failed.write(f"{uid}\t{why}\n")
                failed.flush()
                poisoned = MODE == "poison"
                continue
            hyp.write(f"{uid}\tfake words for {size % 7} bytes\n")
            timing.write(f"{uid}\t0.0100\t1.000\n")
            hyp.flush()
            timing.flush()
''')


def make_model(
    root: Path,
    model_id: str,
    mode: str = "ok",
    fail_ids: tuple[str, ...] = (),
    sleep: float = 0.0,
    card: dict | None = None,
    marker: str = "",
) -> Path:
    """A model folder (card + program, no Dockerfile: its image is rendered from the card)."""
    fields = {"name": f"Fake {mode}", "memory": "256m", **(card or {})}
    if mode == "poison":
        fields.update({"network": True, "secrets": ["FAKE_API_KEY"], "type": "commercial-api"})
    head = f"# {marker}\nMODE = {mode!r}\nFAIL_IDS = {set(fail_ids)!r}\nSLEEP = {sleep!r}\n"
    return factories.make_model(root, model_id, head + FAKE, requirements=None, **fields)


# --- comparing result cells ----------------------------------------------------------------

SAME_BYTES = (
    "utterances.jsonl",
    "hyp.raw.tsv",
    "failed.tsv",
    "ref.norm.tsv",
    "hyp.norm.tsv",
    "scoring/alignment.txt",
    "scoring/hyp.pra",
    "scoring/hyp.sys",
    "scoring/table.txt",
)


def cells(results: Path) -> dict[str, Path]:
    """'model/dataset' -> the cell folder, for every summary.json under `results`."""
    return {
        f"{p.parent.parent.name}/{p.parent.name}": p.parent
        for p in sorted(results.glob("*/*/summary.json"))
    }


def assert_same_cells(ours: Path, reference: Path, with_timing: bool) -> None:
    """Byte-identical per-utterance files and alignments; summary.json byte-identical
    (`with_timing`: the model's measured timings are constant), else equal but for `timing`."""
    a, b = cells(ours), cells(reference)
    assert a and sorted(a) == sorted(b), (sorted(a), sorted(b))
    for name in a:
        for rel in SAME_BYTES:
            pa, pb = a[name] / rel, b[name] / rel
            assert pa.is_file() == pb.is_file(), f"{name}/{rel}"
            if pa.is_file():
                assert pa.read_bytes() == pb.read_bytes(), f"{name}/{rel} differs"
        sa, sb = (a[name] / "summary.json").read_bytes(), (b[name] / "summary.json").read_bytes()
        ja, jb = json.loads(sa), json.loads(sb)
        if not with_timing:
            ja.pop("timing"), jb.pop("timing")
        diff = {
            k: (ja.get(k), jb.get(k)) for k in sorted(set(ja) | set(jb)) if ja.get(k) != jb.get(k)
        }
        assert ja == jb, f"{name}/summary.json differs: {diff}"[:3000]
        if with_timing:
            assert sa == sb, f"{name}/summary.json: same keys and values, other bytes"


def shards(results: Path) -> list[dict]:
    """Every shard record of every cell's run.json, with its cell's name."""
    out = []
    for name, cell in cells(results).items():
        run = json.loads((cell / "run.json").read_text())
        out += [{**s, "cell": name, "runner": run["model"]["runner"]} for s in run["shards"]]
    return out
