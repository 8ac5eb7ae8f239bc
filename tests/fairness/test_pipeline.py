"""ops/fairness end to end with a stand-in benchmark: real datasets, real derived audio, real
scoring of planted hypotheses; only the recogniser is replaced (the Docker runs are in
test_e2e_docker.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from asrbench.dataset import load_dataset
from asrbench.results.records import FairnessRecord
from asrbench.results.summary import Selection, Summary, write_summary
from tests.conftest import own_cache

A, B = "pocketsphinx_en", "whisper_tiny_en"  # real cards; the recogniser is the stand-in
MINI_IDS = [
    "LJ001-0002",
    "LJ001-0005",
    "LJ001-0013",
    "LJ001-0008",
    "1089-134686-0000",
    "1089-134691-0000",
    "cmu_arctic_us_aew_a0001",
    "cmu_arctic_us_aew_a0002",
    "cmu_arctic_us_axb_a0004",
    "cmu_arctic_us_axb_a0005",
    "jfk",
]


def _severity(ds) -> int:
    spec = (ds.meta.get("derived_from") or {}).get("spec", "clean")
    if spec.startswith("sample_rate="):  # a model-rate copy: look at what it was made from
        return 0
    return int(spec.split(":")[1]) if ":" in spec else 0


def planted_benchmark(calls: list, women_lose: int = 1):
    """A stand-in recogniser. Model A: men's utterances exactly right; women's lose their
    first `women_lose` words, plus one more per severity step. Model B: always right.
    Reference-free datasets: the hypothesis is a fixed sentence with the same planted losses."""
    from asrbench.scorers import get_scorer

    def run_benchmark(model, dataset, results_root=None, **kwargs):
        ds = load_dataset(dataset)
        calls.append((model, ds.id, ds.sample_rate))
        sev = _severity(ds)
        hyps = {}
        for u in ds.utterances:
            words = (u.text or "alpha bravo charlie delta echo foxtrot golf hotel").split()
            lose = (women_lose + sev) if (model == A and u.extra.get("GENDER") == "F") else 0
            hyps[u.id] = " ".join(words[lose:])
        from asrbench.settings import settings

        out = (results_root or settings().results) / Path(model).name / ds.id
        out.mkdir(parents=True, exist_ok=True)
        if ds.reference_free:
            recs = [{"id": i, "hyp": h, "failed": None} for i, h in hyps.items()]
            metrics = None
        else:
            res = get_scorer("en").score({u.id: u.text for u in ds.utterances}, hyps)
            recs = [{**r.to_dict(), "hyp": hyps[r.id]} for r in res.utterances]
            metrics = res.metrics
        (out / "utterances.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
        n = len(ds.utterances)
        summary = Summary(
            producer="benchmark",
            result_key="sha256:k",
            metrics=metrics,
            selection=Selection(n, n, "sha256:ids"),
            scorer={},
            model=model,
            model_identity=f"fake:{model}",
            runner="fake",
            dataset=ds.id,
            dataset_hash="sha256:x",
            hyps_key="h",
        )
        write_summary(out / "summary.json", summary)  # the platform's own writer
        return SimpleNamespace(out_dir=out, summary=summary, cache_hit=False)

    return run_benchmark


@pytest.fixture
def fake(tmp_path, monkeypatch):
    # own_cache: the checkout's NSW grammars (a fresh cache compiles en's, minutes under load)
    monkeypatch.setenv("ASRBENCH_CACHE", str(own_cache(tmp_path / "cache")))
    monkeypatch.setenv("ASRBENCH_RESULTS", str(tmp_path / "results"))
    calls: list = []
    monkeypatch.setattr("asrbench.benchmark.run.run_benchmark", planted_benchmark(calls))
    return calls


def test_mini_en_by_gender_every_analysis(fake, cli, tmp_path):
    code, out, err = cli(
        "fairness",
        "-m",
        A,
        "-m",
        B,
        "-d",
        "mini_en",
        "--by",
        "GENDER",
        "--utts",
        ",".join(MINI_IDS),
        "-t",
        "av_noise:1",
        "-t",
        "av_noise:3",
        "--bootstrap",
        "200",
        "--permutations",
        "500",
        "--min-count",
        "1",
        "--out",
        str(tmp_path / "out"),
        "-q",
    )
    assert code == 0, err
    # every model on every condition once: clean + 2 severities, derived from the subset
    assert sorted((m, i.split("__")[1]) for m, i, _ in fake) == sorted(
        (m, c) for m in (A, B) for c in ("av_noise-1", "av_noise-3", "clean")
    )
    j = json.loads((tmp_path / "out" / "fairness.json").read_text())
    assert j["format"] == "asrbench-fairness-v1" and j["by"] == "GENDER"
    # the typed record reads it back whole (every key, every number)
    assert FairnessRecord.from_dict(j).to_dict() == j
    assert j["analyses"] == [
        "accuracy",
        "lwerr",
        "robustness",
        "metamorphic",
        "differential",
        "localiser",
    ]
    assert {g["group"]: g["n_speakers"] for g in j["groups"]} == {"F": 2, "M": 3}
    acc = {(a["model"], r["group"]): r for a in j["accuracy"] for r in a["groups"]}
    assert acc[(B, "F")]["rate"] == 0 and acc[(A, "F")]["rate"] > 0 == acc[(A, "M")]["rate"]
    assert acc[(A, "F")]["metrics"]["del"] == 6  # one planted deletion per F utterance
    (lw,) = j["lwerr"][0]["rows"]
    assert lw["compare"] == "F" and lw["base"] == "M" and lw["lwerr"] is None  # M makes none
    rob = j["robustness"][0]
    assert rob["model"] == A and rob["base"] == "M"
    (slope,) = rob["slopes"]
    assert slope["slope"] > 0 and slope["severities"] == [0, 1, 3]
    (diff,) = j["differential"]
    counts = {r["base"]: r["violations"] for r in diff["violations"]}
    assert counts["F"] >= 1 and counts["M"] == 0
    loc = {(e["model"], e["transformation"]): e for e in j["localiser"]}
    top = loc[(A, "av_noise")]["top"]
    assert any(r["group"] == "F" and r["drop"] > 0 for r in top)
    assert loc[(B, "av_noise")]["n_non_robust"].get("F", 0) == 0
    assert loc[(A, "av_noise")]["validation"]["n_heldout_utts"] > 0
    assert j["normaliser"]["config_hash"].startswith("sha256:")
    assert {i["condition"] for i in j["inputs"]} == {"clean", "av_noise:1", "av_noise:3"}
    md = (tmp_path / "out" / "fairness.md").read_text()
    assert "## LWERR" in md and "## AequeVox differential testing" in md and md in out
    tsv = (tmp_path / "out" / "localiser" / f"{A}.tsv").read_text().splitlines()
    assert tsv[0].split("\t")[:4] == ["transformation", "group", "rank", "word"]
    assert "5 utterance(s) of mini_en" not in err  # the subset holds no unlabelled utterance


def test_reference_free_dataset_runs_the_reference_free_analyses(fake, cli, tmp_path):
    code, out, err = cli(
        "fairness",
        "-m",
        A,
        "-m",
        B,
        "-d",
        "ls_gender",
        "--by",
        "GENDER",
        "--per-speaker",
        "1",
        "-t",
        "av_noise:2",
        "--bootstrap",
        "50",
        "--permutations",
        "300",
        "--out",
        str(tmp_path / "o"),
        "-q",
    )
    assert code == 0, err
    j = json.loads((tmp_path / "o" / "fairness.json").read_text())
    assert j["dataset"]["reference_free"] and j["options"]["metric"] is None
    assert j["analyses"] == ["metamorphic", "differential", "localiser"]
    assert j["accuracy"] == [] and j["localiser"][0]["validation"] is None
    assert j["selection"]["n_utts"] == 10 and {g["n_speakers"] for g in j["groups"]} == {5}
    viol = {r["base"]: r["violations"] for r in j["differential"][0]["violations"]}
    assert viol == {"F": 1, "M": 0}
    p = [r for r in j["differential"][0]["pairs"] if r["base"] == "F"][0]
    assert p["exact"] and p["permutations"] == 252 and p["n_units"] == 10


def test_resample_auto_gives_a_16_khz_model_a_copy_of_an_8_khz_dataset(fake, cli, tmp_path):
    code, _, err = cli(
        "fairness",
        "-m",
        A,
        "-d",
        "fsdd_accents",
        "--by",
        "ACCENT",
        "--per-speaker",
        "2",
        "--bootstrap",
        "20",
        "--permutations",
        "20",
        "--resample",
        "auto",
        "--out",
        str(tmp_path / "o"),
        "-q",
    )
    assert code == 0, err
    ((model, ds_id, rate),) = fake
    assert rate == 16000 and ds_id.endswith("__sr16000")
    j = json.loads((tmp_path / "o" / "fairness.json").read_text())
    assert j["inputs"][0]["resampled_to"] == 16000
    # 6 speakers, 2 each, spread over their digits (not the first two takes of 'zero')
    assert j["selection"]["n_utts"] == 12
    copy = load_dataset(tmp_path / "cache" / "fairness" / "datasets" / ds_id)
    assert copy.sample_rate == 16000 and {u.text for u in copy.utterances} == {"zero", "five"}
    prov = yaml.safe_load((copy.root / "dataset.yaml").read_text())["derived_from"]
    assert prov["resample"] == {"from": 8000, "to": 16000, "with": "soxr VHQ, 16-bit PCM WAV"}
    assert "4 groups" in (tmp_path / "o" / "fairness.md").read_text()
    assert "group 'BEL/French' of ACCENT in fsdd_accents is small" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-d", "fsdd_accents", "--by", "ACCNT"],
            "dataset fsdd_accents has no column 'ACCNT'; its metadata columns: SPEAKER, GENDER, "
            "ACCENT, LANGUAGE",
        ),
        (["-d", "ls_gender", "--by", "GENDER"], "dataset ls_gender is reference-free"),
        (
            ["-d", "ls_gender", "--by", "GENDER", "--analyses", "accuracy"],
            "dataset ls_gender is reference-free (no TEXT), but accuracy needs references",
        ),
        (
            ["-d", "ls_gender", "--by", "GENDER", "-t", "av_noise", "--metric", "ter"],
            "--metric ter: dataset ls_gender is reference-free",
        ),
        (
            ["-d", "ls_gender", "--by", "GENDER", "-t", "av_noise", "--analyses", "differential"],
            "differential testing compares two recognisers: give two models",
        ),
        (
            ["-d", "fsdd_accents", "--by", "ACCENT", "--base", "French"],
            "--base 'French' is not a value of ACCENT in dataset fsdd_accents; its values: "
            "BEL/French, DEU/German, GRC/Greek, USA/neutral",
        ),
        (
            ["-d", "fsdd_accents", "--by", "GENDER"],
            "column GENDER of dataset fsdd_accents has a single value 'M'",
        ),
        (
            ["-d", "fsdd_accents", "--by", "ACCENT", "--analyses", "lwerr"],
            "LWERR compares two groups: give --base",
        ),
        (["-d", "fsdd_accents", "--by", "ACCENT", "-t", "av_nois"], "unknown perturbation"),
    ],
)
def test_bad_requests_fail_before_anything_runs(fake, cli, args, message):
    code, out, err = cli("fairness", "-m", A, *args)
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and fake == []


def test_a_model_given_as_a_folder_is_named_by_its_id(fake, cli, tmp_path):
    """-m accepts a folder: reports and the default output folder use the model's ID, never
    the path (which once put the results under <results>/fairness/mini_en//abs/path)."""
    from asrbench.settings import REPO_ROOT

    folder = str(REPO_ROOT / "models" / A)
    code, out, err = cli(
        "fairness",
        "-m",
        folder,
        "-d",
        "mini_en",
        "--by",
        "GENDER",
        "--utts",
        ",".join(MINI_IDS),
        "--analyses",
        "accuracy",
        "--bootstrap",
        "50",
        "--permutations",
        "50",
        "-q",
    )
    assert code == 0, err
    assert [m for m, _, _ in fake] == [folder]  # run by the reference given
    (target,) = (tmp_path / "results" / "fairness" / "mini_en" / A).glob("GENDER__sub*")
    j = json.loads((target / "fairness.json").read_text())
    assert j["models"] == [A] and [a["model"] for a in j["accuracy"]] == [A]
    assert f"{target}/fairness.json" in out


def test_the_same_model_twice_is_refused(fake, cli):
    from asrbench.settings import REPO_ROOT

    code, _, err = cli(
        "fairness", "-m", A, "-m", str(REPO_ROOT / "models" / A), "-d", "mini_en", "--by", "GENDER"
    )
    assert code == 2 and "given twice" in err and "Traceback" not in err
    assert fake == []
