"""Entities, numbers and formatting on the report's cell page and the leaderboard's ranking by
entity class (asrbench/report/entities.py), from cells the real benchmark wrote.

The dataset is tests/benchmark/test_entity_cell.py's (the Earnings-21 excerpt with its
sidecars, dataset.yaml `nlp:`). Two canned stand-ins: `exact` writes the reference back as
written; `planted` does the same with three planted faults: "2020" read as "twenty
nineteen" (a number-value error inside a YEAR/DATE entity), "Monro" lower-cased (a capitalisation
error) and the first comma after "gentlemen" left out (one missed comma).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmark.conftest import make_canned_model
from tests.benchmark.test_entity_cell import CALL, FIX, _written, make_nlp_dataset
from tests.report.conftest import benchmark_cells, open_page

pytestmark = pytest.mark.slow


def _planted(text: str) -> str:
    assert text.count("Fiscal 2020.") == 1 and text.startswith("Good morning ladies and gentlemen,")
    text = text.replace("Fiscal 2020.", "Fiscal twenty nineteen.")
    return text.replace("gentlemen,", "gentlemen", 1).replace("the Monro Inc", "the monro Inc", 1)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:

    base = tmp_path_factory.mktemp("entity-report")
    ds = make_nlp_dataset(base / "data")
    text = _written(FIX / f"{CALL}.nlp")
    models = [
        make_canned_model(base / "models", "exact", {CALL: {"text": text}}),
        make_canned_model(base / "models", "planted", {CALL: {"text": _planted(text)}}),
    ]
    return benchmark_cells(base, [str(m) for m in models], str(ds))


def _summary(tree: Path, model: str) -> dict:
    return json.loads((tree / model / "e21_excerpt" / "summary.json").read_text())


def test_the_planted_faults_are_counted_apart(tree: Path) -> None:
    exact, planted = _summary(tree, "exact"), _summary(tree, "planted")
    n_e, n_p = exact["entities"]["numbers"], planted["entities"]["numbers"]
    assert n_p["value_errors"] == n_e["value_errors"] + 1
    f_e, f_p = exact["formatting"], planted["formatting"]
    assert f_p["case_errors"] == f_e["case_errors"] + 1
    assert f_p["punctuation"][","]["misses"] == f_e["punctuation"][","]["misses"] + 1
    abl = json.loads((tree / "exact" / "e21_excerpt" / "ablation.json").read_text())
    # the ablation re-scores TEXT, not the NLP readings: where the two differ, the note says so
    # (the written form is one of each entity's readings, so an exact hypothesis may agree)
    assert abl["matches_stored"] or "NLP references" in abl["note"]
    worst = planted["worst_entities"]["instances"]
    year = [x for x in worst if x["class"] == "YEAR"]
    assert [x["hyp"] for x in year] == ["twenty nineteen"]


@pytest.fixture(scope="module")
def site(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from asrbench.report import ReportOptions, build_site

    out = tmp_path_factory.mktemp("entity-site") / "site"
    built = build_site(ReportOptions(results=tree, out=out))
    assert built.problems == []
    return out


def test_cell_page_shows_classes_numbers_formatting_and_worst_entities(
    browser, site: Path, tree: Path
) -> None:
    from asrbench.report.site import Site

    ctx, events = browser
    summary = _summary(tree, "planted")
    page = open_page(ctx, site / Site.cell_page("planted", "e21_excerpt"))
    sec = page.locator("section.entities")
    classes = summary["entities"]["classes"]
    worst_first = sorted(classes, key=lambda k: (-(classes[k]["er"] or -1.0), k))
    rows = sec.locator("table.entity-classes tbody tr")
    assert [rows.nth(i).locator("th").inner_text() for i in range(rows.count())] == worst_first
    first = classes[worst_first[0]]
    assert f"{100 * first['er']:.2f}" in rows.nth(0).inner_text()
    nb = summary["entities"]["numbers"]
    assert sec.locator(".n-value-errors").inner_text() == str(nb["value_errors"])
    case = sec.locator("p.case").inner_text()
    assert f"Capitalisation errors: {summary['formatting']['case_errors']} of" in case
    worst = sec.locator("table.worst-entities tbody tr")
    assert worst.count() == len(summary["worst_entities"]["instances"])
    assert "twenty nineteen" in sec.locator("table.worst-entities").inner_text()
    player = worst.nth(0).locator("audio")
    assert player.get_attribute("src")  # the recording's audio, copied into the site
    duration = player.evaluate(
        "a => new Promise(r => { a.preload = 'metadata'; a.onloadedmetadata = () => "
        "r(a.duration); a.onerror = () => r(-1); a.load(); })"
    )
    assert duration == pytest.approx(9.655, abs=0.05)
    assert events.console_errors == [] and events.page_errors == [] and events.blocked == []


def test_leaderboard_ranks_by_an_entity_class(browser, site: Path, tree: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, site / "index.html")
    table = page.locator("table.entity-board")
    assert table.count() == 1
    rates = {m: _summary(tree, m)["entities"]["classes"] for m in ("exact", "planted")}
    year = table.locator('th.cls[data-class="YEAR"]')

    def order() -> list[str]:
        rows = table.locator("tbody tr th")
        return [rows.nth(i).inner_text() for i in range(rows.count())]

    year.click()
    up = sorted(rates, key=lambda m: (rates[m]["YEAR"]["er"], m))
    assert rates["planted"]["YEAR"]["er"] != rates["exact"]["YEAR"]["er"]
    assert order() == up
    year.click()
    assert order() == up[::-1]
    assert events.console_errors == [] and events.page_errors == [] and events.blocked == []
