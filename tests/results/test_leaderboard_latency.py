"""Latency beside WER in `ops/leaderboard` and the report's leaderboard page (issue 27, item 5).

Real stored cells in a fresh results root: PocketSphinx's incremental decoder streamed two
mini_en utterances through the real feed (`ops/stream`, local runner) twice, in real time with
the default 100-ms chunks and at 4x with 200-ms chunks, plus batch cells (`ops/benchmark`) of
PocketSphinx and of a stand-in model with no streaming cell. The leaderboard must show the
real-time cell's stored latencies (stream.json's pooled figures, as stored), "—" for the
stand-in, the same in leaderboard.json and .csv and on the report's leaderboard page.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from asrbench.cli import main
from asrbench.results.leaderboard import NO_LATENCY, NOT_MODELS
from tests.benchmark.conftest import make_fake_model

pytest.importorskip("pocketsphinx")

# two utterances (5.1 s of audio), the selection of the other PocketSphinx stream tests
SAMPLE = ("--max-utts", "2", "--seed", "0")
STREAM = ("stream", "-m", "pocketsphinx_en", "-d", "mini_en", "--runner", "local", *SAMPLE)


def _run(*args: object) -> None:
    assert main([str(a) for a in args]) == 0, args


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("results")
    stand_in = make_fake_model(tmp_path_factory.mktemp("models"), "no_stream_en")
    _run(*STREAM, "--results", results)
    _run(*STREAM, "--speed", "4", "--chunk-ms", "200", "--results", results)
    for model in ("pocketsphinx_en", stand_in):
        _run("benchmark", "-m", model, "-d", "mini_en", "--runner", "local", *SAMPLE,
             "--no-progress", "--results", results)  # fmt: skip
    return results


def _stored(root: Path, feed: str) -> tuple[Path, dict]:
    (cell,) = (root / "streaming" / "pocketsphinx_en").glob(f"mini_en~{feed}-sample-2-*")
    return cell, json.loads((cell / "stream.json").read_text())


def _text(fig: dict) -> str:
    """A stored pooled figure as the leaderboard writes it: mean [95 % CI], seconds."""
    ci = fig["ci"]
    return f"{fig['mean']:.3f} [{ci['low']:.3f}, {ci['high']:.3f}]"


def _leaderboard(root: Path, out: Path) -> tuple[dict, str, list[dict]]:
    _run("leaderboard", "--results", root, "--out", out)
    board = json.loads((out / "leaderboard.json").read_text())
    rows = list(csv.DictReader((out / "leaderboard.csv").read_text().splitlines()))
    return board, (out / "leaderboard.md").read_text(), rows


def _md_row(md: str, model: str) -> str:
    return next(line for line in md.splitlines() if line.startswith(f"| {model} |"))


def _latency_table(md: str) -> str:
    """The Markdown's latency table: a table of its own after the accuracy table."""
    part = md[md.index("### Streaming latency") :]
    return part[: part.index("\n\n", part.index("| model |"))]


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_the_real_time_stream_cell_is_shown_beside_wer(root: Path, tmp_path: Path) -> None:
    cell, stored = _stored(root, "100ms-x1")
    board, md, rows = _leaderboard(root, tmp_path)
    assert board["format"] == "asrbench-leaderboard-v6" and board["latency_rule"]
    assert sorted(board["models"]) == ["no_stream_en", "pocketsphinx_en"]
    lat = board["latency"]["pocketsphinx_en"]["mini_en"]
    pooled = stored["pooled"]
    assert lat["eos_final_s"] == pooled["eos_final_s"] and lat["eos_final_s"]["n"] == 2
    assert lat["first_partial_s"] == pooled["first_partial_s"]
    assert (lat["speed"], lat["chunk_ms"], lat["others"]) == (1.0, 100, 1)  # the 4x one counted
    assert lat["path"] == str(cell) and lat["result_key"] == stored["result_key"]
    assert "no_stream_en" not in board["latency"]
    eos, first = _text(pooled["eos_final_s"]), _text(pooled["first_partial_s"])
    lat_md = _latency_table(md)
    head = _md_row(lat_md, "model")
    assert "mini_en end of speech -> final s" in head and "mini_en first partial s" in head
    assert "end of speech" not in _md_row(md, "model")  # not in the accuracy table
    ps = _md_row(lat_md, "pocketsphinx_en")
    # a sample, one other stream cell; `!` where the latency guard fired (a loaded machine)
    mark = _mark(stored)
    assert f"| {eos}* +1{mark} | {first}* +1{mark} |" in ps
    assert _cells(_md_row(lat_md, "no_stream_en"))[1:3] == [NO_LATENCY, NO_LATENCY]
    by_model = {r["model"]: r for r in rows}
    assert (
        by_model["pocketsphinx_en"]["mini_en eos_final_s"] == f"{pooled['eos_final_s']['mean']:.3f}"
    )
    assert by_model["no_stream_en"]["mini_en first_partial_s"] == ""


def test_without_a_real_time_cell_the_other_feed_is_shown_marked(
    root: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "results"
    shutil.copytree(root, copy)
    real_time, _ = _stored(copy, "100ms-x1")
    shutil.rmtree(real_time)
    _, stored = _stored(copy, "200ms-x4")
    board, md, _ = _leaderboard(copy, tmp_path / "out")
    lat = board["latency"]["pocketsphinx_en"]["mini_en"]
    assert (lat["speed"], lat["chunk_ms"], lat["others"]) == (4.0, 200, 0)
    assert lat["eos_final_s"] == stored["pooled"]["eos_final_s"]
    eos = _text(stored["pooled"]["eos_final_s"])
    assert f"| {eos}* (x4, 200 ms){_mark(stored)} |" in _md_row(
        _latency_table(md), "pocketsphinx_en"
    )


def _mark(stored: dict) -> str:
    """The latency guard's mark on a cell's latency text (streaming/guard.py)."""
    return f" {NOT_MODELS}" if stored["latency_guard"]["attributable"] is False else ""


def test_the_report_leaderboard_has_the_latency_column(root: Path, tmp_path: Path) -> None:
    from asrbench.report.build import ReportOptions, build_site

    _, stored = _stored(root, "100ms-x1")
    out = build_site(
        ReportOptions(results=root, out=tmp_path / "site", audio="none", ablation=False, reps=50)
    ).out
    page = (out / "index.html").read_text(encoding="utf-8")
    table = page[page.index('<table class="sortable matrix" id="leaderboard">') :]
    table = table[: table.index("</table>")]
    assert 'data-latency="mini_en"' in table
    row = re.search(r'<tr data-model="pocketsphinx_en">(.*?)</tr>', table, re.S)
    assert row and _text(stored["pooled"]["eos_final_s"]) in row.group(1)
    assert "first partial " + _text(stored["pooled"]["first_partial_s"]) in row.group(1)
    stand_in = re.search(r'<tr data-model="no_stream_en">(.*?)</tr>', table, re.S)
    assert stand_in and 'class="latency none"' in stand_in.group(1)
    assert 'id="latency-note"' in page and 'href="streaming.html"' in page
