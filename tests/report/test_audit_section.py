"""The report's reference-audit section (issue 39, item 2), in the real headless Chromium.

The audited results of tests/results/test_audit.py (real local-runner cells, one wrong
reference) go through `ops/report`; the dataset page links to its audit section, which lists the
suspect with its evidence; the page is screenshotted and loads with no script error.
"""

from __future__ import annotations

from pathlib import Path

from tests.results.test_audit import BAD, WRONG, _bench, setup  # noqa: F401


def test_audit_section_renders_with_its_evidence(cli, setup, browser, tmp_path: Path) -> None:  # noqa: F811
    _bench(cli, setup, "tiny_a", "other_b")
    assert cli("audit", "-d", "tiny_audit", "--results", setup["results"])[0] == 0
    out = tmp_path / "site"
    code, _, err = cli("report", "--results", setup["results"], "-o", out, "-q", "--no-ablation")
    assert code == 0, err
    ctx, events = browser
    page = ctx.new_page()
    page.goto((out / "dataset" / "tiny_audit.html").as_uri())
    page.wait_for_load_state("load")
    link = page.locator('a[href="#audit"]')
    assert link.text_content() == "1 suspect reference(s)"
    section = page.locator("section#audit")
    rows = section.locator("table.audit-suspects tbody tr")
    assert rows.count() == 1
    assert rows.first.get_attribute("data-utt") == BAD
    assert WRONG in rows.first.text_content()
    agreeing = rows.first.locator("td ul li")
    assert agreeing.count() == 2  # other_b and tiny_a heard the same words
    assert "without the suspects" in section.text_content()
    shot = tmp_path / "audit.png"
    section.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 2000
    box = section.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    page.close()
    assert events.console_errors == [] and events.page_errors == [] and events.blocked == []
