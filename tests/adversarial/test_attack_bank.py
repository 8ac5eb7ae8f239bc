"""`pgd` and `universal` in the bank: specs, derived datasets, identity, cache, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
import yaml

from asrbench.adversarial.pgd import SNR_TOL, snr_db
from asrbench.dataset import load_dataset
from asrbench.identity import hash_file
from asrbench.perturb import apply_spec, parse_spec
from asrbench.perturb.derive import _keyed, _step_identities, derive_dataset
from asrbench.perturb.dsp import PerturbError
from asrbench.perturb.registry import SpecError
from asrbench.settings import REPO_ROOT

UTT = "LJ001-0002"
SPEC = "pgd:snr=30,steps=1"


def test_attack_specs_severities_and_errors() -> None:
    for name in ("pgd", "universal"):
        for sev, snr in zip((1, 2, 3, 4), (40.0, 30.0, 20.0, 10.0), strict=True):
            (step,) = parse_spec(f"{name}:{sev}")
            assert step.perturbation.family == "attack"
            assert step.params["snr"] == snr and step.params["target"] == "whisper_tiny_en"
    (step,) = parse_spec("pgd:snr=30,target=whisper_base,steps=5,restarts=2")
    assert (step.params["steps"], step.params["restarts"]) == (5, 2)
    with pytest.raises(SpecError, match="no white-box port; use one of whisper_base"):
        parse_spec("pgd:2,target=pocketsphinx_en")
    with pytest.raises(SpecError, match="steps=0 is outside"):
        parse_spec("pgd:2,steps=0")


def test_an_attack_needs_the_reference_text() -> None:
    with pytest.raises(PerturbError, match="reference text.*ops/perturb -d DATASET"):
        apply_spec(np.zeros(1600), 16000, "pgd:1", utt_id="u1")


def test_an_utterance_without_text_is_refused_by_name(tmp_path, monkeypatch) -> None:
    """ls_gender is reference-free: an attack there would push the target off silence."""
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    for spec in ("pgd:snr=30,steps=1", "universal:snr=30,epochs=1"):
        with pytest.raises(PerturbError, match="utterance 367-130732-0000 has none"):
            derive_dataset(
                REPO_ROOT / "datasets" / "ls_gender",
                spec,
                out=tmp_path / "o",
                utt_ids=["367-130732-0000"],
            )


def _wav(root, utt: str) -> np.ndarray:
    ds = load_dataset(root)
    (u,) = [u for u in ds.utterances if u.id == utt]
    return sf.read(str(ds.audio_path(u)), dtype="float64")[0]


def test_derived_pgd_dataset_is_on_budget_cached_and_deterministic(
    tmp_path, monkeypatch, mini_en
) -> None:
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    r = derive_dataset(mini_en, SPEC, seed=0, out=tmp_path / "a", utt_ids=[UTT])
    assert r.n_utts == 1 and r.cached == 0
    assert 30.0 <= snr_db(_wav(mini_en, UTT), _wav(r.path, UTT)) <= 30.0 + SNR_TOL
    prov = yaml.safe_load((r.path / "dataset.yaml").read_text())["derived_from"]
    (dep,) = prov["depends"]  # the target's weights and code are in the provenance
    assert dep["target"]["model"] == "whisper_tiny_en" and dep["target"]["weights_sha256"]
    first = hash_file(r.path / "audio" / f"{UTT}.wav")
    # Rerun: served from the cache, same bytes.
    again = derive_dataset(mini_en, SPEC, seed=0, out=tmp_path / "b", utt_ids=[UTT])
    assert again.cached == 1 and hash_file(again.path / "audio" / f"{UTT}.wav") == first
    # A fresh cache recomputes the attack: the same bytes (deterministic torch, seeded start).
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache2"))
    fresh = derive_dataset(mini_en, SPEC, seed=0, out=tmp_path / "c", utt_ids=[UTT])
    assert fresh.cached == 0 and hash_file(fresh.path / "audio" / f"{UTT}.wav") == first


def test_identity_moves_with_target_weights_parameters_and_seed(monkeypatch) -> None:
    from asrbench.perturb.adversarial import cached_target
    from asrbench.perturb.bank import perturb_key

    def key(spec: str, seed: int = 0) -> str:
        return perturb_key("sha", _keyed(spec), seed, "u", "a")

    base = key(SPEC)
    assert key(SPEC) == base
    assert key(SPEC, seed=1) != base
    assert key("pgd:snr=30,steps=2") != base
    target = cached_target("whisper_tiny_en")
    monkeypatch.setattr(target, "weights_sha256", {"model.bin": "0" * 64})
    assert key(SPEC) != base  # other weights: another identity
    assert _step_identities("gaussian_noise:2") == []  # nothing added for other perturbations
