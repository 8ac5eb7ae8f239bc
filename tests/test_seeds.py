"""Every seeded draw comes from `identity.derive_seed` / `seed_digest`, and gives the numbers it
gave before they were merged there: samples, perturbed audio, simulated RIRs and fairness
intervals are behind stored results and cached audio. The values were computed with the code
as it was before (five derivations in shard.py, apply.py, rooms.py, fairness/stats.py and
scoring/stats.py)."""

from __future__ import annotations

import inspect

import numpy as np

from asrbench.identity import derive_seed, seed_digest


def _draws(rng: np.random.Generator) -> list[int]:
    return rng.integers(0, 2**32, 4).tolist()


def test_a_seeded_sample_is_unchanged() -> None:
    from asrbench.dataset import Utterance, sample_utterances

    utts = [Utterance(f"utt{i:02d}", f"audio/utt{i:02d}.wav", 1.0, "x") for i in range(20)]
    ids = [u.id for u in sample_utterances(utts, 7, seed=3)]
    assert ids == ["utt00", "utt01", "utt02", "utt04", "utt08", "utt11", "utt15"]
    ids = [u.id for u in sample_utterances(utts, 5, seed=0)]
    assert ids == ["utt01", "utt06", "utt12", "utt13", "utt14"]


def test_a_perturbed_utterance_draws_the_same_numbers() -> None:
    from asrbench.perturb.apply import utterance_rng

    want = [3789770656, 691353391, 2713569894, 3666380170]
    assert _draws(utterance_rng(5, "noise(snr=10)", "utt1", 2)) == want


def test_a_simulated_rir_bin_draws_the_same_numbers() -> None:
    from asrbench.perturb import rooms

    assert "derive_seed(20260, k, sr)" in inspect.getsource(rooms.build_bin)
    want = [3531870750, 240380499, 2861144104, 808304485]
    assert _draws(np.random.default_rng(derive_seed(20260, 3, 16000))) == want


def test_a_fairness_analysis_draws_the_same_numbers() -> None:
    from asrbench.fairness.stats import rng_for

    want = [2136692348, 946956933, 4128549441, 3469483637]
    assert _draws(rng_for(7, "accuracy/boot")) == want


def test_the_scorer_bootstrap_seed_is_derive_seed_of_the_seed() -> None:
    """scoring/ imports nothing from asrbench: its default_rng(seed) is derive_seed(seed)."""
    want = [574671950, 552204816, 3423435367, 2144382090]
    assert _draws(np.random.default_rng(11)) == want
    assert _draws(np.random.default_rng(derive_seed(11))) == want


def test_derived_seeds_move_with_every_part() -> None:
    base = derive_seed(1, "a", hashed=True)
    assert len(base) == 8 and all(0 <= w < 2**32 for w in base)
    assert base != derive_seed(2, "a", hashed=True) != derive_seed(1, "b", hashed=True)
    assert derive_seed(1, "a") != derive_seed(1, "b")
    assert seed_digest(1, "ab") != seed_digest(1, "a", "b")  # parts are separated
