"""`ops/score` end to end, as a user runs it: a separate process writing the v2 summary.json."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from asrbench.results.summary import FORMAT, read_summary
from asrbench.settings import REPO_ROOT
from scoring import Scorer, ScorerConfig, read_transcripts

OPS_SCORE = REPO_ROOT / "ops" / "score"
REFS = {
    "a": "I am going to tell the storyteller",
    "b": "the colour of money",
    "c": "hello",
    "d": "",
}
HYPS = {"a": "I'm gonna tell a story-teller", "b": "the color of honey", "d": "extra words"}


def _tsv(path: Path, texts: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}\t{v}\n" for k, v in texts.items()), encoding="utf-8")
    return path


def _run(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(OPS_SCORE), *map(str, args)], capture_output=True, text=True, check=False, timeout=300
    )


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return _tsv(tmp_path / "ref.tsv", REFS), _tsv(tmp_path / "hyp.tsv", HYPS)


@pytest.mark.parametrize(
    ("reports", "written"),
    [
        (None, ["hyp.sys", "table.txt"]),  # the default: the light reports
        ("none", []),
        ("all", ["alignment.txt", "hyp.pra", "hyp.sys", "table.txt"]),
        ("pra,table", ["hyp.pra", "table.txt"]),
    ],
)
def test_ops_score_writes_summary_v2(
    files: tuple[Path, Path], tmp_path: Path, reports: str | None, written: list[str]
) -> None:
    ref, hyp = files
    out = tmp_path / "out"
    proc = _run(ref, hyp, "-o", out, *(["--reports", reports] if reports else []))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["summary.json", "utterances.jsonl", *written]
    )
    summary = read_summary(out / "summary.json")  # checks the format
    raw = json.loads((out / "summary.json").read_text())
    assert raw["format"] == FORMAT and summary.producer == "score"
    assert summary.reports == written
    assert summary.sources["ref"]["path"] == str(ref)
    assert summary.selection.n_utts == len(REFS) and not summary.selection.is_sample
    # The same numbers as the library on the same files (NSW has nothing to do here: no digits).
    expected = (
        Scorer(ScorerConfig(nsw=False)).score(read_transcripts(ref), read_transcripts(hyp)).metrics
    )
    m = summary.metrics
    assert (m.cor, m.sub, m.dele, m.ins, m.n_ref, m.n_missing) == (
        expected.cor,
        expected.sub,
        expected.dele,
        expected.ins,
        expected.n_ref,
        expected.n_missing,
    )
    assert m.ter_ci == expected.ter_ci  # same seed, same replicates
    rows = [json.loads(x) for x in (out / "utterances.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == list(REFS)
    assert rows[2]["missing"] and rows[2]["hyp"] is None
    assert f"{100 * m.ter:.2f}" in proc.stdout  # the table is printed


def test_ops_score_reruns_byte_identical(files: tuple[Path, Path], tmp_path: Path) -> None:
    ref, hyp = files
    for name in ("one", "two"):
        assert _run(ref, hyp, "-o", tmp_path / name, "--reports", "all").returncode == 0
    for path in (tmp_path / "one").iterdir():
        assert path.read_bytes() == (tmp_path / "two" / path.name).read_bytes(), path.name


def test_ops_score_bad_input_is_one_error_line(files: tuple[Path, Path], tmp_path: Path) -> None:
    ref, hyp = files
    proc = _run(ref, hyp, "-o", tmp_path / "x", "--reports", "alignment,bogus")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error:") and "bogus" in proc.stderr
    assert "Traceback" not in proc.stderr
    bad = _tsv(tmp_path / "bad.tsv", {"zzz": "not in the reference"})
    proc = _run(ref, bad, "-o", tmp_path / "y")
    assert proc.returncode == 2 and "not in the reference" in proc.stderr
    assert not (tmp_path / "y" / "summary.json").exists()


@pytest.mark.parametrize("entry", [["--as-alias", "ops/score", "score"], ["score"]])
def test_ops_score_loads_nothing_heavy(
    files: tuple[Path, Path], tmp_path: Path, entry: list[str]
) -> None:
    # Start-up is part of every `ops/score`: none of the platform's other stacks (Docker, S3,
    # audio, perturbation DSP), nor OpenFST or nemo when no hypothesis needs them, nor pydantic
    # (typer's per-option coercion, replaced for this command's plain options), nor the
    # session, diarization and entity scorers nor the NLP and STM/CTM readers when plain
    # transcripts are scored, nor the records other commands write (summary.json needs only
    # asrbench.results.record_io), nor sclite's network alignment when no text holds an
    # alternation or a fragment. `asrbench score` (the group's --help parsed first) the same.
    ref, hyp = files
    heavy = [
        "docker",
        "boto3",
        "botocore",
        "numba",
        "llvmlite",
        "soundfile",
        "soxr",
        "scipy",
        "librosa",
        "onnxruntime",
        "torch",
        "yaml",
        "rich",
        "psutil",
        "pywrapfst",
        "pynini",
        "nemo_text_processing",
        "jiwer",
        "pydantic",
        "scoring.meeting",
        "scoring.diarization",
        "scoring.entities",
        "scoring.nlp_inputs",
        "scoring.sclite_timed",
        "asrbench.results.records",
        "scoring.sclite_align",
    ]
    code = (
        "import sys\nfrom asrbench.cli import main\n"
        f"code = main({entry!r} + [{str(ref)!r}, {str(hyp)!r}, '-o', "
        f"{str(tmp_path / 'o')!r}])\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [str(REPO_ROOT / "ops" / "_py"), "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert proc.stdout.strip().splitlines()[-1] == "0 []", proc.stdout + proc.stderr


def test_ops_score_bad_option_value(files: tuple[Path, Path], tmp_path: Path) -> None:
    ref, hyp = files
    proc = _run(ref, hyp, "-o", tmp_path / "x", "--bootstrap", "many")
    assert proc.returncode == 2 and "'many' is not a valid integer" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_ops_score_process_exits_after_writing(files: tuple[Path, Path], tmp_path: Path) -> None:
    # `ops/score` ends its process without the interpreter's teardown once everything is
    # written: the outputs and the printed table are complete, the exit code 0.
    ref, hyp = files
    proc = _run(ref, hyp, "-o", tmp_path / "o", "--reports", "all", "--against", hyp)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("p = 1.0000") and "TER (WER)" in proc.stdout
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["producer"] == "score"
    assert json.loads((tmp_path / "o" / "paired_test.json").read_text())["p_value"] == 1.0
    assert len((tmp_path / "o" / "utterances.jsonl").read_text().splitlines()) == len(REFS)


def test_ops_score_runs_one_blas_thread(files: tuple[Path, Path], tmp_path: Path) -> None:
    # Scoring multiplies no floats: a process that runs only `score` starts OpenBLAS with one
    # thread (no worker busy-waiting on another core), unless the user set the variable; other
    # commands, and the CLI called inside another program, leave it alone.
    from asrbench.cli import _runs_only

    assert _runs_only(("score",), ["--as-alias", "ops/score", "score", "r", "h"])
    assert _runs_only(("score",), ["score", "--help"])
    assert not _runs_only(("score",), ["--as-alias", "ops/benchmark", "benchmark", "score"])
    assert not _runs_only(("score",), ["benchmark"]) and not _runs_only(("score",), [])
    ref, hyp = files
    code = (
        "import os, sys\nfrom asrbench.cli import main\n"
        f"sys.argv = ['asrbench', 'score', {str(ref)!r}, {str(hyp)!r}, '-o', "
        f"{str(tmp_path / 'o')!r}]\n"
        "code = main()\n"
        "print(code, os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))\n"
    )
    for preset, expected in ((None, "0 1 1"), ("2", "0 2 ")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if preset is not None:
            env["OPENBLAS_NUM_THREADS"] = preset
        proc = subprocess.run(
            [str(REPO_ROOT / "ops" / "_py"), "-c", code],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
            env=env,
        )
        assert proc.stdout.strip().splitlines()[-1].startswith(expected), proc.stdout


def test_ops_score_keeps_dae_rules_compiled(files: tuple[Path, Path], tmp_path: Path) -> None:
    # The first `ops/score` of a configuration compiles DAE's rules and keeps them in
    # <cache>/dae (asrbench.scorers); the next one reads them back (the file is not written
    # again) and writes the same outputs.
    from tests.conftest import own_cache

    ref, hyp = files
    env = dict(os.environ, ASRBENCH_CACHE=str(own_cache(tmp_path / "cache")))
    outputs = []
    for run in ("first", "again"):
        proc = subprocess.run(
            [str(OPS_SCORE), str(ref), str(hyp), "-o", str(tmp_path / run)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        (kept,) = (tmp_path / "cache" / "dae").iterdir()
        outputs.append((kept.stat().st_mtime_ns, (tmp_path / run / "utterances.jsonl").read_text()))
    assert outputs[0] == outputs[1]
    lines = [json.loads(line) for line in outputs[1][1].splitlines()]
    assert [u["alternatives"] != [] for u in lines] == [True, False, False, False]  # DAE ran


def test_language_options_reach_the_scorer_and_its_identity(tmp_path: Path) -> None:
    # Spanish with accent-only and compound differences (NSW off: no grammar build in CI).
    # Hand count: ref "número de extensión a la vez" (6 words), hyp "numero de extension a
    # lavez": default keeps accents -> 2 substitutions, and the compound "lavez" = "la vez"
    # (COMPOUNDS, on by default for es) -> 0 more: 2/6. --diacritics strip -> 0/6;
    # --no-compounds -> "lavez" is 1 substitution + 1 deletion: 4/6 with accents kept.
    ref = _tsv(tmp_path / "ref.tsv", {"u1": "Número de extensión a la vez"})
    hyp = _tsv(tmp_path / "hyp.tsv", {"u1": "numero de extension a lavez"})
    results = {}
    for name, extra in (
        ("default", []),
        ("strip", ["--diacritics", "strip"]),
        ("split", ["--no-compounds"]),
    ):
        proc = _run(ref, hyp, "--lang", "es", "--no-nsw", "-o", tmp_path / name, *extra)
        assert proc.returncode == 0, proc.stderr
        summary = read_summary(tmp_path / name / "summary.json")
        results[name] = (summary.metrics.errors, summary.metrics.n_ref, summary.scorer["options"])
    assert results["default"][:2] == (2, 6)
    assert results["strip"][:2] == (0, 6) and results["strip"][2]["diacritics"] == "strip"
    assert results["split"][:2] == (4, 6) and results["split"][2]["compounds"] is False
    assert "diacritics" not in results["default"][2]
    bad = _run(ref, hyp, "--lang", "english", "-o", tmp_path / "bad")
    assert bad.returncode == 2 and "english" in bad.stderr and "Traceback" not in bad.stderr
