"""Long-form cells and non-speech figures in `ops/leaderboard` and the report (issue 29, item 5).

A stand-in recogniser runs through the real benchmark (local runner, real scorer and writers) on
the embedded long-form set `mini_long_en` and on `nonspeech_clips`. It writes each session's
reference back with two planted faults in `lj_reading`: reference segments 8 and 9 (58.69 to
71.14 s) left out, a dropped stretch; and "thank you thank you thank you" after
segment 3, a loop. `fsdd_jackson_numbers` is written back exactly. On non-speech it writes
"thank you" on the three music clips and nothing on the rest. The report is then loaded in the
real headless Chromium; the leaderboard is built from the same tree.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from asrbench.scorers import get_scorer
from asrbench.settings import REPO_ROOT
from scoring.meeting import read_segments
from tests.conftest import own_cache
from tests.factories import make_model
from tests.report.conftest import STAND_IN_ARCHITECTURE, open_page

pytestmark = pytest.mark.slow

LONG = REPO_ROOT / "datasets" / "mini_long_en"
NONSPEECH = REPO_ROOT / "datasets" / "nonspeech_clips"
DROPPED = (8, 9)  # lj_reading's segments the stand-in leaves out
LOOP_AFTER = 3  # ... and after which it loops
LOOP = "thank you thank you thank you"

PROGRAM = textwrap.dedent(r"""
    import sys
    from pathlib import Path

    wav_list, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "hyp.tsv", "a") as hyp, open(out / "timing.tsv", "a") as timing:
        for line in Path(wav_list).read_text().splitlines():
            uid = line.partition("\t")[0]
            hyp.write(f"{uid}\t{TEXTS.get(uid, '')}\n")
            timing.write(f"{uid}\t0.0100\t1.000\n")
