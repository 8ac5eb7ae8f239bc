"""Attack conditions in the robustness tables (issue 28, item 5): white-box vs transfer, the
same-SNR Gaussian noise beside every attack, WERD only, and the record/markdown round trip."""

from __future__ import annotations

import numpy as np

from asrbench.perturb.attack_table import (
    attack_rows,
    companions,
    is_attack,
    paired_difference,
    to_markdown,
)
from asrbench.perturb.robustness import tabulate
from asrbench.results.records import RobustnessRecord


def test_companions_add_noise_at_each_attack_snr_once() -> None:
    specs = ["pgd:2", "universal:snr=20,target=whisper_base", "gaussian_noise:2", "pgd:snr=30"]
    out = companions(specs)
    assert out[: len(specs)] == specs
    # pgd:2 is 30 dB (SRB severities 40/30/20/10); universal at 20 dB reuses gaussian_noise:2
    assert out[len(specs) :] == ["gaussian_noise:snr=30"]
    assert companions(["echo:2"]) == ["echo:2"]
    assert is_attack("pgd:1") and not is_attack("gaussian_noise:1")
    assert not is_attack("pgd:1+gsm")  # a composed condition is not one attack


def _counts(rng: np.random.Generator, n: int, rate: float) -> dict[str, tuple[int, int]]:
    out = {}
    for i in range(n):
        words = int(rng.integers(5, 30))
        out[f"u{i}"] = (int(rng.binomial(words, rate)), words)
    return out


def _wer(c: dict[str, tuple[int, int]]) -> float:
    return sum(e for e, _ in c.values()) / sum(n for _, n in c.values())


def test_rows_white_box_transfer_and_paired_difference() -> None:
    rng = np.random.default_rng(3)
    conds = ["pgd:2", "gaussian_noise:snr=30"]
    counts = {
        m: {
            "clean": _counts(rng, 40, 0.1),
            "pgd:2": _counts(rng, 40, r),
            conds[1]: _counts(rng, 40, 0.15),
        }
        for m, r in (("whisper_tiny_en", 0.9), ("pocketsphinx_en", 0.4))
    }
    # the same utterances and reference lengths under every condition, as in a real grid
    for m in counts:
        ref = counts[m]["clean"]
        for c in counts[m]:
            counts[m][c] = {u: (min(e, ref[u][1]), ref[u][1]) for u, (e, _) in counts[m][c].items()}
    wers = {m: {c: _wer(v) for c, v in counts[m].items()} for m in counts}
    rows = attack_rows(list(counts), conds, wers, counts, seed=0)
    assert [(r["model"], r["mode"]) for r in rows] == [
        ("whisper_tiny_en", "white-box"),
        ("pocketsphinx_en", "transfer"),
    ]
    for r in rows:
        m = r["model"]
        assert r["snr"] == 30.0 and r["n_utts"] == 40
        assert r["werd"] == wers[m]["pgd:2"] - wers[m]["clean"]
        assert r["noise_werd"] == wers[m][conds[1]] - wers[m]["clean"]
        # the paired difference of pooled counts is the difference of the two WERs
        assert np.isclose(r["attack_minus_noise"], wers[m]["pgd:2"] - wers[m][conds[1]])
        assert r["ci_low"] <= r["attack_minus_noise"] <= r["ci_high"]
    assert rows[0]["ci_low"] > 0  # 0.9 vs 0.15 over 40 utterances: clearly adversarial


def test_without_the_noise_condition_the_columns_stay_empty() -> None:
    wers = {"whisper_tiny_en": {"clean": 0.1, "pgd:1": 0.5}}
    (row,) = attack_rows(["whisper_tiny_en"], ["pgd:1"], wers, {}, seed=0)
    assert row["snr"] == 40.0 and row["noise_wer"] is None and row["ci_low"] is None
    assert "whisper_tiny_en" in to_markdown([row])


def test_paired_difference_of_identical_conditions_is_zero() -> None:
    c = _counts(np.random.default_rng(0), 25, 0.3)
    d, lo, hi, n = paired_difference(c, c)
    assert (d, lo, hi, n) == (0.0, 0.0, 0.0, 25)


def test_tabulate_keeps_attacks_out_of_mean_werd_and_nwerd() -> None:
    conds = ["pgd:2", "gaussian_noise:snr=30"]
    wers = {"m": {"clean": 0.1, "pgd:2": 0.9, "gaussian_noise:snr=30": 0.2}}
    out = tabulate(["m"], conds, wers, {}, "none", None)
    by = {r["condition"]: r for r in out["rows"]}
    assert by["pgd:2"]["attack"] and by["pgd:2"]["nwerd"] is None
    assert "attack" not in by["gaussian_noise:snr=30"]
    (s,) = out["summary"]
    assert np.isclose(s["mean_werd"], 0.1) and np.isclose(s["mean_werd_attack"], 0.8)


def test_record_round_trip_keeps_attacks() -> None:
    wers = {"m": {"clean": 0.1, "pgd:2": 0.9}}
    rows = attack_rows(["m"], ["pgd:2"], wers, {}, seed=0)
    rec = RobustnessRecord(
        dataset="mini_en",
        seed=0,
        normaliser="none",
        conditions=["pgd:2"],
        **tabulate(["m"], ["pgd:2"], wers, {}, "none", None),
        warnings=[],
        attacks=rows,
    )
    back = RobustnessRecord.from_dict(rec.to_dict())
    assert back.attacks == rows
    plain = RobustnessRecord.from_dict({**rec.to_dict(), "attacks": []})
    assert "attacks" not in plain.to_dict()
