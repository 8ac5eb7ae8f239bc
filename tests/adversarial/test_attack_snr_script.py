"""benchmarks/attack_snr.py: the SNR of every written file, measured against its clean parent."""

from __future__ import annotations

import importlib.util

import pytest

from asrbench.settings import REPO_ROOT

UTTS = ["LJ001-0002", "cmu_arctic_us_axb_a0005"]


@pytest.fixture(scope="module")
def attack_snr():
    spec = importlib.util.spec_from_file_location(
        "attack_snr", REPO_ROOT / "benchmarks" / "attack_snr.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_selected_file_is_measured_against_its_budget(
    attack_snr, tmp_path, monkeypatch, mini_en
) -> None:
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    head, *rows = attack_snr.measure(str(mini_en), "gaussian_noise:snr=20", per_utt=True, utts=UTTS)
    assert head["n_parent"] == head["n_written"] == head["n_changed"] == 2
    assert [r["utt"] for r in rows] == UTTS
    assert all(abs(r["snr_db"] - 20.0) <= 0.1 for r in rows) and head["within_tol"]
    assert head["budget_db"] == 20.0 and head["min_db"] <= head["mean_db"] <= head["max_db"]
    # A tolerance tighter than the writer holds is reported, not hidden.
    (tight,) = attack_snr.measure(str(mini_en), "gaussian_noise:snr=20", tol=1e-9, utts=UTTS)
    assert not tight["within_tol"] and tight["max_abs_error_db"] > 1e-9


def test_a_spec_without_one_snr_is_refused(attack_snr, tmp_path, monkeypatch, mini_en) -> None:
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SystemExit, match="snr"):
        attack_snr.measure(str(mini_en), "gsm", utts=UTTS)
