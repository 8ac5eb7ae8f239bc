"""Where a stream cell goes, and that the batch cells' reader leaves it alone."""

from __future__ import annotations

import pytest

from asrbench.errors import InputError
from asrbench.results.store import scan
from asrbench.results.summary import Selection
from asrbench.streaming.run import StreamSpec, cell_dir, check_spec


def test_stream_cells_live_under_streaming_and_name_their_feed(tmp_path):
    full = Selection.of(["a", "b"], 2)
    sample = Selection.of(["a"], 2, max_utts=1, seed=0)
    spec = StreamSpec(chunk_ms=160, speed=1.5)
    assert cell_dir(tmp_path, "m", "d", spec, full) == tmp_path / "streaming/m/d~160ms-x1p5"
    name = cell_dir(tmp_path, "m", "d", spec, sample).name
    assert (
        name.startswith("d~160ms-x1p5-sample-1-")
        and len(name) == len("d~160ms-x1p5-sample-1-") + 12
    )
    with pytest.raises(InputError):
        cell_dir(tmp_path, "../x", "d", spec, full)


def test_the_leaderboard_reader_does_not_read_stream_cells(tmp_path):
    # results/streaming/<model>/<cell>/ must be skipped like results/robustness/: it needs
    # "streaming" in asrbench/results/store.py ANALYSIS_TOPS
    cell = cell_dir(tmp_path, "pocketsphinx_en", "mini_en", StreamSpec(), Selection.of(["a"], 1))
    cell.mkdir(parents=True)
    (cell / "stream.json").write_text("{}")
    found = scan(tmp_path)
    assert not found.cells and not found.unreadable and not found.problems


@pytest.mark.parametrize(
    "spec, flag",
    [(StreamSpec(chunk_ms=5), "--chunk-ms"), (StreamSpec(speed=0.0), "--speed"),
     (StreamSpec(max_utts=0), "--max-utts")],
)  # fmt: skip
def test_bad_settings_are_refused_before_anything_runs(spec, flag):
    with pytest.raises(InputError, match=flag):
        check_spec(spec)
