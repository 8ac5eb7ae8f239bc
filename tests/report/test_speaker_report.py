"""Speaker timelines on a diarized cell's page (asrbench/results/speaker_view.py writes
speakers.json when the benchmark writes the cell, asrbench/report/speakers.py draws it).

Canned stand-ins run through the real benchmark (local runner, real scorer) on
mini_meeting_en: an ASR that answers the reference's turns without speakers and a diarizer that
answers them with speakers renamed (`d0`, `d1` by first appearance), except that in
`meet_fsdd_readback` its fourth turn goes to a third speaker `intruder`, whom DER's mapping
leaves unpaired. The diarizer alone gives exactly those turns; combined with the ASR
(`ASR+DIARIZER`) the turns are the ASR's words given the diarizer's speakers; the ASR alone
names no speakers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.report.speakers import LABEL_W, PLOT_W, WIDTH
from asrbench.resolve import resolve_dataset
from tests.benchmark.conftest import make_canned_model
from tests.benchmark.test_speakers import _asr_answers
from tests.report.conftest import benchmark_cells, open_page

pytestmark = pytest.mark.slow

DATASET = "mini_meeting_en"
PLANTED = "meet_fsdd_readback"
INTRUDER_TURN = 3  # the diarizer gives this turn of PLANTED to a speaker of its own


def _turns() -> dict[str, list]:
    out: dict[str, list] = {}
    for seg in sorted(resolve_dataset(DATASET).segments, key=lambda s: s.start_time):
        out.setdefault(seg.session_id, []).append(seg)
    return out


def _diarizer_answers() -> dict[str, dict]:
    answers = {}
    for sid, turns in _turns().items():
        names = {spk: f"d{n}" for n, spk in enumerate(dict.fromkeys(t.speaker for t in turns))}
        segments = [
            {"start": t.start_time, "end": t.end_time, "text": ""}
            | {"speaker": "intruder" if sid == PLANTED and k == INTRUDER_TURN else names[t.speaker]}
            for k, t in enumerate(turns)
        ]
        answers[sid] = {"text": "", "segments": segments}
    return answers


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results/ with canned_diar, canned_asr+canned_diar and canned_asr on mini_meeting_en."""

    base = tmp_path_factory.mktemp("speaker-report")
    asr = make_canned_model(base / "models", "canned_asr", _asr_answers())
    diar = make_canned_model(base / "models", "canned_diar", _diarizer_answers())
    return benchmark_cells(base, [str(diar), f"{asr}+{diar}", str(asr)], DATASET)


COMBINED = "canned_asr+canned_diar"
DIAR = "canned_diar"


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _recordings(tree: Path, model: str) -> dict[str, dict]:
    """speakers.json's recordings by ID, checked to add up to summary.json's session metrics."""
    cell = tree / model / DATASET
    rec = _json(cell / "speakers.json")
    sessions = _json(cell / "summary.json")["session_metrics"]
    assert rec["format"] == "asrbench-speakers-v1" and rec["note"] is None
    recs = {r["id"]: r for r in rec["recordings"]}
    assert sorted(recs) == sorted(_turns())
    for part in ("missed", "false_alarm", "confusion", "total"):
        assert sum(r[part] for r in recs.values()) == pytest.approx(sessions["der"][part])
    cp = sessions["cpwer"]["metrics"]
    assert sum(r["cpwer"]["errors"] for r in recs.values()) == cp["errors"]
    assert sum(r["cpwer"]["n_ref"] for r in recs.values()) == cp["n_ref"]
    return recs


def test_speakers_json_adds_up_to_the_cells_session_metrics(tree: Path) -> None:
    combined = _recordings(tree, COMBINED)
    assert 0 < sum(r["cpwer"]["errors"] for r in combined.values())  # estimated word times
    recs = _recordings(tree, DIAR)
    assert all(r["cpwer"]["rate"] == 1.0 for r in recs.values())  # no words: all deleted
    # the exact session: the renamed speakers mapped one to one, no DER
    exact = recs["meet_lj_austen"]
    assert exact["der"] == 0.0 and sorted(exact["mapping"]) == [["LJ", "d0"], ["austen", "d1"]]
    planted = recs[PLANTED]
    turn = _turns()[PLANTED][INTRUDER_TURN]
    assert planted["hyp_speakers"] == 3 and "intruder" not in {h for _, h in planted["mapping"]}
    assert planted["confusion"] == pytest.approx(turn.end_time - turn.start_time)
    assert ["intruder", turn.start_time, turn.end_time] in planted["hyp"]
    # the ASR alone names no speakers: nothing to draw, no record
    assert not (tree / "canned_asr" / DATASET / "speakers.json").exists()


