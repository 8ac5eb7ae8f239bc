"""The docs a newcomer reads hold together (issue 39 item 8): the README links every guide,
every relative link and anchor in README.md and docs/*.md resolves, EXTENDING.md names only
paths that exist, and the headline number has one name (WER; `ter` in files) on the pages a
newcomer reads first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT

DOCS = sorted((REPO_ROOT / "docs").glob("*.md"))
PAGES = [REPO_ROOT / "README.md", *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _text(page: Path) -> str:
    """The page without its fenced code blocks (a `](x)` inside code is not a link)."""
    return FENCE.sub("", page.read_text(encoding="utf-8"))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped,
    spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", _text(page), re.M)}


def _relative_links(page: Path) -> list[str]:
    return [
        t for t in LINK.findall(_text(page)) if not re.match(r"[a-z][a-z0-9+.-]*:", t)
    ]  # http:, https:, mailto: are not checked here


def test_readme_links_every_guide() -> None:
    linked = {
        (REPO_ROOT / t.split("#")[0]).resolve() for t in _relative_links(REPO_ROOT / "README.md")
    }
    missing = [p.name for p in DOCS if p.resolve() not in linked]
    assert not missing, f"docs not linked from README.md: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_and_anchors_resolve(page: Path) -> None:
    broken = []
    for target in _relative_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not broken, f"{page.name}: {broken}"


def test_extending_names_only_existing_paths() -> None:
    text = (REPO_ROOT / "docs" / "EXTENDING.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:models|asrbench|scoring|tests|benchmarks)/[\w./]*)`", text))
    assert len(paths) > 20  # the page names where each thing goes
    missing = sorted(p for p in paths if not (REPO_ROOT / p).exists())
    assert not missing, f"EXTENDING.md names paths that do not exist: {missing}"


def test_the_error_rate_has_one_name_on_the_first_pages() -> None:
    glossary = (REPO_ROOT / "docs" / "GLOSSARY.md").read_text(encoding="utf-8")
    assert "token error rate" in glossary and "not* Translation Edit Rate" in glossary
    for name in ("README.md", "docs/QUICKSTART.md"):
        text = (REPO_ROOT / name).read_text(encoding="utf-8")
        assert not re.search(r"\bTER\b", text), f"{name} says TER; the platform's name is WER"


def test_benchmarks_reference_points_at_the_measurement_log() -> None:
    """Every section of the reference links its figures in MEASUREMENTS.md (the anchors are
    checked above), and the log keeps the dated runs."""
    ref = (REPO_ROOT / "docs" / "BENCHMARKS.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", ref, flags=re.M)[1:]
    assert sections
    for sec in sections:
        assert "MEASUREMENTS.md" in sec or ".md)" in sec, sec.splitlines()[0]
    log = (REPO_ROOT / "docs" / "MEASUREMENTS.md").read_text(encoding="utf-8")
    assert not re.search(r"\b2026-\d\d-\d\d\b", ref), "a dated run belongs in MEASUREMENTS.md"
    assert len(re.findall(r"\b2026-\d\d-\d\d\b", log)) > 30
