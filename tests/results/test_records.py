"""The typed JSON records (asrbench/results/records.py): round trips, older versions, refusals.

`tests/fixtures/records/robustness-v1.json` was written by the robustness writer of commit
d79f68d (before the format tag: no provenance, Markdown embedded), on mini_en with a stand-in
benchmark; it must still be read, and its Markdown must come back the same from the record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.identity import digest
from asrbench.results.records import (
    FAIRNESS_FORMAT,
    ROBUSTNESS_FORMAT,
    RUN_FORMAT,
    FairnessRecord,
    Provenance,
    RecordError,
    RobustnessRecord,
    RunRecord,
    read_record,
    write_record,
)
from asrbench.results.summary import Selection, SummaryError, new_summary, read_summary
from asrbench.settings import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "records"
PROV = Provenance(
    command=["asrbench", "robustness", "-m", "a"],
    git={"commit": "d79f68d", "dirty": False, "dirty_files": []},
    host={"hostname": "h", "platform": "Linux", "machine": "x86_64", "cpus": 2, "docker": None},
    packages={"python": "3.11.7", "asrbench": "0.1.0"},
    started="2026-11-26T06:00:00.000Z",
    ended="2026-11-26T06:01:00.000Z",
    wall_s=60.0,
)


def _run_json() -> dict:
    """A run.json as `ops/benchmark` writes it (every key of asrbench-run-v2)."""
    return {
        "format": RUN_FORMAT,
        "command": ["asrbench", "benchmark", "-m", "m", "-d", "mini_en"],
        "cwd": "/work",
        "git": PROV.git,
        "model": {
            "id": "m",
            "identity": "local:abc",
            "runner": "local",
            "image": None,
            "source_hash": "sha256:1",
            "card": {"id": "m", "type": "open-source"},
            "folder": "/models/m",
        },
        "dataset": {
            "id": "mini_en",
            "hash": "sha256:2",
            "folder": "/datasets/mini_en",
            "meta": {"id": "mini_en", "derived_from": {"dataset": "x", "seed": 0}},
            "n_utts": 3,
        },
        "selection": Selection.of(["u1", "u2", "u3"], 3).to_dict(),
        "result_key": "sha256:3",
        "placement": {"kind": "reported", "note": None},
        "executor": {"kind": "local"},
        "options": {
            "jobs": 2,
            "max_utts": None,
            "seed": 0,
            "utt_timeout_s": None,
            "run": {},
            "scorer": {"nsw": False},
        },
        "cache": {"key": "k", "inputs": {}, "folder": "/c", "hit": False, "utts_run": 3},
        "contract_problems": [],
        "scorer": {"config_hash": "sha256:4", "config": None},
        "packages": PROV.packages,
        "host": {  # as benchmark/provenance.py's host_info writes it
            "hostname": "h",
            "platform": "Linux",
            "machine": "x86_64",
            "cpus": 2,
            "cpu_model": "Some CPU",
            "isa_level": "x86-64-v3",
            "docker": None,
        },
        "times": {
            "started": PROV.started,
            "ended": PROV.ended,
            "wall_s": 1.0,
            "prepare_s": 0.25,
            "dataset_hash_s": 0.001,
            "run_s": 0.5,
            "score_s": 0.125,
            "write_s": 0.05,
            "overhead_s": 0.125,
        },
        "shards": [{"shard": 0, "utts": 3}],
        "language": {
            "dataset": "en",
            "card": ["en"],
            "model": "en",
            "forced": False,
            "env": {"ASRBENCH_LANGUAGE": "en"},
            "mixed": [],
        },
    }


def _robustness() -> RobustnessRecord:
    v1 = json.loads((FIXTURES / "robustness-v1.json").read_text())
    old = RobustnessRecord.from_dict(v1)
    return RobustnessRecord(
        dataset=old.dataset,
        seed=old.seed,
        normaliser=old.normaliser,
        conditions=old.conditions,
        rows=old.rows,
        summary=old.summary,
        aurora_average_accuracy=old.aurora_average_accuracy,
        severity_curves=old.severity_curves,
        warnings=["condition music:2 skipped: no audio"],
        cells=[{"model": "a", "condition": "clean", "result_key": "sha256:5", "folder": "/r"}],
        provenance=PROV,
    )


def _fairness() -> dict:
    sections = {
        "dataset": {"id": "mini_en", "hash": "sha256:2", "n_utts": 3},
        "selection": {"n_utts": 3, "n_dataset_utts": 3, "sample": False},
        "by": "GENDER",
        "cluster": {"column": "SPEAKER", "unit": "speaker", "permutation_unit": "speaker"},
        "models": ["a", "b"],
        "analyses": ["accuracy"],
        "options": {"reps": 1000, "level": 0.95},
        "groups": [{"group": "F", "n_speakers": 2, "n_utts": 2, "small_reasons": []}],
        "unlabelled": {"n": 0, "ids": []},
        "conditions": [],
        "transformations": {},
        "accuracy": [{"model": "a", "metric": "ter", "groups": []}],
        "lwerr": [],
        "robustness": [],
        "metamorphic": [],
        "differential": [],
        "localiser": [],
        "notes": ["a note"],
        "warnings": [],
        "inputs": [{"model": "a", "condition": "clean", "result_key": "sha256:6"}],
        "normaliser": {"config_hash": "sha256:7", "code": "sha256:8"},
    }
    return {"format": FAIRNESS_FORMAT, **sections, "provenance": PROV.to_dict()}


def test_run_record_round_trip(tmp_path: Path) -> None:
    raw = _run_json()
    rec = RunRecord.from_dict(raw, "run.json")
    assert rec.to_dict() == raw  # the same keys and values as ops/benchmark writes
    assert rec.dataset_folder == "/datasets/mini_en"
    assert rec.card["type"] == "open-source" and rec.scorer_options == {"nsw": False}
    write_record(tmp_path / "run.json", rec)
    assert read_record(tmp_path / "run.json", RunRecord.from_dict) == rec
    assert json.loads((tmp_path / "run.json").read_text()) == raw
    # the typed sections keep the keys in the order ops/benchmark writes them
    typed = ("git", "model", "dataset", "selection", "placement", "options", "cache", "host")
    for section in (*typed, "times", "language"):
        assert list(rec.to_dict()[section]) == list(raw[section]), section
    assert rec.git.dirty is False and rec.host.cpus == 2 and rec.selection.n_utts == 3
    assert rec.language is not None and rec.language.env == {"ASRBENCH_LANGUAGE": "en"}
    # a run.json written before issue 24 has no `language`, and gets none written back
    before = {k: v for k, v in raw.items() if k != "language"}
    assert RunRecord.from_dict(before).to_dict() == before
    assert rec.times.wall_s == 1.0 and rec.cache.hit is False and rec.model.image is None
    with_pieces = {
        **raw,
        "options": {**raw["options"], "segmentation": {"mode": "vad"}},
        "times": {**raw["times"], "segment_s": 0.5},
    }
    assert RunRecord.from_dict(with_pieces).to_dict() == with_pieces


def test_robustness_record_round_trip(tmp_path: Path) -> None:
    rec = _robustness()
    write_record(tmp_path / "robustness.json", rec)
    raw = json.loads((tmp_path / "robustness.json").read_text())
    assert raw["format"] == ROBUSTNESS_FORMAT and "markdown" not in raw
    assert raw["provenance"]["command"] == PROV.command
    again = read_record(tmp_path / "robustness.json", RobustnessRecord.from_dict)
    assert again == rec and again.version == 2
    write_record(tmp_path / "again.json", again)
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "robustness.json").read_bytes()


def test_robustness_v1_file_is_read_and_its_markdown_comes_back_the_same() -> None:
    from asrbench.perturb.robustness import to_markdown

    path = FIXTURES / "robustness-v1.json"
    raw = json.loads(path.read_text())
    assert "format" not in raw  # what the old writer wrote
    rec = read_record(path, RobustnessRecord.from_dict)
    assert rec.version == 1 and rec.provenance is None and rec.cells == []
    assert rec.rows == raw["rows"] and rec.models == ["a", "b"]
    assert rec.severity_curves == raw["severity_curves"]
    assert to_markdown(rec) == raw["markdown"]  # robustness.md: the same bytes as before
    assert to_markdown(_robustness()).endswith(
        "Warnings:\n\n- condition music:2 skipped: no audio\n"
    )


def test_fairness_record_round_trip(tmp_path: Path) -> None:
    raw = _fairness()
    rec = FairnessRecord.from_dict(raw)
    assert rec.to_dict() == raw and rec.provenance == PROV and not rec.is_sample
    write_record(tmp_path / "fairness.json", rec)
    assert read_record(tmp_path / "fairness.json", FairnessRecord.from_dict) == rec


CASES = [
    ("run.json", RunRecord.from_dict, "asrbench-run-v2"),
    ("robustness.json", RobustnessRecord.from_dict, "asrbench-robustness-v2"),
    ("fairness.json", FairnessRecord.from_dict, "asrbench-fairness-v1"),
]


@pytest.mark.parametrize(("name", "from_dict", "current"), CASES)
def test_unknown_format_is_refused_in_one_line_naming_the_file(
    tmp_path: Path, name, from_dict, current
) -> None:
    path = tmp_path / name
    path.write_text(json.dumps({"format": "asrbench-leaderboard-v2", "rows": []}))
    with pytest.raises(RecordError) as err:
        read_record(path, from_dict)
    msg = str(err.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg
    assert "'asrbench-leaderboard-v2'" in msg and current in msg
    # a later version of the same record: says so, and what to do
    newer = current.rsplit("-v", 1)[0] + "-v9"
    path.write_text(json.dumps({"format": newer, "rows": []}))
    with pytest.raises(RecordError) as err:
        read_record(path, from_dict)
    msg = str(err.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg
    assert "another asrbench version" in msg and "rerun" in msg


@pytest.mark.parametrize(("name", "from_dict", "current"), CASES)
def test_truncated_or_malformed_records_name_the_file(
    tmp_path: Path, name, from_dict, current
) -> None:
    path = tmp_path / name
    path.write_text('{"format": "' + current + '", "rows": [')
    with pytest.raises(RecordError, match=f"^{path}: not valid JSON") as err:
        read_record(path, from_dict)
    assert "\n" not in str(err.value)
    path.write_text(json.dumps({"format": current, "rows": 3, "models": 3, "command": 3}))
    with pytest.raises(RecordError, match=f"^{path}: malformed") as err:
        read_record(path, from_dict)
    assert "\n" not in str(err.value)
    with pytest.raises(RecordError, match=f"^{tmp_path / 'none.json'}: missing"):
        read_record(tmp_path / "none.json", from_dict)


def test_robustness_row_without_its_numbers_is_named() -> None:
    with pytest.raises(RecordError, match="^r.json: row 0 lacks model/condition"):
        RobustnessRecord.from_dict({"rows": [{"model": "a"}]}, "r.json")


def test_summary_reader_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text("{")
    with pytest.raises(SummaryError, match=f"^{path}: not valid JSON"):
        read_summary(path)
    gone = tmp_path / "gone" / "summary.json"
    with pytest.raises(SummaryError, match=f"^{gone}: missing"):
        read_summary(gone)


def test_one_summary_builder_gives_the_result_key_both_producers_gave() -> None:
    """ops/benchmark and ops/score build their Summary and result key through `new_summary`;
    the key is the one each computed before: the `result` digest of hyps, dataset, the
    selection and the scorer identity."""
    scorer = {"config_hash": "sha256:4", "options": {}}
    ids = ["u2", "u1", "u3"]
    for producer, hyps, data, sel in (
        ("benchmark", "cachekey", "sha256:ds", Selection.of(ids, 10, max_utts=3, seed=7)),
        ("score", "sha256:hypfile", "sha256:reffile", Selection.of(ids, 3)),
    ):
        s = new_summary(producer, None, sel, scorer, hyps=hyps, data=data, model="m")
        assert s.result_key == "sha256:" + digest(
            "result", hyps=hyps, dataset=data, selection=sel.to_dict(), scorer=scorer
        )
        assert s.producer == producer and s.model == "m" and s.selection == sel
    sample = Selection.of(ids, 10, max_utts=3, seed=7)
    assert sample.ids_sha256 == digest("selection", utterances=ids)
    assert (sample.n_utts, sample.seed, sample.is_sample) == (3, 7, True)
    assert Selection.of(ids, 3, seed=7).seed is None  # a seed is recorded only for a sample


def test_a_stored_cell_reads_its_run_json_through_the_record(tmp_path: Path) -> None:
    from asrbench.results.store import read_cell
    from asrbench.results.summary import write_summary

    cell = tmp_path / "m" / "mini_en"
    summary = new_summary(
        "benchmark",
        None,
        Selection.of(["u1", "u2", "u3"], 3),
        {"config_hash": None, "options": {}},
        hyps="k",
        data="sha256:2",
        model="m",
        dataset="mini_en",
        dataset_hash="sha256:2",
        cost={"usd": 0.25},
    )
    write_summary(cell / "summary.json", summary)
    (cell / "run.json").write_text(json.dumps(_run_json()))
    stored = read_cell(cell)
    assert stored.run == RunRecord.from_dict(_run_json())
    assert stored.dataset_meta["id"] == "mini_en" and stored.derived_from == {
        "dataset": "x",
        "seed": 0,
    }
    assert stored.card["type"] == "open-source" and stored.cost_usd() == 0.25
    # run.json of another version: the cell is still read, the problem is one named line
    (cell / "run.json").write_text(json.dumps({**_run_json(), "format": "asrbench-run-v1"}))
    stored = read_cell(cell)
    assert stored.run is None and stored.card == {}
    problem = stored.run_problem or ""
    assert problem.startswith(f"{cell / 'run.json'}: format 'asrbench-run-v1'")
    assert "\n" not in problem and "without provenance" in problem
