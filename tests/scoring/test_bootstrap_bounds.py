"""Issue 30 item 8: the bootstrap's memory is bounded, and absurd counts are refused.

`ops/score --bootstrap 1000000000` reached 14 GB within a minute (every replicate's draw counts
were held at once); `--bootstrap -5` was accepted. Replicates are now drawn in chunks (memory
O(chunk x groups) whatever the count), and a count outside 0..MAX_BOOTSTRAP is an input error
naming the limit.
"""

from __future__ import annotations

import resource
import subprocess
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from asrbench.settings import REPO_ROOT
from scoring import ScorerConfig
from scoring.errors import ScoringError

OPS_SCORE = REPO_ROOT / "ops" / "score"


def _corpus(n: int = 1000, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-utterance errors, |ref|, |hyp| with most rows distinct (hundreds of groups)."""
    rng = np.random.default_rng(seed)
    n_ref = rng.integers(5, 60, n)
    errs = rng.binomial(n_ref, 0.2)
    n_hyp = np.maximum(n_ref + rng.integers(-3, 4, n), 0)
    return errs, n_ref, n_hyp


@pytest.mark.parametrize("reps", [-5, -1, 1_000_001, 10**9, 2.5, True])
def test_scorer_config_refuses_bootstrap_counts_out_of_range(reps: object) -> None:
    with pytest.raises(ScoringError, match=r"bootstrap \(--bootstrap\).*0 .*1,000,000"):
        ScorerConfig(nsw=False, bootstrap=reps)  # type: ignore[arg-type]


def test_library_functions_refuse_counts_out_of_range() -> None:
    from scoring.stats import bootstrap_ci, bootstrap_metrics, paired_bootstrap

    errs, n_ref, n_hyp = _corpus(20)
    for call in (
        lambda r: bootstrap_metrics(errs, n_ref, n_hyp, r),
        lambda r: bootstrap_ci(errs, n_ref, r),
        lambda r: paired_bootstrap(errs, errs, n_ref, r),
    ):
        for reps in (-5, 10**9):
            with pytest.raises(ScoringError, match="1,000,000"):
                call(reps)


def test_bootstrap_memory_does_not_grow_with_the_replicates() -> None:
    # 20,000 replicates over ~900 groups: held at once, the draw counts alone are 140 MiB
    # (and the old code copied them twice more); in chunks, a few MiB whatever the count.
    from scoring.stats import bootstrap_metrics

    errs, n_ref, n_hyp = _corpus()
    tracemalloc.start()
    try:
        bootstrap_metrics(errs, n_ref, n_hyp, 20_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 48 * 2**20, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("chunk", [1, 7, 64, 299])
def test_chunking_changes_no_number_of_the_grouped_sums(chunk: int) -> None:
    from scoring.stats import _replicates

    errs, n_ref, n_hyp = _corpus(200)
    cols = np.column_stack([errs, n_ref, np.maximum(n_ref, n_hyp)]).astype(np.float64)
    whole = _replicates(cols, 300, 5)
    assert np.array_equal(_replicates(cols, 300, 5, chunk=chunk), whole)
    # With the split column: the grouped columns are still the same numbers, and the split
    # column is still a resampled sum of |hyp| (its mean near the corpus total).
    split = _replicates(cols, 300, 5, split=n_hyp, chunk=chunk)
    assert np.array_equal(split[:, :3], whole)
    assert abs(split[:, 3].mean() - n_hyp.sum()) < 4 * split[:, 3].std() / np.sqrt(300)
    # One chunk (every count up to chunk_size(G)): the unchunked stream, number for number.
    assert np.array_equal(
        _replicates(cols, 300, 5, split=n_hyp, chunk=300), _replicates(cols, 300, 5, split=n_hyp)
    )


def _tsv(path: Path, texts: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}\t{v}\n" for k, v in texts.items()), encoding="utf-8")
    return path


def _limited() -> None:
    # Before the fix a billion replicates would take the machine's memory: cap the process.
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


@pytest.mark.parametrize("value", ["-5", "1000000000", "1000001"])
def test_ops_score_refuses_bootstrap_counts_out_of_range(tmp_path: Path, value: str) -> None:
    ref = _tsv(tmp_path / "ref.tsv", {"a": "hello world", "b": "good morning"})
    hyp = _tsv(tmp_path / "hyp.tsv", {"a": "hello word", "b": "good morning"})
    proc = subprocess.run(
        [str(OPS_SCORE), str(ref), str(hyp), "-o", str(tmp_path / "out"), "--bootstrap", value],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        preexec_fn=_limited,
    )
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.strip()
    assert err.splitlines() == [err] and err.startswith("error: bootstrap (--bootstrap)")
    assert "1,000,000" in err and value in err
    assert not (tmp_path / "out" / "summary.json").exists()


def test_ops_score_paired_test_needs_replicates(tmp_path: Path) -> None:
    ref = _tsv(tmp_path / "ref.tsv", {"a": "hello world"})
    hyp = _tsv(tmp_path / "hyp.tsv", {"a": "hello word"})
    proc = subprocess.run(
        [
            str(OPS_SCORE),
            str(ref),
            str(hyp),
            "-o",
            str(tmp_path / "out"),
            "--bootstrap",
            "0",
            "--against",
            str(hyp),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert "--against" in proc.stderr and "--bootstrap" in proc.stderr
    assert "Traceback" not in proc.stderr
