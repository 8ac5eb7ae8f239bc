"""A benchmark cell of a dataset with NLP references (dataset.yaml `nlp:`) stores entity,
number and formatting metrics with ops/score's key names and values (asrbench.entity_scoring).

The dataset is built here: the Earnings-21 excerpt of tests/fixtures/earnings21 (call 4320211,
its normalisation and wer_tags sidecars) as one recording, its audio a mini_en file (the
stand-in never listens). The stand-in answers Google's published output for that call
(tests/fixtures/earnings21/google), written with its punctuation, so the errors are a real
system's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from asrbench.settings import REPO_ROOT
from scoring.nlp import read_nlp
from tests.benchmark.conftest import make_canned_model

FIX = REPO_ROOT / "tests" / "fixtures" / "earnings21"
CALL = "4320211"


def _written(path: Path) -> str:
    return " ".join(t.prepunctuation + t.token + t.punctuation for t in read_nlp(path))


def make_nlp_dataset(root: Path) -> Path:
    """A one-recording dataset whose references are the fixture's NLP file and sidecars."""
    ds = root / "e21_excerpt"
    for sub, name in [("references", f"{CALL}.nlp"), ("norm", f"{CALL}.norm.json"),
                      ("wer_tags", f"{CALL}.wer_tag.json")]:  # fmt: skip
        (ds / "nlp" / sub).mkdir(parents=True)
        shutil.copy(FIX / name, ds / "nlp" / sub / name)
    (ds / "audio").mkdir()
    shutil.copy(REPO_ROOT / "datasets" / "mini_en" / "audio" / "LJ001-0001.wav", ds / "audio")
    text = _written(FIX / f"{CALL}.nlp")
    (ds / "metadata.tsv").write_text(
        f"ID\tAUDIO\tDURATION\tTEXT\n{CALL}\taudio/LJ001-0001.wav\t9.655\t{text}\n"
    )
    (ds / "dataset.yaml").write_text(
        "id: e21_excerpt\nlanguage: en\nsample_rate: 16000\nlicence: CC BY-SA 4.0\n"
        "nlp:\n  references: nlp/references\n  norm: nlp/norm\n  wer_tags: nlp/wer_tags\n"
    )
    return ds


def google_answers() -> dict[str, dict]:
    return {CALL: {"text": _written(FIX / "google" / f"{CALL}.nlp")}}


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def bench_nlp_cell(cli, tmp_path: Path) -> Path:
    """The stand-in's cell on the NLP dataset (through the real CLI); its folder."""
    ds = make_nlp_dataset(tmp_path / "data")
    model = make_canned_model(tmp_path / "models", "canned_google", google_answers())
    code, _, err = cli(
        "benchmark", "-m", model, "-d", ds, "--runner", "local", "--no-progress",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps", "--score-opt", "nsw=false",
    )  # fmt: skip
    assert code == 0, err
    return tmp_path / "results" / "canned_google" / "e21_excerpt"


def test_the_cell_stores_ops_scores_entities_and_formatting(cli, tmp_path: Path) -> None:
    cell = bench_nlp_cell(cli, tmp_path)
    summary = _json(cell / "summary.json")
    ds = tmp_path / "data" / "e21_excerpt"
    hyp = tmp_path / "hyp.tsv"
    hyp.write_text(f"{CALL}\t{google_answers()[CALL]['text']}\n")
    code, _, err = cli(
        "score", ds / "nlp" / "references", hyp, "--norm", ds / "nlp" / "norm",
        "--wer-tags", ds / "nlp" / "wer_tags", "--no-nsw", "--out", tmp_path / "s",
    )  # fmt: skip
    assert code == 0, err
    scored = _json(tmp_path / "s" / "summary.json")
    assert summary["entities"] == scored["entities"]
    assert summary["metrics"] == scored["metrics"]  # scored against the NLP readings
    assert set(summary["entities"]["classes"]) >= {"ORG", "YEAR", "CARDINAL"}
    ref = tmp_path / "ref.tsv"
    ref.write_text(f"{CALL}\t{_written(FIX / f'{CALL}.nlp')}\n")
    code, _, err = cli("score", ref, hyp, "--formatting", "--no-nsw", "--out", tmp_path / "f")
    assert code == 0, err
    assert summary["formatting"] == _json(tmp_path / "f" / "summary.json")["formatting"]
    worst = summary["worst_entities"]
    shown = worst["instances"]
    assert 0 < worst["n_misrecognised"] == len(shown) < worst["n_entities"]
    assert all(x["errors"] > 0 and x["id"] == CALL for x in shown)
    assert [x["errors"] for x in shown] == sorted((x["errors"] for x in shown), reverse=True)
    # the instances' errors are the classes' errors, entity by entity
    by_class: dict[str, int] = {}
    for x in shown:
        by_class[x["class"]] = by_class.get(x["class"], 0) + x["errors"]
    classes = summary["entities"]["classes"]
    assert by_class == {k: v["errors"] for k, v in classes.items() if v["errors"]}


def test_a_dataset_naming_a_missing_nlp_folder_is_one_line(cli, tmp_path: Path) -> None:
    ds = make_nlp_dataset(tmp_path / "data")
    shutil.rmtree(ds / "nlp" / "wer_tags")
    model = make_canned_model(tmp_path / "models", "canned_google", google_answers())
    code, _, err = cli("benchmark", "-m", model, "-d", ds, "--runner", "local", "--no-progress")
    assert code == 2 and "Traceback" not in err
    assert "nlp: 'nlp/wer_tags': no such file or folder" in err


def test_a_sidecar_mismatch_stops_the_cell_unless_the_block_is_lenient(cli, tmp_path: Path) -> None:
    """Rev's own sidecars name a few entities their reference lacks: `nlp: {lenient: true}`
    (what the earnings recipes write) keeps them as the cell's warnings."""
    ds = make_nlp_dataset(tmp_path / "data")
    tags = ds / "nlp" / "wer_tags" / f"{CALL}.wer_tag.json"
    tags.write_text(json.dumps({**_json(tags), "9999": {"entity_type": "ORG"}}))
    model = make_canned_model(tmp_path / "models", "canned_google", google_answers())
    args = (
        "benchmark", "-m", model, "-d", ds, "--runner", "local", "--no-progress",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps", "--score-opt", "nsw=false",
    )  # fmt: skip
    code, _, err = cli(*args)
    assert code == 2 and "Traceback" not in err
    assert "entity '9999' names no token" in err
    card = ds / "dataset.yaml"
    card.write_text(card.read_text() + "  lenient: true\n")
    code, _, err = cli(*args)
    assert code == 0, err
    summary = _json(tmp_path / "results" / "canned_google" / "e21_excerpt" / "summary.json")
    assert any("'9999'" in w for w in summary["entities"]["warnings"])