""")


def _segments() -> dict[str, list]:
    out: dict[str, list] = {}
    for s in read_segments(LONG / "segments.seglst.json"):
        out.setdefault(s.session_id, []).append(s)
    return {k: sorted(v, key=lambda s: s.start_time) for k, v in out.items()}


def _texts() -> dict[str, str]:
    texts = {}
    for sid, segs in _segments().items():
        words = []
        for k, s in enumerate(segs):
            if sid == "lj_reading" and k in DROPPED:
                continue
            words.append(s.words)
            if sid == "lj_reading" and k == LOOP_AFTER:
                words.append(LOOP)
        texts[sid] = " ".join(words)
    rows = (NONSPEECH / "metadata.tsv").read_text(encoding="utf-8").splitlines()[1:]
    for row in rows:
        uid = row.split("\t")[0]
        texts[uid] = "thank you" if uid.startswith("music") else ""
    return texts


def _model(folder: Path) -> None:
    make_model(
        folder.parent,
        folder.name,
        f"TEXTS = {_texts()!r}\n" + PROGRAM,
        name="Stand-in recogniser (planted long-form faults)",
        type="open-source",
        architecture=STAND_IN_ARCHITECTURE,
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results/ with the stand-in on mini_long_en and nonspeech_clips."""
    from asrbench.cli import main

    base = tmp_path_factory.mktemp("longform-report")
    _model(base / "models" / "standin")
    (base / "models" / "README.md").write_text("stand-in recogniser\n")
    cache = own_cache(base / "cache")  # NSW grammars: compiled once
    env = {"ASRBENCH_MODELS_DIR": str(base / "models"), "ASRBENCH_CACHE": str(cache)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    root = base / "results"
    try:
        args = ["benchmark", "-m", "standin", "-d", "mini_long_en", "-d", "nonspeech_clips"]
        assert main([*args, "--no-progress", "--results", str(root), "--runner", "local"]) == 0
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return root


def _expected_wpm() -> tuple[float, int, int]:
    rows = [r.split("\t") for r in (NONSPEECH / "metadata.tsv").read_text().splitlines()[1:]]
    minutes = sum(float(r[2]) for r in rows) / 60
    music = sum(r[0].startswith("music") for r in rows)
    return 2 * music / minutes, music, len(rows)


def test_leaderboard_marks_the_session_cell_and_lists_non_speech_figures(tree: Path) -> None:
    from asrbench.results import leaderboard

    board = leaderboard.build(tree)
    cell = board["cells"]["standin"]["mini_long_en"]
    assert cell["longform"] is True and cell["segmentation"] is None
    # the dropped segments' words (as the scorer counts them) + 6 inserted, over all words
    normalize = get_scorer("en").normalize
    tokens = [len(normalize(s.words)) for segs in _segments().values() for s in segs]
    dropped = sum(len(normalize(_segments()["lj_reading"][k].words)) for k in DROPPED)
    assert cell["ter"] == pytest.approx((dropped + 6) / sum(tokens))
    wpm, music, clips = _expected_wpm()
    fig = board["hallucination"]["standin"]["nonspeech_clips"]
    assert fig["words_per_min"] == pytest.approx(wpm)
    assert (fig["clips_with_output"], fig["clips"]) == (music, clips)
    assert fig["share_with_output"] == pytest.approx(music / clips)
    assert len(fig["words_per_min_ci"]) == 2 and fig["worst_text"] == "thank you"
    text = leaderboard.to_markdown(board)
    assert "[session; whole]" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| standin | nonspeech_clips"))
    assert f"| {wpm:.1f} [" in row and f"| {100 * music / clips:.0f} % [" in row
    assert f"mini_long_en {100 * cell['ter']:.2f}" in row
    assert json.loads(json.dumps(board)) == board  # the JSON output holds it all


def test_recorded_segmentation_is_shown(tree: Path, tmp_path: Path) -> None:
    """A cell whose run.json records platform segmentation (docs/RESULTS.md) says which."""
    from asrbench.results import leaderboard

    root = tmp_path / "results"
    shutil.copytree(tree / "standin" / "mini_long_en", root / "standin" / "mini_long_en")
    run_path = root / "standin" / "mini_long_en" / "run.json"
    run = json.loads(run_path.read_text())
    run["options"]["segmentation"] = {
        "format": "asrbench-run-segmentation/1",
        "mode": "auto",
        "method": "vad",
        "options": {},
        "record": {"format": "asrbench-segmentation/1", "method": "silero"},
        "merge": "concat",
        "cut": {"lj_reading": 14},
        "whole": ["fsdd_jackson_numbers"],
    }
    run_path.write_text(json.dumps(run))
    board = leaderboard.build(root)
    seg = board["cells"]["standin"]["mini_long_en"]["segmentation"]
    assert seg == {
        "mode": "auto",
        "method": "vad",
        "detector": "silero",
        "merge": "concat",
        "cut": 1,
        "whole": 1,
    }
    assert "[session; vad/silero]" in leaderboard.to_markdown(board)


def test_timed_output_places_words_in_pauses(tree: Path, tmp_path: Path, cli) -> None:
    """With hyp.timed.jsonl (segmented cells, docs/RESULTS.md) the timeline shows where the
    model wrote text and counts the words it timed inside pauses between reference segments."""
    from asrbench.report.longform import timelines
    from asrbench.results.store import read_cell

    folder = tmp_path / "standin" / "mini_long_en"
    shutil.copytree(tree / "standin" / "mini_long_en", folder)
    (folder / "timeline.json").unlink()  # made again below, from the timed output
    segs = _segments()["lj_reading"]
    pieces = [{"start": s.start_time, "end": s.end_time, "text": s.words} for s in segs]
    gap = (segs[0].end_time, segs[1].start_time)  # a pause of 1.2 s
    assert gap[1] - gap[0] >= 1.0
    pieces.insert(1, {"start": gap[0] + 0.3, "end": gap[1] - 0.3, "text": "thank you"})
    pieces.append({"start": segs[-1].end_time, "end": segs[-1].end_time + 0.2, "text": ""})
    line = {"id": "lj_reading", "source": "pieces", "segments": pieces, "words": []}
    (folder / "hyp.timed.jsonl").write_text(json.dumps(line) + "\n")
    code, _, err = cli("report", "--results", tmp_path, "--backfill", "-o", tmp_path / "s", "-q")
    assert code == 0, err
    found, why = timelines(read_cell(folder))
    assert why is None
    by_id = {t.id: t for t in found}
    lj = by_id["lj_reading"]
    assert lj.pause_words == 2 and len(lj.output or ()) == len(segs) + 1
    assert lj.svg.count('class="output"') == len(segs) + 1
    exact = by_id["fsdd_jackson_numbers"]  # no line for it: drawn without timed output
    assert exact.output is None and exact.pause_words is None


def test_the_timeline_is_stored_and_drawn_without_the_dataset_folder(
    tree: Path, tmp_path: Path
) -> None:
    """The report renders the stored timeline.json: a cell whose dataset folder is gone (run.json
    names a folder this machine does not have) is drawn exactly as before."""
    from asrbench.report.longform import timelines
    from asrbench.results.store import read_cell

    stored = tree / "standin" / "mini_long_en"
    assert (stored / "timeline.json").is_file()
    folder = tmp_path / "standin" / "mini_long_en"
    shutil.copytree(stored, folder)
    run_path = folder / "run.json"
    run = json.loads(run_path.read_text())
    run["dataset"]["folder"] = str(tmp_path / "gone" / "mini_long_en")
    run_path.write_text(json.dumps(run))
    here, why = timelines(read_cell(stored))
    moved, why_moved = timelines(read_cell(folder))
    assert why is None and why_moved is None
    assert [t.svg for t in moved] == [t.svg for t in here] and len(here) == 2
    assert sum(len(t.dropped) for t in moved) == 1 and sum(len(t.loops) for t in moved) == 1


def test_a_cell_stored_before_its_timeline_says_how_to_backfill_it(
    tree: Path, tmp_path: Path, cli
) -> None:
    """A long-form cell without timeline.json (an older asrbench) gets a note naming the
    command, not a timeline recomputed from the dataset; the backfill writes the same bytes
    the benchmark stored."""
    from asrbench.report.longform import timelines
    from asrbench.results.store import read_cell

    stored = tree / "standin" / "mini_long_en"
    folder = tmp_path / "results" / "standin" / "mini_long_en"
    shutil.copytree(stored, folder)
    (folder / "timeline.json").unlink()
    (folder / "ablation.json").unlink()
    found, why = timelines(read_cell(folder))
    assert found == [] and why is not None
    assert f"{folder / 'timeline.json'}: missing" in why and "`ops/report --backfill`" in why
    code, out, err = cli(
        "report", "--results", tmp_path / "results", "--backfill", "-o", tmp_path / "s"
    )
    assert code == 0, err
    assert "backfilled: 2 record(s)" in out
    for name in ("timeline.json", "ablation.json"):
        assert (folder / name).read_bytes() == (stored / name).read_bytes(), name
    page = (tmp_path / "s" / "cell" / "standin" / "mini_long_en.html").read_text()
    assert page.count('class="timeline-fig"') == 2 and "--backfill" not in page


def test_a_backfill_without_the_dataset_names_it_and_stores_no_timeline(
    tree: Path, tmp_path: Path, cli
) -> None:
    """`--backfill` where run.json's dataset folder is gone: one problem line naming the
    segments file, no timeline.json (a later backfill with the dataset tries again)."""
    folder = tmp_path / "results" / "standin" / "mini_long_en"
    shutil.copytree(tree / "standin" / "mini_long_en", folder)
    (folder / "timeline.json").unlink()
    run_path = folder / "run.json"
    run = json.loads(run_path.read_text())
    gone = tmp_path / "gone" / "mini_long_en"
    run["dataset"]["folder"] = str(gone)
    run_path.write_text(json.dumps(run))
    out = tmp_path / "s"
    code, _, err = cli("report", "--results", tmp_path / "results", "--backfill", "-o", out)
    assert code == 0, err
    assert f"problem: {gone / 'segments.seglst.json'}: cannot read the reference segments" in err
    assert not (folder / "timeline.json").exists()
    page = (out / "cell" / "standin" / "mini_long_en.html").read_text()
    assert "timeline.json: missing" in page and 'class="timeline-fig"' not in page


@pytest.fixture(scope="module")
def site(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from asrbench.report import ReportOptions, build_site

    out = tmp_path_factory.mktemp("longform-site") / "site"
    built = build_site(ReportOptions(results=tree, out=out, audio="none"))
    assert built.problems == []
    return out


def test_the_cell_page_shows_the_stored_session_metrics(tree: Path, site: Path) -> None:
    """The long-form cell's page shows the session metrics summary.json stores (no speakers
    here: ORC-WER and session WER), in ops/benchmark's words; nothing is rescored."""
    import html

    from asrbench.report.site import Site
    from asrbench.results.summary import stored_session_parts

    summary = json.loads((tree / "standin" / "mini_long_en" / "summary.json").read_text())
    parts = stored_session_parts(summary["session_metrics"])
    assert [p.split()[0] for p in parts] == ["ORC-WER", "WER"]
    page = html.unescape((site / Site.cell_page("standin", "mini_long_en")).read_text())
    assert "; ".join(parts) in page
    other = (site / Site.cell_page("standin", "nonspeech_clips")).read_text()
    assert "Session metrics" not in other  # a non-speech set is no long-form one


def _clean(events) -> None:
    assert events.console_errors == [] and events.page_errors == [] and events.blocked == []


def test_timeline_places_the_dropped_stretch_and_the_loop(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, site / "cell" / "standin" / "mini_long_en.html")
    segs = _segments()["lj_reading"]
    lj = page.locator('figure.timeline-fig[data-id="lj_reading"]')
    start, end = segs[DROPPED[0]].start_time, segs[DROPPED[-1]].end_time
    caption = lj.locator("figcaption").inner_text()
    n = sum(len(get_scorer("en").normalize(segs[k].words)) for k in DROPPED)
    assert f"({start:.1f}-{end:.1f} s, {n} words)" in caption
    assert f'("{LOOP[:9]}" x3 at {segs[LOOP_AFTER].end_time:.1f} s)' in caption
    svg = lj.locator("svg.timeline")
    width = svg.bounding_box()["width"]
    duration = max(s.end_time for s in segs)
    band = svg.locator("rect.dropped").bounding_box()
    left = svg.bounding_box()["x"]
    assert band["x"] - left == pytest.approx(width * start / duration, abs=2)
    assert band["width"] == pytest.approx(width * (end - start) / duration, abs=2)
    assert svg.locator("path.loop").count() == 1
    assert svg.locator("rect.op-D").count() >= 2 and svg.locator("rect.op-I").count() == 1
    assert svg.locator("rect.op-S").count() == 0
    exact = page.locator('figure.timeline-fig[data-id="fsdd_jackson_numbers"] svg')
    assert exact.locator("rect.op-S, rect.op-D, rect.op-I, rect.dropped, path.loop").count() == 0
    assert "whole" in page.locator("section.longform p.note").first.inner_text()
    _clean(events)


def test_index_marks_the_session_cell_and_shows_non_speech_figures(browser, site: Path) -> None:
    ctx, events = browser
    page = open_page(ctx, site / "index.html")
    assert "session · whole" in page.locator("#leaderboard").inner_text()
    wpm, music, clips = _expected_wpm()
    row = page.locator('table[id$="hallucination-table"] tr[data-model="standin"]')
    assert row.locator("td.wpm").inner_text().startswith(f"{wpm:.1f} [")
    assert f"({music}/{clips})" in row.locator("td.share").inner_text()
    _clean(events)
