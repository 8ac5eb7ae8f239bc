"""ops/robustness on a long-form dataset: each condition's session metrics (DER and JER of a
diarizer; cpWER, tcpWER, DER, JER of an `ASR+DIARIZER` combination) with their intervals over
sessions, in robustness.json (`sessions`) and robustness.md, as each cell's summary.json holds
them.

Real CLI, local runner, real derived audio; the models are canned stand-ins
(tests/benchmark/conftest.py), which answer each recording alike whatever its audio: the
real diarizer's figures under noise and reverberation are docs/LONGFORM.md's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.perturb.robustness import to_markdown
from asrbench.results.records import RobustnessRecord
from asrbench.results.summary import session_figures
from tests.benchmark.conftest import make_canned_model
from tests.benchmark.test_session_metrics import _answers
from tests.benchmark.test_speakers import _asr_answers, _diarizer_answers

DATASET = "mini_meeting_en"
NOISE = "gaussian_noise:4"


@pytest.mark.full  # 8.5 min on the loaded 2-core VM: two conditions of 279 s, four cells
def test_session_metrics_per_condition_for_a_diarizer_and_a_combination(
    cli, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    models = tmp_path / "models"
    diar = make_canned_model(models, "canned_diar", _diarizer_answers("s"))
    asr = make_canned_model(models, "canned_asr", _asr_answers())
    speakers = make_canned_model(models, "canned_speakers", _answers(True))
    code, out, err = cli(
        "robustness", "-m", diar, "-m", f"{asr}+{speakers}", "-d", DATASET, "-g", NOISE,
        "--normaliser", "none", "--runner", "local", "--results", tmp_path / "results",
        "--out", tmp_path / "rob",
    )  # fmt: skip
    assert code == 0, err
    record = json.loads((tmp_path / "rob" / "robustness.json").read_text())
    rows = {(r["model"], r["condition"]): r["metrics"] for r in record["sessions"]}
    pair = f"{asr}+{speakers}"  # models as given, as in the record's other tables
    assert set(rows) == {(m, c) for m in (str(diar), pair) for c in ("clean", NOISE)}
    assert sorted(rows[(str(diar), NOISE)]) == ["cpwer", "der", "jer", "tcpwer"]
    assert rows[(str(diar), "clean")]["der"]["rate"] == 0.0  # the reference's turns
    # each figure is its cell's, read back from the cell's summary.json
    for cell in record["cells"]:
        summary = json.loads((Path(cell["folder"]) / "summary.json").read_text())
        assert rows[(cell["model"], cell["condition"])] == session_figures(
            summary["session_metrics"]
        )
    pair_der = rows[(pair, NOISE)]["der"]
    assert 0 < pair_der["rate"] and pair_der["low"] <= pair_der["rate"] <= pair_der["high"]
    md = (tmp_path / "rob" / "robustness.md").read_text()
    table = md.split("Session metrics per condition")[1]
    line = next(x for x in table.splitlines() if x.startswith(f"| {pair} | {NOISE}"))
    assert f"{100 * pair_der['rate']:.2f} [" in line


def test_a_record_with_sessions_round_trips_and_shows_them() -> None:
    """The fast subset: robustness.json's `sessions` read back as written, and its table."""
    der = {
        "format": "asrbench-diarization-v1", "metric": "der", "der": 0.25, "n_sessions": 2,
        "intervals": {"der": {"low": 0.2, "high": 0.3}},
    }  # fmt: skip
    sessions = [
        {"model": "d", "condition": c, "metrics": session_figures({"der": der})}
        for c in ("clean", NOISE)
    ]
    record = RobustnessRecord(
        dataset=DATASET, seed=0, normaliser="none", conditions=[NOISE], rows=[], summary=[],
        aurora_average_accuracy={}, severity_curves={}, warnings=[], sessions=sessions,
    )  # fmt: skip
    again = RobustnessRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again.sessions == sessions
    assert f"| d | {NOISE} | 25.00 [20.0, 30.0] |" in to_markdown(again)
    without = RobustnessRecord.from_dict({**record.to_dict(), "sessions": []})
    assert "sessions" not in without.to_dict() and "Session metrics" not in to_markdown(without)
