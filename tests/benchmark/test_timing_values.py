"""Issue 30, low items: a model's NaN or negative timing never reaches RTF or summary.json;
negative, zero or NaN timeouts are refused before anything runs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.benchmark.conftest import make_program_model

BAD_TIMING = textwrap.dedent(r'''
    """Test model: transcribes every utterance; its timing lines are NaN, inf or negative for
    the first three, and cost.tsv says NaN for the first."""
    import sys
    from pathlib import Path

    wav_list, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    bad = ["nan", "inf", "-2.5"]
    with open(out / "hyp.tsv", "a") as hyp, open(out / "timing.tsv", "a") as timing, \
         open(out / "cost.tsv", "a") as cost:
        for n, line in enumerate(l for l in wav_list.read_text().splitlines() if l):
            uid = line.partition("\t")[0]
            hyp.write(f"{uid}\tin being comparatively modern\n")
            timing.write(f"{uid}\t{bad[n] if n < len(bad) else '0.5'}\t1.000\n")
            cost.write(f"{uid}\t{'nan' if n == 0 else '0.001'}\n")
''')


def _model(root: Path) -> Path:
    return make_program_model(root, "fake_bad_timing", BAD_TIMING)


def _strict(text: str) -> object:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in summary.json")

    return json.loads(text, parse_constant=refuse)


def test_nan_or_negative_timing_is_a_contract_error_not_an_rtf(tmp_path: Path) -> None:
    from asrbench.benchmark import JobSpec, run_benchmark

    s = run_benchmark(
        _model(tmp_path / "models"),
        "mini_en",
        JobSpec(
            runner="local",
            results_root=tmp_path / "r",
            cache_root=tmp_path / "c",
            progress=False,
            max_utts=6,
            scorer_options={"nsw": False},
        ),
    )
    summary = _strict((s.out_dir / "summary.json").read_text())
    timing = summary["timing"]
    assert timing["n_timed"] == 3 and timing["processing_s"] == 1.5
    assert timing["rtf"] is not None and timing["rtf"] > 0
    assert summary["cost"]["n_costed"] == 5 and summary["cost"]["usd"] == 0.005
    run = json.loads((s.out_dir / "run.json").read_text())
    problems = " ".join(run["contract_problems"])
    for value in ("'nan'", "'inf'", "'-2.5'"):
        assert f"processing time {value} is not a finite non-negative number" in problems
    assert "cost 'nan' is not a finite non-negative number" in problems


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--timeout", "-5"),
        ("--timeout", "nan"),
        ("--timeout", "0"),
        ("--timeout", "inf"),
        ("--utt-timeout", "-1"),
        ("--utt-timeout", "nan"),
        ("--utt-timeout", "0"),
    ],
)
def test_a_timeout_that_is_not_a_positive_number_is_refused(
    tmp_path: Path, cli, flag: str, value: str
) -> None:
    code, out, err = cli(
        "benchmark",
        "-m",
        _model(tmp_path / "models"),
        "-d",
        "mini_en",
        "--runner",
        "local",
        "--results",
        tmp_path / "r",
        "--cache",
        tmp_path / "c",
        "--no-progress",
        "--max-utts",
        "1",
        flag,
        value,
    )
    assert code == 2, err
    assert f"{flag} {value}" in err and ("seconds above 0" in err or "finite" in err), err
    assert not (tmp_path / "r").exists() and not (tmp_path / "c").exists()


def test_a_request_file_timeout_is_checked_too(tmp_path: Path, cli) -> None:
    req = tmp_path / "req.yaml"
    req.write_text(
        f"models: [{_model(tmp_path / 'models')}]\ndatasets: [mini_en]\n"
        "options: {runner: local, timeout_s: -1}\n"
    )
    code, out, err = cli(
        "benchmark",
        "--request",
        req,
        "--results",
        tmp_path / "r",
        "--cache",
        tmp_path / "c",
        "--no-progress",
    )
    assert code == 2 and "timeout_s -1" in err, err


def test_run_benchmark_refuses_a_nan_utterance_timeout(tmp_path: Path) -> None:
    from asrbench.benchmark import JobSpec, run_benchmark
    from asrbench.errors import InputError

    with pytest.raises(InputError, match="utt_timeout_s nan"):
        run_benchmark(
            _model(tmp_path / "models"),
            "mini_en",
            JobSpec(
                runner="local",
                results_root=tmp_path / "r",
                cache_root=tmp_path / "c",
                progress=False,
                utt_timeout_s=float("nan"),
            ),
        )
