"""The leaderboard's long-form view: each long-form cell's session metrics (cpWER, tcpWER or
ORC-WER and session WER; DER and JER) with their intervals over sessions, as summary.json
stores them, in leaderboard.json (`sessions` per cell) and in a table of their own.

The cells are real `ops/benchmark` cells of canned stand-ins on mini_meeting_en
(tests/benchmark/test_session_metrics.py): one names speakers (one turn per session given to
the other speaker, so cpWER, tcpWER, DER and JER are all above 0), one does not.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.benchmark.test_session_metrics import DATASET, _bench


def test_long_form_cells_show_session_metrics_with_intervals_over_sessions(
    cli, tmp_path: Path
) -> None:
    _, speakers = _bench(cli, tmp_path, True)
    _, plain = _bench(cli, tmp_path, False)
    code, out, err = cli("leaderboard", "--results", tmp_path / "results", "--reps", "0")
    assert code == 0, err
    board = json.loads((tmp_path / "results" / "leaderboard.json").read_text())
    assert board["format"] == "asrbench-leaderboard-v6"
    stored = json.loads((speakers / "summary.json").read_text())["session_metrics"]
    figs = board["cells"]["canned_speakers"][DATASET]["sessions"]
    assert sorted(figs) == ["cpwer", "der", "jer", "tcpwer"]
    der, cp = stored["der"], stored["cpwer"]["metrics"]
    assert figs["der"] == {
        "label": "DER",
        "rate": der["der"],
        "low": der["intervals"]["der"]["low"],
        "high": der["intervals"]["der"]["high"],
        "n_sessions": 2,
    }
    assert figs["cpwer"]["rate"] == cp["ter"] and figs["cpwer"]["low"] == cp["ci"]["ter"]["low"]
    assert 0 < der["der"] and figs["der"]["low"] < figs["der"]["high"]
    assert sorted(board["cells"]["canned_plain"][DATASET]["sessions"]) == ["orcwer", "wer"]
    # the table: one row per cell, each figure `rate [low, high]`, `-` where not supported
    table = out.split("### Long-form: session metrics")[1].split("###")[0]
    row = next(line for line in table.splitlines() if line.startswith("| canned_speakers"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    head = next(line for line in table.splitlines() if line.startswith("| model"))
    assert [c.strip() for c in head.strip("|").split("|")] == [
        "model", "dataset", "sessions", "cpWER %", "tcpWER %", "ORC-WER %", "WER %", "DER %",
        "JER %",
    ]  # fmt: skip
    low, high = 100 * figs["der"]["low"], 100 * figs["der"]["high"]
    assert cells[7] == f"{100 * der['der']:.2f} [{low:.1f}, {high:.1f}]"
    assert cells[2] == "2" and cells[5] == "-"  # two sessions; no ORC-WER with speakers
    plain_row = next(line for line in table.splitlines() if line.startswith("| canned_plain"))
    assert plain_row.rstrip(" |").endswith("| -")  # no speakers: no JER
    assert (plain / "summary.json").is_file()
