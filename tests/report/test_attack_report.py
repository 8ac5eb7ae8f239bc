"""An attack condition end to end (issue 28, items 4 and 5): `ops/robustness` with a PGD attack
through the differentiable Whisper tiny.en on two real mini_en utterances (2 steps: the
mechanics, not the strength), Whisper tiny.en in Docker (white-box) and PocketSphinx (transfer)
on the attacked audio, Gaussian noise at the same SNR added by the grid; then the report's
robustness page in the real headless Chromium: the attack table and the clean/attacked players.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml

from asrbench.images import engine_available
from asrbench.settings import REPO_ROOT
from tests.conftest import require

pytestmark = [pytest.mark.slow, pytest.mark.docker]
GRID = "pgd:snr=30,steps=2"


def _ops(*args: str, results: Path) -> None:
    env = {**os.environ, "ASRBENCH_RESULTS": str(results)}
    done = subprocess.run(
        [str(REPO_ROOT / "ops" / args[0]), *args[1:]], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require("docker", engine_available(), "no Docker Engine answers")
    pytest.importorskip("torch")
    root = tmp_path_factory.mktemp("attack-results")
    _ops(
        "robustness",
        *("-m", "whisper_tiny_en", "-m", "pocketsphinx_en", "-d", "mini_en"),
        *("--utts", "2", "-g", GRID, "--normaliser", "none", "--runner", "docker"),
        results=root,
    )
    return root


def _record(root: Path) -> dict:
    (path,) = root.glob("robustness/mini_en/*/robustness.json")
    return json.loads(path.read_text())


def test_attack_rows_white_box_transfer_and_same_snr_noise(attacked: Path) -> None:
    rec = _record(attacked)
    assert rec["conditions"] == [GRID, "gaussian_noise:snr=30"]
    modes = {a["model"]: a["mode"] for a in rec["attacks"]}
    assert modes == {"whisper_tiny_en": "white-box", "pocketsphinx_en": "transfer"}
    rows = {(r["model"], r["condition"]): r for r in rec["rows"]}
    for a in rec["attacks"]:
        assert a["n_utts"] == 2 and a["target"] == "whisper_tiny_en" and a["snr"] == 30.0
        assert a["wer"] == rows[(a["model"], GRID)]["wer"]
        assert a["noise_wer"] == rows[(a["model"], "gaussian_noise:snr=30")]["wer"]
        assert a["ci_low"] <= a["attack_minus_noise"] <= a["ci_high"]
        assert rows[(a["model"], GRID)]["nwerd"] is None  # WERD only for attacks


def test_every_attacked_file_meets_its_snr_budget(attacked: Path) -> None:
    cells = {(c["model"], c["condition"]): c for c in _record(attacked)["cells"]}
    run = json.loads((Path(cells[("pocketsphinx_en", GRID)]["folder"]) / "run.json").read_text())
    derived = Path(run["dataset"]["folder"])
    meta = yaml.safe_load((derived / "dataset.yaml").read_text())
    assert meta["derived_from"]["depends"]  # the target's weights and code are in its identity
    parent = REPO_ROOT / "datasets" / "mini_en"
    rows = [ln.split("\t") for ln in (derived / "metadata.tsv").read_text().splitlines()[1:]]
    assert len(rows) == 2  # every utterance of the selection attacked
    for row in rows:
        x, _ = sf.read(parent / "audio" / Path(row[1]).name, dtype="float64")
        y, _ = sf.read(derived / row[1], dtype="float64")
        snr = 10 * np.log10(np.sum(x**2) / np.sum((y - x) ** 2))
        assert abs(snr - 30.0) <= 0.1, (row[0], snr)


def test_report_shows_attacks_and_plays_clean_and_attacked(
    attacked: Path, browser, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    _ops("report", "-o", str(site), "-q", "--no-ablation", results=attacked)
    (page_path,) = site.glob("robustness/mini_en/*.html")
    ctx, events = browser
    page = ctx.new_page()
    page.goto(page_path.as_uri())
    page.wait_for_load_state("load")
    table = page.locator("table[id$='rob-attacks']")
    assert table.locator("tbody tr").count() == 2
    assert page.locator(".flag.attack").count() == 2  # the attack condition, once per model
    players = page.locator("table.listen audio")
    assert players.count() == 4  # two utterances, clean and attacked
    for i in range(players.count()):
        players.nth(i).evaluate("a => { a.preload = 'auto'; a.load(); }")
        page.wait_for_function("a => a.readyState >= 1", arg=players.nth(i).element_handle())
    srcs = [players.nth(i).get_attribute("src") for i in range(4)]
    assert len(set(srcs)) == 4 and all(srcs)
    page.close()
    assert events.console_errors == [] and events.page_errors == [] and events.blocked == []
