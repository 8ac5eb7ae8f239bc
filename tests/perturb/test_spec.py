"""Spec parsing, validation errors and composition."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from asrbench.perturb import SpecError, all_perturbations, apply_spec, canonical_spec, parse_spec
from asrbench.perturb.spec import spec_slug
from asrbench.settings import REPO_ROOT


def test_severity_and_params_resolve():
    (step,) = parse_spec("gaussian_noise:3")
    assert step.params == {"snr": 10.0}
    (step,) = parse_spec("echo:delay=250")
    assert step.params == {"delay": 250.0}
    (step,) = parse_spec("crosstalk:2,talkers=3")
    assert step.params == {"snr": 20.0, "talkers": 3}
    steps = parse_spec("aurora:set=A,noise=babble,snr=10 + gsm")
    assert [s.name for s in steps] == ["aurora", "gsm"]
    assert steps[0].params == {"set": "A", "noise": "babble", "snr": 10.0}


def test_canonical_form_is_stable():
    assert canonical_spec("echo:delay=250.0") == canonical_spec("echo:delay=250")
    assert canonical_spec("aurora:snr=5,noise=car,set=A") == "aurora:noise=car,set=A,snr=5"
    assert "/" not in spec_slug("env_noise:2,src=/data/musan")


@pytest.mark.parametrize(
    "spec,needle",
    [
        ("nosuch:1", "available: "),
        ("gaussian_noise:9", "out of range; use 1..4"),
        ("gaussian_noise:snr=loud", "is not a number"),
        ("gaussian_noise:db=3", "parameters: snr"),
        ("gaussian_noise", "give a severity 1..4 or snr"),
        ("aurora:set=Z,noise=car,snr=5", "not one of A, B, C"),
        ("gsm:2", "has no severities"),
        ("echo:x", "neither a severity"),
        ("", "empty perturbation spec"),
    ],
)
def test_bad_specs_say_what_exists(spec, needle):
    with pytest.raises(SpecError) as err:
        parse_spec(spec)
    assert needle in str(err.value)
    if needle == "available: ":
        for name in ("gaussian_noise", "aurora", "rir", "mp3", "freq_scale"):
            assert name in str(err.value)


def test_cli_bad_spec_exits_with_clear_error():
    proc = subprocess.run(
        [str(REPO_ROOT / "ops" / "perturb"), "-d", "mini_en", "-p", "reverbb:2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "unknown perturbation 'reverbb'" in proc.stderr and "rir" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_every_perturbation_runs_on_real_audio(speech, ds, utts):
    """Each registered perturbation changes real audio, keeps it finite and in range."""
    from asrbench.perturb.noise import Context

    x, sr = speech
    x = x[: sr * 2]
    for name, p in all_perturbations().items():
        if p.family == "attack":  # optimised against a model: tests/adversarial/ runs them
            continue
        spec = name
        if name == "aurora":
            spec = "aurora:set=C,noise=street,snr=10"
        elif p.severities:
            spec = f"{name}:{max(p.severities)}"
        y = apply_spec(x, sr, spec, seed=1, utt_id=utts[2].id, ctx=Context(ds, utts[2]))
        assert np.all(np.isfinite(y)) and np.max(np.abs(y)) <= 1.0 + 1e-9, spec
        if p.keeps_length:
            assert len(y) == len(x), spec
        if name != "clean":
            assert len(y) != len(x) or not np.allclose(y, x), f"{spec} left the audio unchanged"


def test_composition_applies_in_order(speech):
    x, sr = speech
    a = apply_spec(x, sr, "gain:factor=0.5+clipping:level=0.1")
    b = apply_spec(x, sr, "clipping:level=0.1+gain:factor=0.5")
    assert np.max(np.abs(a)) == pytest.approx(0.1)
    assert np.max(np.abs(b)) == pytest.approx(0.05)
