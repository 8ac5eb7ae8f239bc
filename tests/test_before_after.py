"""The consolidation changed where things live, not the numbers: stored results from before it.

`tests/golden/before_consolidation/` holds what the platform produced at commit b71c6a2 (before
the identity module, the metrics type and the one CLI) on mini_en: the three local models' raw
hypotheses and summaries, `ops/score`'s summaries of the same files, a 4-condition robustness
grid of pocketsphinx_en and whisper_tiny_en on 8 utterances, and the SHA-256 of every perturbed
utterance it wrote. Each test recomputes the same thing with today's code and compares.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from asrbench.dataset import load_dataset
from asrbench.images import engine_available
from asrbench.runners import read_tsv_pairs
from asrbench.settings import REPO_ROOT
from tests.conftest import require

GOLDEN = REPO_ROOT / "tests" / "golden" / "before_consolidation"
MODELS = ("pocketsphinx_en", "whisper_tiny_en", "whisper_base")
COUNTS = ("cor", "sub", "ins", "del", "errors", "n_ref", "n_hyp", "n_utts", "n_missing",
          "n_empty_ref", "ter", "mter", "ser", "coverage", "dae_slots_used")


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads((GOLDEN / "golden.json").read_text())


def _same_metrics(new: dict, old: dict) -> None:
    for k in COUNTS:
        assert new[k] == old[k], k
    for rate in ("ter", "mter"):
        for end in ("low", "high", "stderr"):
            assert new["ci"][rate][end] == old["ci"][rate][end], (rate, end)


@pytest.mark.parametrize("model", MODELS)
def test_rescoring_stored_hypotheses_gives_the_same_numbers(model: str, golden: dict,
                                                             mini_en: Path) -> None:
    from asrbench.scorers import get_scorer

    ds = load_dataset(mini_en, check_audio=False)
    hyps = read_tsv_pairs(GOLDEN / f"{model}.hyp.tsv")
    result = get_scorer("en").score({u.id: u.text for u in ds}, hyps)
    old = golden["benchmark"][model]
    _same_metrics(result.metrics.to_dict(), old["metrics"])
    per_utt = {u.id: [u.cor, u.sub, u.ins, u.dele, u.n_ref, u.n_hyp] for u in result.utterances}
    assert per_utt == old["utterances"]


@pytest.mark.parametrize("model", MODELS)
def test_ops_score_gives_the_same_numbers(model: str, golden: dict, mini_en: Path,
                                          tmp_path: Path, cli) -> None:
    ref = tmp_path / "ref.tsv"
    ref.write_text("".join(f"{u.id}\t{u.text}\n" for u in load_dataset(mini_en)))
    code, out, err = cli("score", ref, GOLDEN / f"{model}.hyp.tsv", "-o", tmp_path / "out",
                         "--reports", "none")
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    _same_metrics(summary["metrics"], golden["score"][model])


def test_perturbed_audio_is_byte_identical(golden: dict, mini_en: Path, tmp_path: Path,
                                           monkeypatch) -> None:
    from asrbench.perturb.derive import derive_dataset

    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    for name, old in golden["perturbed_audio"].items():
        r = derive_dataset(mini_en, old["spec"], seed=old["seed"], out=tmp_path / name,
                           utt_ids=sorted(old["sha256"]))
        new = {u.id: hashlib.sha256(r.path.joinpath(u.audio).read_bytes()).hexdigest()
               for u in load_dataset(r.path)}
        assert new == old["sha256"], name


@pytest.mark.docker
@pytest.mark.slow
def test_benchmark_and_robustness_numbers_unchanged(golden: dict, tmp_path: Path, cli,
                                                    monkeypatch) -> None:
    require("docker", engine_available(), "no Docker Engine answers")
    monkeypatch.setenv("ASRBENCH_RESULTS", str(tmp_path / "results"))
    code, out, err = cli("benchmark", "-m", "pocketsphinx_en", "-d", "mini_en", "--runner",
                         "docker", "-j", "2", "--no-progress")
    assert code == 0, err
    summary = json.loads((tmp_path / "results" / "pocketsphinx_en" / "mini_en" /
                          "summary.json").read_text())
    _same_metrics(summary["metrics"], golden["benchmark"]["pocketsphinx_en"]["metrics"])
    rows = [r for r in golden["robustness"]["rows"] if r["model"] == "pocketsphinx_en"]
    grid = ";".join(r["condition"] for r in rows)
    code, out, err = cli("robustness", "-m", "pocketsphinx_en", "-d", "mini_en", "-g", grid,
                         "--utts", "8", "--normaliser", "none", "--runner", "docker",
                         "--out", tmp_path / "rob")
    assert code == 0, err
    new = json.loads((tmp_path / "rob" / "robustness.json").read_text())
    got = {r["condition"]: (r["wer_clean"], r["wer"], r["werd"]) for r in new["rows"]}
    assert got == {r["condition"]: (r["wer_clean"], r["wer"], r["werd"]) for r in rows}
