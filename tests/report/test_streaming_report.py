"""The streaming page (issue 27, item 5): latency beside WER, the Pareto view, event timelines.

PocketSphinx's real incremental decoder streams two mini_en utterances through the real feed
(`ops/stream`, local runner) twice, at 1x and at 2x real time, into a fresh results root; the
report is built from it and the page is loaded in the real headless Chromium (network blocked).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from asrbench.report.collect import collect
from asrbench.report.streaming import pareto_front, row
from asrbench.results.summary import read_summary
from asrbench.settings import REPO_ROOT

pytestmark = pytest.mark.slow


def _ops(*args: str, results: Path) -> None:
    env = {**os.environ, "ASRBENCH_RESULTS": str(results)}
    done = subprocess.run(
        [str(REPO_ROOT / "ops" / args[0]), *args[1:]],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("pocketsphinx")
    root = tmp_path_factory.mktemp("stream-results")
    for speed in ("1", "2"):
        _ops(
            "stream",
            "-m",
            "pocketsphinx_en",
            "-d",
            "mini_en",
            "--max-utts",
            "2",
            "--speed",
            speed,
            "--runner",
            "local",
            results=root,
        )
    return root


@pytest.fixture(scope="module")
def site(streamed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stream-site") / "site"
    _ops("report", "-o", str(out), "-q", "--no-ablation", results=streamed)
    return out


def test_rows_carry_the_stored_figures(streamed: Path) -> None:
    found = collect(streamed)
    assert len(found.streaming) == 2
    for path, rec in found.streaming:
        r = row(path, rec, read_summary(path.parent / "summary.json"))
        summary = json.loads((path.parent / "summary.json").read_text())
        assert r["wer"] == summary["metrics"]["ter"]
        assert r["eos_final_s"]["mean"] == rec.pooled["eos_final_s"]["mean"]
        assert r["eos_final_s"]["low"] <= r["eos_final_s"]["mean"] <= r["eos_final_s"]["high"]


def test_pareto_front_is_the_undominated_set(streamed: Path) -> None:
    rows = [
        row(p, rec, read_summary(p.parent / "summary.json"))
        for p, rec in collect(streamed).streaming
    ]
    extra = dict(rows[0], wer=rows[0]["wer"] + 0.5)  # worse WER, same latency: dominated
    extra["eos_final_s"] = dict(rows[0]["eos_final_s"], mean=rows[0]["eos_final_s"]["mean"] + 1)
    rows.append(extra)
    front = pareto_front(rows)
    assert len(rows) - 1 not in front and front
    for i in front:  # nothing beats a front point on both
        assert not any(
            r["wer"] < rows[i]["wer"] and r["eos_final_s"]["mean"] < rows[i]["eos_final_s"]["mean"]
            for r in rows
        )


def test_page_in_chromium(browser, site: Path, streamed: Path) -> None:
    ctx, events = browser
    page = ctx.new_page()
    page.goto((site / "streaming.html").as_uri())
    page.wait_for_load_state("load")
    assert page.locator("nav >> text=Streaming").count() >= 1
    table = page.locator("table.data").first
    assert table.locator("tbody tr").count() == 2
    pareto = page.locator('div.chart[data-chart="pareto"]')
    pareto.locator("svg.main-svg").first.wait_for()
    assert pareto.locator(".scatterlayer g.trace").count() >= 2
    charts = page.locator('div.chart[data-chart^="timeline-"]')
    assert charts.count() == 4  # two utterances in each of the two cells
    data = json.loads(page.locator("script.page-data").first.text_content())
    finals_drawn = sum(
        len(t["x"])
        for k, f in data["charts"].items()
        if k.startswith("timeline-")
        for t in f["data"]
        if t["name"] == "final"
    )
    finals_stored = sum(
        sum(1 for e in json.loads(line)["events"] if e["type"] == "final")
        for p in streamed.glob("streaming/*/*/events.jsonl")
        for line in p.read_text().splitlines()
    )
    assert finals_drawn == finals_stored > 0
    page.close()
    assert events.console_errors == [] and events.page_errors == [] and events.blocked == []
