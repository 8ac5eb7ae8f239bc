"""The campaign skeleton (asrbench/campaign/base.py): planning refuses bad input before anything
is derived, robustness and fairness share one derivation, and outputs are written whole."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from asrbench.campaign.base import CampaignPlan, derive, write_outputs
from asrbench.campaign.robustness import RobustnessOptions, run_grid
from asrbench.errors import InputError
from asrbench.results.records import Provenance, RobustnessRecord
from tests.conftest import own_cache
from tests.fairness.test_pipeline import MINI_IDS, planted_benchmark

A, B = "pocketsphinx_en", "whisper_tiny_en"  # real cards; the recogniser is a stand-in


@pytest.fixture
def spy(tmp_path, monkeypatch):
    """A stand-in benchmark for both campaigns, and a record of every utterance perturbed."""
    # own_cache: the checkout's NSW grammars (a fresh cache compiles en's, minutes under load)
    monkeypatch.setenv("ASRBENCH_CACHE", str(own_cache(tmp_path / "cache")))
    monkeypatch.setenv("ASRBENCH_RESULTS", str(tmp_path / "results"))
    runs: list = []
    planted = planted_benchmark(runs)

    def run_benchmark(model, dataset, **kwargs):
        res = planted(model, dataset, **kwargs)
        return SimpleNamespace(**vars(res), metrics=res.summary.metrics)

    monkeypatch.setattr("asrbench.benchmark.run.run_benchmark", run_benchmark)
    import asrbench.perturb.derive as derive_mod

    perturbed: list = []
    apply_spec = derive_mod.apply_spec

    def counted(x, sr, spec, **kw):
        perturbed.append((spec, kw["utt_id"]))
        return apply_spec(x, sr, spec, **kw)

    monkeypatch.setattr(derive_mod, "apply_spec", counted)
    return SimpleNamespace(runs=runs, perturbed=perturbed, cache=tmp_path / "cache")


def _derived(cache: Path) -> list[str]:
    root = cache / "perturb" / "datasets"
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--normaliser", "foo"], "--normaliser 'foo': unknown"),
        (["--normaliser", "model:no_such_model"], "--normaliser model:no_such_model:"),
        (["-g", "gaussian_noise:3;reverbb:2"], "unknown perturbation 'reverbb'"),
        (["--utts", "LJ001-0002,nope"], "--utts: not in dataset mini_en: nope"),
        (["-j", "0"], "--jobs 0: give at least 1"),
        (["-d", "ls_gender"], "dataset ls_gender is reference-free"),
        (["-m", "no_such_model"], "no_such_model"),
    ],
)
def test_robustness_refuses_bad_input_before_deriving_anything(spy, cli, args, message):
    """The reported run: `ops/robustness --normaliser foo` derived every condition, then
    printed a traceback."""
    base = ["robustness", "-m", A, "-d", "mini_en", "-g", "gaussian_noise:3", "--utts", "2"]
    code, _, err = cli(*base, *args)
    assert code == 2 and message in err and "Traceback" not in err, err
    assert err.startswith("error: ")
    assert _derived(spy.cache) == [] and spy.perturbed == [] and spy.runs == []


def test_fairness_refuses_bad_input_before_deriving_anything(spy, cli):
    code, _, err = cli(
        "fairness", "-m", A, "-d", "mini_en", "--by", "GENDR", "-t", "av_noise:1", "--utts", "4"
    )
    assert code == 2 and "has no column 'GENDR'" in err and "Traceback" not in err
    assert _derived(spy.cache) == [] and spy.perturbed == [] and spy.runs == []


def test_a_plan_is_checked_input_only(spy):
    with pytest.raises(InputError, match="severity 9 is out of range"):
        CampaignPlan("test", "mini_en", [A], ["gaussian_noise:9"])
    with pytest.raises(InputError, match="give at least one model"):
        CampaignPlan("test", "mini_en", [], ["gaussian_noise:1"])
    plan = CampaignPlan("test", "mini_en", [A], ["gaussian_noise:1", "clean"], ids=2)
    assert plan.conditions == ("clean", "gaussian_noise:1") and plan.is_subset
    assert plan.model_ids == (A,) and len(plan.selected) == 2
    assert _derived(spy.cache) == []  # planning wrote nothing
    whole = CampaignPlan("test", "mini_en", [A])  # clean only, every utterance
    assert derive(whole, progress=False).paths == {"clean": whole.ds.root}
    assert _derived(spy.cache) == []  # the dataset itself: nothing to derive


def test_robustness_and_fairness_derive_the_same_condition_once(spy, cli, tmp_path):
    ids = MINI_IDS[2:7]  # women and men: GENDER has two groups
    # normaliser none: the quality scores (DNSMOS, 75 s of ONNX at load 10) prove nothing here
    opts = RobustnessOptions(jobs=1, utts=ids, normaliser="none")
    record = run_grid([A], "mini_en", ["av_noise:1"], opts)
    first = _derived(spy.cache)
    assert len(first) == 2 and {n.split("__")[1] for n in first} == {"clean", "av_noise-1"}
    assert len(spy.perturbed) == 2 * len(ids)  # clean and av_noise:1, each utterance once
    assert {r["condition"] for r in record.cells} == {"clean", "av_noise:1"}
    spy.perturbed.clear()
    root = spy.cache / "perturb" / "datasets"
    inodes = {n: (root / n / "metadata.tsv").stat().st_ino for n in first}
    code, _, err = cli(
        "fairness",
        "-m",
        A,
        "-d",
        "mini_en",
        "--by",
        "GENDER",
        "-t",
        "av_noise:1",
        "--utts",
        ",".join(ids),
        "--analyses",
        "metamorphic",
        "--bootstrap",
        "20",
        "--permutations",
        "20",
        "-j",
        "1",
        "--out",
        str(tmp_path / "fair"),
        "-q",
    )
    assert code == 0, err
    assert spy.perturbed == []  # found in the cache: nothing perturbed again
    assert _derived(spy.cache) == first  # the same folders, no second name for them
    assert {n: (root / n / "metadata.tsv").stat().st_ino for n in first} == inodes  # not rewritten
    assert not (spy.cache / "fairness").exists()
    # both campaigns ran the model on the very same derived datasets
    by_campaign = [{(m, ds) for m, ds, _ in spy.runs[:2]}, {(m, ds) for m, ds, _ in spy.runs[2:]}]
    assert by_campaign[0] == by_campaign[1] and len(by_campaign[0]) == 2
    inputs = json.loads((tmp_path / "fair" / "fairness.json").read_text())["inputs"]
    assert {i["dataset"] for i in inputs} == {ds for _, ds in by_campaign[0]}


def _record() -> RobustnessRecord:
    prov = Provenance(command=["x"], git={}, host={}, packages={}, started="", ended="", wall_s=0)
    return RobustnessRecord(
        dataset="d",
        seed=0,
        normaliser="none",
        conditions=[],
        rows=[],
        summary=[],
        aurora_average_accuracy={},
        severity_curves={},
        warnings=[],
        cells=[],
        provenance=prov,
    )


def test_outputs_are_written_whole_and_never_over_a_foreign_folder(tmp_path):
    target = tmp_path / "out"
    write_outputs(target, {"r.json": _record(), "r.md": "one\n", "sub/x.tsv": "a\tb\n"})
    assert sorted(p.name for p in target.rglob("*")) == ["r.json", "r.md", "sub", "x.tsv"]
    write_outputs(target, {"r.json": _record(), "r.md": "two\n"})  # an earlier run's: replaced
    assert sorted(p.name for p in target.iterdir()) == ["r.json", "r.md"]
    assert (target / "r.md").read_text() == "two\n"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")
    with pytest.raises(InputError, match="holds other files"):
        write_outputs(mine, {"r.json": _record()})
    assert (mine / "thesis.tex").read_text() == "precious"
