"""ops/robustness orchestration with a stand-in benchmark that reads the real derived audio."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf
import yaml

import asrbench.benchmark
from asrbench.dataset import load_dataset
from asrbench.perturb.robustness import run_grid
from tests.perturb.conftest import SHORT_IDS


def _fake_benchmark(calls: list):
    """A stand-in 'model' whose WER is the mean absolute amplitude of the audio it is given."""

    def run_benchmark(model, dataset, **kwargs):
        ds = load_dataset(dataset)  # the derived dataset must be a valid dataset
        spec = yaml.safe_load((ds.root / "dataset.yaml").read_text())["derived_from"]["spec"]
        calls.append((model, spec))
        level = np.mean([np.mean(np.abs(sf.read(str(ds.audio_path(u)))[0])) for u in ds])
        rate = float(level) * (2.0 if model == "b" else 1.0)
        return SimpleNamespace(metrics=SimpleNamespace(ter=rate))

    return run_benchmark


def test_run_grid_werd_and_quality_nwerd(tmp_path, monkeypatch):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    calls: list = []
    monkeypatch.setattr(asrbench.benchmark, "run_benchmark", _fake_benchmark(calls))
    specs = ["gaussian_noise:4", "amplitude:5"]
    report = run_grid(["a", "b"], "mini_en", specs, normaliser="stoi", utt_ids=SHORT_IDS[:1])
    assert sorted(calls) == sorted((m, c) for m in "ab" for c in ["clean", *specs])
    rows = {(r["model"], r["condition"]): r for r in report["rows"]}
    noisy, quiet = rows[("a", "gaussian_noise:4")], rows[("a", "amplitude:5")]
    assert noisy["werd"] == pytest.approx(noisy["wer"] - noisy["wer_clean"])
    assert quiet["werd"] < 0 < noisy["werd"]  # louder audio, larger stand-in "WER"
    assert rows[("b", "gaussian_noise:4")]["werd"] == pytest.approx(2 * noisy["werd"])
    # NWERD normalised by the relative STOI loss measured on the derived audio.
    assert noisy["stoi"] < 0.9
    assert noisy["difficulty"] == pytest.approx(1 - noisy["stoi"], abs=0.01)
    assert noisy["nwerd"] == pytest.approx(noisy["werd"] / noisy["difficulty"])
    assert report["severity_curves"]["a"]["gaussian_noise"] == [(4, noisy["wer"])]


def test_run_grid_aurora_average_and_base_model(tmp_path, monkeypatch):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(asrbench.benchmark, "run_benchmark", _fake_benchmark([]))
    specs = [
        f"aurora:set=C,noise={n},snr={s}" for n in ("subway", "street") for s in (20, 15, 10, 5, 0)
    ]
    report = run_grid(["a"], "mini_en", specs, normaliser="model:b", utt_ids=SHORT_IDS[:1])
    acc = report["aurora_average_accuracy"]["a"]
    wers = [r["wer"] for r in report["rows"]]
    assert set(acc) == {"C"} and acc["C"] == pytest.approx(100 * (1 - np.mean(wers)))
    assert "Aurora-2 average word accuracy" in report["markdown"]
    # Base model b has exactly twice a's WERD, so a's NWERD is 0.5 wherever b degrades.
    assert all(r["nwerd"] == pytest.approx(0.5) for r in report["rows"] if r["werd"] > 1e-3)


def _single_speaker_copy(tmp_path, mini_en) -> str:
    """Four LJSpeech utterances (one voice) as a dataset of their own, like a prompt corpus."""
    from asrbench.dataset import write_dataset

    src = load_dataset(mini_en)
    utts = [u for u in src.utterances if u.extra.get("SPEAKER") == "LJ"][:4]
    root = tmp_path / "one_voice"
    (root / "audio").mkdir(parents=True)
    for u in utts:
        (root / u.audio).write_bytes((mini_en / u.audio).read_bytes())
    write_dataset(root, {**src.meta, "id": "one_voice"}, src.columns, utts)
    return str(root)


def test_grid_on_one_voice_falls_back_skips_and_shows_progress(
    tmp_path, monkeypatch, capsys, mini_en
):
    """The reported run: a single-speaker set aborted the default grid at crosstalk and then
    ran 11 minutes without a progress line."""
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    empty = tmp_path / "no-noise-here"
    empty.mkdir()
    monkeypatch.setenv("ASRBENCH_NOISE_MUSIC", str(empty))  # a user's pool with no audio in it
    monkeypatch.setattr(asrbench.benchmark, "run_benchmark", _fake_benchmark([]))
    ds = _single_speaker_copy(tmp_path, mini_en)
    report = run_grid(["a"], ds, ["crosstalk:3", "music:2", "gaussian_noise:2"], normaliser="none")
    assert report["conditions"] == ["crosstalk:3", "gaussian_noise:2"]
    warnings = " ".join(report["warnings"])
    assert "condition music:2 skipped" in warnings and str(empty) in warnings
    assert "crosstalk:3: babble from the shipped fallback pool" in warnings
    assert "Warnings:" in report["markdown"]
    err = capsys.readouterr().err
    assert "robustness one_voice: 3/3 cells, 12/12 utts" in err  # derive 3 conditions
    assert "robustness one_voice: 3/3 cells" in err.split("derive")[-1]  # then the model cells


def test_env_noise_needs_nothing_outside_the_clone(tmp_path, monkeypatch, mini_en):
    from asrbench.perturb.derive import derive_dataset

    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ASRBENCH_SHARED", str(tmp_path / "no-shared-folder"))
    r = derive_dataset(mini_en, "env_noise:3", out=tmp_path / "d", utt_ids=SHORT_IDS[:1])
    prov = yaml.safe_load((r.path / "dataset.yaml").read_text())["derived_from"]
    shipped = {name for name, _ in prov["asset_files"]["shipped"]["noise"]}
    assert shipped == {"doing_the_dishes.wav", "exercise_bike.wav", "guitar_16k.wav"}