@pytest.fixture(scope="module")
def site(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from asrbench.report import ReportOptions, build_site

    out = tmp_path_factory.mktemp("speaker-site") / "site"
    built = build_site(ReportOptions(results=tree, out=out, audio="none"))
    assert built.problems == []
    return out


def test_the_page_of_a_cell_without_speakers_has_no_speaker_section(site: Path) -> None:
    from asrbench.report.site import Site

    page = (site / Site.cell_page("canned_asr", DATASET)).read_text(encoding="utf-8")
    assert "speaker-timeline" not in page and "Session metrics" in page


def test_a_cell_stored_before_speakers_json_says_how_to_backfill_it(
    tree: Path, tmp_path: Path, cli
) -> None:
    from asrbench.report.site import Site
    from tests.report.conftest import copy_tree

    root = copy_tree(tree, tmp_path / "results")
    cell = root / COMBINED / DATASET
    stored = (cell / "speakers.json").read_bytes()
    (cell / "speakers.json").unlink()
    code, _, err = cli("report", "--results", root, "-o", tmp_path / "a", "--audio", "none", "-q")
    assert code == 0, err
    page = (tmp_path / "a" / Site.cell_page(COMBINED, DATASET)).read_text(encoding="utf-8")
    assert "speakers.json: missing" in page and "ops/report --backfill" in page
    args = ["report", "--results", root, "-o", tmp_path / "b", "--audio", "none", "--backfill"]
    code, out, err = cli(*args)
    assert code == 0, err
    assert (cell / "speakers.json").read_bytes() == stored  # the benchmark's bytes


def test_timelines_colour_mapped_speakers_and_place_the_turns(
    browser, site: Path, tree: Path
) -> None:
    from asrbench.report.site import Site

    ctx, events = browser
    page = open_page(ctx, site / Site.cell_page(DIAR, DATASET))
    fig = page.locator(f'figure.speaker-fig[data-id="{PLANTED}"]')
    caption = fig.locator("figcaption").inner_text()
    assert "speakers 2 in the reference, 3 in the hypothesis" in caption
    svg = fig.locator("svg.speaker-timeline")
    assert "DER" in svg.get_attribute("aria-label")
    labels = svg.locator("text.spk-label").all_text_contents()
    assert labels == ["ref george", "ref nicolas", "hyp d0 = george", "hyp d1 = nicolas",
                      "hyp intruder (unmapped)"]  # fmt: skip

    def fills(side: str, speaker: str) -> set[str]:
        rects = svg.locator(f'rect.turn.{side}[data-speaker="{speaker}"]')
        return {rects.nth(i).get_attribute("fill") for i in range(rects.count())}

    assert fills("ref", "george") == fills("hyp", "d0") != fills("ref", "nicolas")
    assert fills("hyp", "d1") == fills("ref", "nicolas")
    assert fills("hyp", "intruder") == {"#999999"}
    # the intruder's one turn sits where the reference turn it took is
    turn = _turns()[PLANTED][INTRUDER_TURN]
    stored = _json(tree / DIAR / DATASET / "speakers.json")["recordings"]
    duration = next(r["duration"] for r in stored if r["id"] == PLANTED)
    box, bar = svg.bounding_box(), svg.locator('rect[data-speaker="intruder"]').bounding_box()
    scale = box["width"] / WIDTH  # the SVG's px to the page's
    plot_left, plot_w = box["x"] + LABEL_W * scale, PLOT_W * scale
    assert bar["x"] - plot_left == pytest.approx(plot_w * turn.start_time / duration, abs=2)
    assert bar["width"] == pytest.approx(
        plot_w * (turn.end_time - turn.start_time) / duration, abs=2
    )
    fig.locator("details summary").click()  # the text alternative opens without a script
    table = fig.locator("table.speaker-table")
    assert table.locator("tbody tr").count() == 5  # the text alternative: one row per speaker
    row = table.locator("tbody tr").filter(has_text="intruder").inner_text()
    assert "unmapped" in row and f"{turn.start_time:.1f}-{turn.end_time:.1f}" in row
    assert events.console_errors == [] and events.page_errors == [] and events.blocked == []
