"""Session metrics per group of sessions (dataset.yaml `session_groups:`): meeting_overlap_en's
cells scored once more per OVERLAP_BIN and per NSPEAKERS, each group's DER with its interval
over that group's sessions, equal to `ops/score --metric der` on those sessions alone.

The diarizer is a canned stand-in (tests/benchmark/conftest.py): the reference's own turns,
renamed, except in the 30 % bin, where every turn goes to one speaker. The real diarizer's
figures are docs/LONGFORM.md's ("The diarizer by overlap").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from asrbench.resolve import resolve_dataset
from tests.benchmark.conftest import make_canned_model

DATASET = "meeting_overlap_en"
LUMPED_BIN = "30"


def _diarizer_answers() -> dict[str, dict]:
    ds = resolve_dataset(DATASET)
    lumped = {u.id for u in ds.utterances if u.extra["OVERLAP_BIN"] == LUMPED_BIN}
    answers: dict[str, dict] = {u.id: {"text": "", "segments": []} for u in ds.utterances}
    for seg in sorted(ds.segments, key=lambda s: s.start_time):
        speaker = "s0" if seg.session_id in lumped else f"x_{seg.speaker}"
        answers[seg.session_id]["segments"].append(
            {"start": seg.start_time, "end": seg.end_time, "text": "", "speaker": speaker}
        )
    return answers


def _json(path: Path):
    return json.loads(path.read_text())


def test_each_overlap_bin_has_its_own_der_equal_to_ops_score_on_its_sessions(
    cli, tmp_path: Path
) -> None:
    diar = make_canned_model(tmp_path / "models", "canned_diar", _diarizer_answers())
    code, out, err = cli(
        "benchmark", "-m", diar, "-d", DATASET, "--runner", "local",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps",
        "--score-opt", "nsw=false", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    cell = tmp_path / "results" / "canned_diar" / DATASET
    groups = _json(cell / "summary.json")["session_groups"]
    assert sorted(groups) == ["NSPEAKERS", "OVERLAP_BIN"]
    bins = groups["OVERLAP_BIN"]
    assert [g["value"] for g in bins] == ["0", "5", "10", "15", "20", "30"]  # numeric order
    assert all(len(g["sessions"]) == 3 for g in bins)
    assert [len(g["sessions"]) for g in groups["NSPEAKERS"]] == [6, 6, 6]
    for g in bins:
        der = g["metrics"]["der"]
        assert der["n_sessions"] == 3
        if g["value"] != LUMPED_BIN:
            assert der["der"] == 0.0  # the reference's turns
            continue
        assert der["der"] > 0.2  # every turn one speaker's: confusion
        low, high = der["intervals"]["der"]["low"], der["intervals"]["der"]["high"]
        assert low <= der["der"] <= high
        assert "OVERLAP_BIN 30 (3 sessions): " in out and f"DER {100 * der['der']:.2f}%" in out
        # the same DER from ops/score on those three sessions' reference and turns alone
        ref, hyp = tmp_path / "ref", tmp_path / "hyp"
        assert cli("export", DATASET, "--to", "seglst", "--out", ref)[0] == 0
        assert cli("export", cell, "--to", "seglst", "--out", hyp)[0] == 0
        for path in (ref / f"{DATASET}.seglst.json", hyp / "hyp.seglst.json"):
            keep = [s for s in _json(path) if s["session_id"] in g["sessions"]]
            path.write_text(json.dumps(keep))
        code, _, err = cli(
            "score", ref / f"{DATASET}.seglst.json", hyp / "hyp.seglst.json",
            "--metric", "der", "--no-nsw", "--out", tmp_path / "score",
        )  # fmt: skip
        assert code == 0, err
        assert _json(tmp_path / "score" / "summary.json")["session"] == der


def test_a_group_column_the_metadata_lacks_is_one_line(cli, tmp_path: Path) -> None:
    folder = tmp_path / "mini_meeting_en"
    shutil.copytree(resolve_dataset("mini_meeting_en").root, folder)
    card = folder / "dataset.yaml"
    card.write_text(card.read_text() + "session_groups: [OVERLAP_BIN]\n")
    code, _, err = cli("validate", folder)
    assert code == 2
    assert "session_groups: 'OVERLAP_BIN' is not a metadata.tsv column" in err
    assert "SPEAKERS, SOURCE" in err and "Traceback" not in err
