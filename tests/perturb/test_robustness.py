"""ops/robustness orchestration with a stand-in benchmark that reads the real derived audio."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf
import yaml

from asrbench.campaign.robustness import RobustnessOptions, run_grid
from asrbench.dataset import load_dataset
from asrbench.perturb.robustness import to_markdown
from tests.perturb.conftest import SHORT_IDS

A, B = "pocketsphinx_en", "whisper_tiny_en"  # real cards (plan resolves them); stand-in runs


def _fake_benchmark(calls: list):
    """A stand-in 'model' whose WER is the mean absolute amplitude of the audio it is given."""

    def run_benchmark(model, dataset, **kwargs):
        ds = load_dataset(dataset)  # the derived dataset must be a valid dataset
        spec = yaml.safe_load((ds.root / "dataset.yaml").read_text())["derived_from"]["spec"]
        calls.append((model, spec))
        level = np.mean([np.mean(np.abs(sf.read(str(ds.audio_path(u)))[0])) for u in ds])
        rate = float(level) * (2.0 if model == B else 1.0)
        key = f"sha256:{model}-{spec}"
        return SimpleNamespace(
            metrics=SimpleNamespace(ter=rate),
            summary=SimpleNamespace(result_key=key, session_metrics=None),
            out_dir=ds.root,
        )

    return run_benchmark


def test_run_grid_werd_and_quality_nwerd(tmp_path, monkeypatch):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    calls: list = []
    monkeypatch.setattr("asrbench.benchmark.run.run_benchmark", _fake_benchmark(calls))
    specs = ["gaussian_noise:4", "amplitude:5"]
    opts = RobustnessOptions(normaliser="stoi", utts=SHORT_IDS[:1])
    report = run_grid([A, B], "mini_en", specs, opts)
    assert sorted(calls) == sorted((m, c) for m in (A, B) for c in ["clean", *specs])
    rows = {(r["model"], r["condition"]): r for r in report.rows}
    noisy, quiet = rows[(A, "gaussian_noise:4")], rows[(A, "amplitude:5")]
    assert noisy["werd"] == pytest.approx(noisy["wer"] - noisy["wer_clean"])
    assert quiet["werd"] < 0 < noisy["werd"]  # louder audio, larger stand-in "WER"
    assert rows[(B, "gaussian_noise:4")]["werd"] == pytest.approx(2 * noisy["werd"])
    # NWERD normalised by the relative STOI loss measured on the derived audio.
    assert noisy["stoi"] < 0.9
    assert noisy["difficulty"] == pytest.approx(1 - noisy["stoi"], abs=0.01)
    assert noisy["nwerd"] == pytest.approx(noisy["werd"] / noisy["difficulty"])
    assert report.severity_curves[A]["gaussian_noise"] == [[4, noisy["wer"]]]
    # provenance: what ran, and the result cell behind every number
    assert report.provenance is not None and report.provenance.command
    assert {(c["model"], c["condition"]) for c in report.cells} == {
        (m, c) for m in (A, B) for c in ["clean", *specs]
    }


def test_run_grid_aurora_average_and_base_model(tmp_path, monkeypatch):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("asrbench.benchmark.run.run_benchmark", _fake_benchmark([]))
    specs = [
        f"aurora:set=C,noise={n},snr={s}" for n in ("subway", "street") for s in (20, 15, 10, 5, 0)
    ]
    opts = RobustnessOptions(normaliser=f"model:{B}", utts=SHORT_IDS[:1])
    report = run_grid([A], "mini_en", specs, opts)
    acc = report.aurora_average_accuracy[A]
    wers = [r["wer"] for r in report.rows]
    assert set(acc) == {"C"} and acc["C"] == pytest.approx(100 * (1 - np.mean(wers)))
    assert "Aurora-2 average word accuracy" in to_markdown(report)
    # Base model B has exactly twice A's WERD, so A's NWERD is 0.5 wherever B degrades.
    assert all(r["nwerd"] == pytest.approx(0.5) for r in report.rows if r["werd"] > 1e-3)


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
    monkeypatch.setattr("asrbench.benchmark.run.run_benchmark", _fake_benchmark([]))
    ds = _single_speaker_copy(tmp_path, mini_en)
    specs = ["crosstalk:3", "music:2", "gaussian_noise:2"]
    report = run_grid([A], ds, specs, RobustnessOptions(normaliser="none"))
    assert report.conditions == ["crosstalk:3", "gaussian_noise:2"]
    warnings = " ".join(report.warnings)
    assert "condition music:2 skipped" in warnings and str(empty) in warnings
    assert "crosstalk:3: babble from the shipped fallback pool" in warnings
    assert "Warnings:" in to_markdown(report)
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
