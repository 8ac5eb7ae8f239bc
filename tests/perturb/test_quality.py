"""PESQ, STOI and DNSMOS on real speech: ordering with degradation, and the cache."""

from __future__ import annotations

import numpy as np
import soundfile as sf

from asrbench.perturb import apply_spec
from asrbench.perturb.quality import cached_quality, quality_scores


def test_scores_fall_as_noise_rises(speech):
    x, sr = speech
    clean = quality_scores(x, x, sr)
    assert clean["pesq"] > 4.4 and clean["stoi"] > 0.99
    mild = quality_scores(x, apply_spec(x, sr, "gaussian_noise:1", seed=1), sr)
    hard = quality_scores(x, apply_spec(x, sr, "gaussian_noise:4", seed=1), sr)
    for m in ("pesq", "stoi", "dnsmos_ovrl", "dnsmos_bak"):
        assert clean[m] > mild[m] > hard[m], (m, clean[m], mild[m], hard[m])
    assert 1.0 <= hard["dnsmos_ovrl"] <= 5.0


def test_intrusive_scores_skip_duration_changes(speech):
    x, sr = speech
    s = quality_scores(x, apply_spec(x, sr, "tempo_up:2"), sr)
    assert s["pesq"] is None and s["stoi"] is None and s["dnsmos_ovrl"] is not None


def test_quality_is_cached_by_content(tmp_path, monkeypatch, speech):
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    x, sr = speech
    sf.write(tmp_path / "a.wav", x, sr, subtype="PCM_16")
    sf.write(tmp_path / "b.wav", apply_spec(x, sr, "gsm"), sr, subtype="PCM_16")
    first = cached_quality(tmp_path / "a.wav", tmp_path / "b.wav")
    files = list((tmp_path / "cache" / "perturb" / "quality").rglob("*.json"))
    assert len(files) == 1
    assert cached_quality(tmp_path / "a.wav", tmp_path / "b.wav") == first
    assert np.isfinite(first["pesq"]) and first["pesq"] < 4.0
