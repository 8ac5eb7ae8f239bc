"""One sampler (issue 40, item 1): `--max-utts 5 --seed 0` names the same utterances in
`ops/benchmark`, `ops/stream` and a campaign (`ops/robustness`), each run through the real CLI
with the local runner on mini_en and a stand-in model that is both a batch and a streaming
program. Before, the three took a hash-ranked sample, a `random.Random` sample and the first N."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.campaign.base import CampaignPlan
from asrbench.dataset import load_dataset, sample_utterances
from asrbench.settings import REPO_ROOT
from tests.benchmark.conftest import make_fake_model
from tests.conftest import own_cache
from tests.streaming.fake_program import HEAD

# Reads every chunk of each utterance, then answers a final: no recognition, only the contract.
ANSWER = """\
while line := inp.readline():
    uid = json.loads(line)["id"]
    while (n := struct.unpack("<I", inp.read(4))[0]) != 0:
        inp.read(n)
    emit(id=uid, type="final", text="in being", audio_s=0.1)
"""

SAMPLE = ("--max-utts", "5", "--seed", "0")


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASRBENCH_CACHE", str(own_cache(tmp_path / "cache")))
    monkeypatch.setenv("ASRBENCH_RESULTS", str(tmp_path / "results"))
    folder = make_fake_model(tmp_path / "models", "fake_both", streaming="stream.py")
    (folder / "stream.py").write_text(HEAD + ANSWER, encoding="utf-8")
    return folder


def _ids(jsonl: Path) -> list[str]:
    return [json.loads(line)["id"] for line in jsonl.read_text(encoding="utf-8").splitlines()]


def _only(pattern: str, root: Path) -> Path:
    (found,) = root.glob(pattern)
    return found


def test_benchmark_stream_and_a_campaign_select_the_same_five(cli, model, tmp_path) -> None:
    results = tmp_path / "results"
    ds = load_dataset(REPO_ROOT / "datasets" / "mini_en")
    expected = [u.id for u in sample_utterances(ds.utterances, 5, 0)]
    # not a prefix of the dataset: a campaign's old "first N" would fail this
    assert expected != [u.id for u in ds.utterances[:5]]

    code, out, err = cli("benchmark", "-m", model, "-d", "mini_en", "--runner", "local", *SAMPLE)
    assert code == 0, (out, err)
    bench = _ids(_only("fake_both/mini_en~sample-*/utterances.jsonl", results))

    code, out, err = cli(
        "stream", "-m", model, "-d", "mini_en", "--runner", "local", "--speed", "50", *SAMPLE
    )
    assert code == 0, (out, err)
    stream = _ids(_only("streaming/fake_both/mini_en~*-sample-5-*/events.jsonl", results))

    code, out, err = cli(
        "robustness", "-m", model, "-d", "mini_en", "-g", "gaussian_noise:1",
        "--normaliser", "none", "--runner", "local", "-j", "1", *SAMPLE,
    )  # fmt: skip
    assert code == 0, (out, err)
    derived = _only("perturb/datasets/*clean*", tmp_path / "cache")
    campaign = [u.id for u in load_dataset(derived).utterances]

    assert bench == stream == campaign == expected


def test_a_campaigns_utts_n_is_the_same_sample_and_never_given_twice(cli, model) -> None:
    ds = load_dataset(REPO_ROOT / "datasets" / "mini_en")
    plan = CampaignPlan("test", ds, [str(model)], ids=5, seed=0)  # `--utts 5`, the old spelling
    assert list(plan.selected) == [u.id for u in sample_utterances(ds.utterances, 5, 0)]
    code, _, err = cli(
        "robustness", "-m", model, "-d", "mini_en", "-g", "gaussian_noise:1",
        "--utts", "3", "--max-utts", "3",
    )  # fmt: skip
    assert code == 2 and "--utts and --max-utts both given" in err and "Traceback" not in err
