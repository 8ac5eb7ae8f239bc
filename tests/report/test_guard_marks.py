"""The latency guard in the leaderboard and the report (issue 39, item 6), and the streaming
page's streaming-vs-batch explanation.

One stand-in recogniser (tests/report/conftest.py's `planted`, which writes the reference back
with one planted substitution) gets a streaming program that falls behind by construction:
after each chunk it sleeps three times the feed's interval between chunks
(tests/streaming/test_latency_guard.py), so the guard's decoder rule fires whatever the
machine's load. The real CLI runs its batch cell (ops/benchmark), its streaming cell
(ops/stream), ops/leaderboard and ops/report; the pages are loaded in the real headless
Chromium (network blocked) and screenshotted. Structured things are asserted (elements
present, flags, no JS errors).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.report.conftest import make_model
from tests.streaming.fake_program import HEAD
from tests.streaming.test_latency_guard import LOOP, SLOW, SPEED

MODEL = "guarded"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results root with the stand-in's batch cell (3 utterances) and slow streaming cell."""
    from asrbench.cli import main

    base = tmp_path_factory.mktemp("guard-results")
    folder = make_model(base / "models", MODEL, "planted", streaming="stream.py")
    (folder / "stream.py").write_text(HEAD + LOOP.format(delay=SLOW))
    root = base / "results"
    common = ["-m", str(folder), "-d", "mini_en", "--runner", "local", "--results", str(root)]
    assert main(["benchmark", *common, "--max-utts", "3"]) == 0
    assert main(["stream", *common, "--speed", str(SPEED), "--max-utts", "1"]) == 0
    assert main(["leaderboard", "--results", str(root), "--reps", "0"]) == 0
    return root


@pytest.fixture(scope="module")
def site(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from asrbench.cli import main

    out = tmp_path_factory.mktemp("guard-site") / "site"
    args = ["report", "-o", str(out), "--results", str(tree), "-q", "--no-ablation"]
    assert main([*args, "--reps", "0"]) == 0
    return out


def test_the_leaderboard_marks_the_latency_and_says_why(tree: Path) -> None:
    board = json.loads((tree / "leaderboard.json").read_text())
    assert board["format"] == "asrbench-leaderboard-v6"
    lat = board["latency"][MODEL]["mini_en"]
    assert lat["attributable"] is False
    assert any(r.startswith("decoder_behind: ") for r in lat["guard_reasons"])
    md = (tree / "leaderboard.md").read_text()
    table = md.split("### Streaming latency", 1)[1].split("Notes:", 1)[0]
    assert " !" in table  # the cell is marked
    notes = md.split("Notes:", 1)[1]
    assert f"`!` {MODEL} on mini_en: latencies not attributable to the model" in notes
    assert "decoder_behind" in notes


def test_the_streaming_page_shows_the_banner_and_the_batch_comparison(
    browser, site: Path, tmp_path: Path
) -> None:
    ctx, events = browser
    page = ctx.new_page()
    page.goto((site / "streaming.html").as_uri())
    page.wait_for_load_state("load")
    banners = page.locator("p.guard-banner")
    assert banners.count() == 2  # the page's top and the cell's timelines
    assert banners.first.is_visible()
    assert page.locator('.guard-reason[data-rule="decoder_behind"]').count() == 1
    row = page.locator("table.data tr.guard-fired")
    assert row.count() == 1 and "not the model's" in row.locator("td.guard").inner_text()
    lead = page.locator("p.lead").inner_text()
    assert "does not prove a latency is the model's" in lead
    assert "known to be the model's" not in page.content()
    assert page.locator("#streaming-vs-batch").count() == 1
    pair = page.locator("tr.stream-vs-batch")
    assert pair.count() == 1
    cells = pair.locator("td").all_inner_texts()
    assert (
        cells[0] == MODEL and cells[4] == "1" and cells[6] == "3*"
    )  # utterances: stream, batch (a sample)
    assert all(re.match(r"\d+\.\d", c) for c in (cells[3], cells[5])), cells
    shot = tmp_path / "streaming.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    page.goto((site / "index.html").as_uri())
    page.wait_for_load_state("load")
    mark = page.locator("td.latency .guard-mark")
    assert mark.count() == 1 and "decoder_behind" in mark.inner_text()
    page.close()
    assert events.console_errors == [] and events.page_errors == [] and events.blocked == []
