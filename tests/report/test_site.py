"""The report as a reader sees it: the site loaded in a real headless Chromium, network blocked.

Every page visited must log no console error and no page error and request nothing outside the
site (`file:`/`data:`/`blob:`); the browser fixture aborts any other request and records it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.report.conftest import PLANTED_ID, open_page

pytestmark = pytest.mark.slow


def _clean(events) -> None:
    assert events.console_errors == []
    assert events.page_errors == []
    assert events.blocked == []


def _ter_text(summary: dict) -> str:
    m = summary["metrics"]
    ci = m["ci"]["ter"]
    return f"{100 * m['ter']:.2f} [{100 * ci['low']:.2f}, {100 * ci['high']:.2f}]"


def test_leaderboard_one_row_per_model_with_ter_and_ci(
    browser, site: Path, summaries: dict
) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "index.html").as_uri())
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == 2
    for model, summary in summaries.items():
        row = page.locator(f'#leaderboard tbody tr[data-model="{model}"]')
        cell = row.locator("td.ok").first
        assert re.sub(r"\s+", " ", cell.locator("a").inner_text()).strip() == _ter_text(summary)
        assert f"mTER {100 * summary['metrics']['mter']:.2f}" in cell.inner_text()
        assert "rank " in cell.inner_text()
    # the robustness conditions are derived datasets: listed apart, not in the main matrix
    heads = page.locator("#leaderboard thead th").all_inner_texts()
    assert any(h.startswith("mini_en") for h in heads)
    assert not any("gaussian_noise" in h for h in heads)
    page.close()
    _clean(events)


def test_sorting_a_column_reorders_the_rows(browser, site: Path, summaries: dict) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "index.html").as_uri())
    by_ter = sorted(summaries, key=lambda m: summaries[m]["metrics"]["ter"])
    order = lambda: page.locator("#leaderboard tbody tr").evaluate_all(  # noqa: E731
        "rows => rows.map(r => r.dataset.model)"
    )
    head = page.locator('#leaderboard thead th[data-dataset="mini_en"]')
    head.click()
    assert order() == by_ter
    assert head.get_attribute("aria-sort") == "ascending"
    head.click()
    assert order() == by_ter[::-1]
    page.locator("#leaderboard thead th").first.click()  # by model name
    assert order() == sorted(summaries)
    # filtering hides rows
    page.fill("#leaderboard-filter", "slop")
    visible = page.locator("#leaderboard tbody tr:visible")
    assert visible.count() == 1 and visible.first.get_attribute("data-model") == "sloppy"
    page.close()
    _clean(events)


def test_cell_links_to_the_model_by_dataset_page(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "index.html").as_uri())
    page.locator('#leaderboard tbody tr[data-model="planted"] td.ok a').first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/cell/planted/mini_en.html")
    assert page.locator("h1").inner_text() == "planted on mini_en"
    page.close()
    _clean(events)


def test_alignment_shows_the_planted_substitution_in_its_colour(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "cell" / "planted" / "mini_en.html").as_uri())
    # worst first: the only utterance with an error is the planted one
    first = page.locator(".utt").first
    assert first.get_attribute("data-id") == PLANTED_ID
    sub = first.locator(".align .col.op-S")
    assert sub.count() == 1
    assert sub.locator(".r").inner_text() == "modern"
    assert sub.locator(".h").inner_text() == "modem"
    assert sub.locator(".e").inner_text() == "S"  # spelled out, not colour alone
    colour = sub.evaluate("e => getComputedStyle(e).backgroundColor")
    assert colour == "rgb(251, 227, 207)"  # --sub in report.css
    assert first.locator(".align .col.op-C").count() == 3
    # the frequent-substitution table has the pair
    assert page.locator("table.subs tbody tr").first.inner_text().split() == [
        "modern",
        "modem",
        "1",
    ]
    # search narrows the list
    page.fill("#utt-search", "comparatively")
    assert page.locator(".utt").count() == 1
    page.close()
    _clean(events)


def test_audio_element_loads(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "cell" / "planted" / "mini_en.html").as_uri())
    audio = page.locator(".utt audio").first
    src = audio.get_attribute("src")
    assert src.startswith("../../audio/") and src.endswith(f"{PLANTED_ID}.wav")
    duration = audio.evaluate(
        """a => new Promise((ok, bad) => {
             if (a.readyState >= 1) return ok(a.duration);
             a.addEventListener('loadedmetadata', () => ok(a.duration));
             a.addEventListener('error', () => bad(new Error('audio error ' + a.error.code)));
             a.load();
           })"""
    )
    assert duration == pytest.approx(1.9, abs=0.05)  # LJ001-0002 is 1.900 s
    page.close()
    _clean(events)


def test_pagination_of_long_utterance_lists(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "cell" / "sloppy" / "mini_en.html").as_uri())
    assert page.locator(".utt").count() == 25
    assert page.locator(".utt-count").inner_text() == "35 of 35 utterances"
    page.click(".pager .next")
    assert page.locator(".utt").count() == 10
    assert page.locator(".pageinfo").inner_text() == "page 2 of 2"
    page.close()
    _clean(events)


def _traces(page, name: str, layer: str = "scatterlayer") -> int:
    chart = page.locator(f'div.chart[data-chart="{name}"]')
    chart.locator("svg.main-svg").first.wait_for()
    return chart.locator(f".{layer} g.trace").count()


def test_charts_render_with_one_trace_per_model(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "index.html").as_uri())
    assert _traces(page, "ter-by-dataset") == 2
    assert page.locator('div.chart[data-chart="ter-by-dataset"] .legend .traces').count() == 2
    assert page.locator('div.chart[data-chart="ter-by-dataset"] path.yerror').count() >= 2
    page.goto((site / "dataset" / "mini_en.html").as_uri())
    assert _traces(page, "ranked") == 2
    page.goto((site / "cell" / "planted" / "mini_en.html").as_uri())
    assert _traces(page, "breakdown", "barlayer") == 1
    page.goto((site / "ablation.html").as_uri())
    assert _traces(page, "ablation-mini_en") == 2
    page.close()
    _clean(events)


def test_scorer_ablation_page(browser, site: Path, summaries: dict) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "ablation.html").as_uri())
    heads = page.locator("table.ablation thead tr").first.locator("th").all_inner_texts()
    stages = heads[1:-2]
    ladder = ["raw", "+CASE", "+PUNC", "+ITJ", "+UK-US", "+NSW", "+DAE"]
    assert [h for h in stages if h in ladder] == ladder and stages[-1] == "+DAE"
    row = page.locator("table.ablation tbody tr", has_text="sloppy")
    cells = row.locator("td").all_inner_texts()  # TER, mTER per stage
    raw, final = float(cells[0]), float(cells[2 * (len(stages) - 1)])
    assert raw > final  # case and punctuation were most of sloppy's raw WER
    assert final == pytest.approx(100 * summaries["sloppy"]["metrics"]["ter"], abs=0.005)
    assert "reproduced" in row.inner_text()
    page.close()
    _clean(events)


def test_robustness_page(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "robustness.html").as_uri())
    page.locator("h2 a").first.click()
    page.wait_for_load_state("load")
    assert _traces(page, "curve-gaussian_noise") == 2
    rows = page.locator("table[id$=rob-rows] tbody tr")
    assert rows.count() == 4  # 2 models x 2 conditions
    text = rows.first.inner_text()
    assert "gaussian_noise" in text and re.search(r"\d\.\d{3}", text)  # STOI stored
    summary = page.locator("table[id$=rob-summary] tbody tr")
    assert summary.count() == 2
    page.close()
    _clean(events)


def test_fairness_page(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, (site / "fairness.html").as_uri())
    assert _traces(page, "fairness-0") == 2
    assert page.locator("section.fair table caption", has_text="TER per group").count() == 2
    page.close()
    _clean(events)


def test_single_file_site(browser, single_site: Path, summaries: dict) -> None:
    ctx, events = browser
    page = open_page(ctx, single_site.as_uri())
    assert page.locator("#leaderboard tbody tr").count() == 2
    page.locator('#leaderboard tbody tr[data-model="planted"] td.ok a').first.click()
    cell = page.locator('section.page[data-page="cell/planted/mini_en.html"]')
    cell.wait_for(state="visible")
    assert cell.locator(".utt .col.op-S .h").first.inner_text() == "modem"
    audio = cell.locator(".utt audio").first
    assert audio.get_attribute("src").startswith("data:audio/wav;base64,")
    duration = audio.evaluate(
        "a => new Promise(ok => a.readyState >= 1 ? ok(a.duration) : "
        "a.addEventListener('loadedmetadata', () => ok(a.duration)))"
    )
    assert duration > 0
    assert _traces(cell, "breakdown", "barlayer") == 1
    page.close()
    _clean(events)


def test_no_page_references_the_network(site: Path) -> None:
    """Static check beside the browser's: no src/href to http(s) anywhere in the site."""
    for p in site.rglob("*.html"):
        text = p.read_text()
        assert not re.search(r'(src|href)="(https?:)?//', text), p
