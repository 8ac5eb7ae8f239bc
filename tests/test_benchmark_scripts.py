"""Every script under benchmarks/ still imports and parses its options against today's library
(a renamed module or function breaks a benchmark silently otherwise: nothing else runs them)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from asrbench.settings import REPO_ROOT

SCRIPTS = sorted((REPO_ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_benchmark_script_starts(script) -> None:
    proc = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout
