"""Issue 30 item 7: redaction never changes a score. A secret too weak to be one is refused
before anything runs (named, never shown); a hypothesis that holds a declared secret's value
is scored as written and flagged, while logs and the console never show the value."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.benchmark.conftest import make_program_model

TOKEN = "zq9X-ever-token-4471"  # a credential-like value the model also says as a "word"

PROGRAM = textwrap.dedent(r'''
    """Test model: says TOKEN in its first hypothesis and prints its key to its log."""
    import os, sys
    from pathlib import Path

    wav_list, out = Path(sys.argv[1]), Path(sys.argv[2])
    print("fake: using key", os.environ.get("FAKE_API_KEY"), file=sys.stderr)
    lines = [ln for ln in wav_list.read_text().splitlines() if ln]
    with open(out / "hyp.tsv", "a") as hyp:
        for n, line in enumerate(lines):
            uid = line.partition("\t")[0]
            extra = " TOKEN" if n == 0 else ""
            hyp.write(f"{uid}\tin being{extra} comparatively modern ever\n")
''').replace("TOKEN", TOKEN)


def _model(root: Path) -> Path:
    return make_program_model(
        root, "fake_secret", PROGRAM, "secrets: [FAKE_API_KEY]\nnetwork: true\n"
    )


def _bench(cli, tmp_path: Path, *models: str | Path) -> tuple[int, str, str]:
    """`ops/benchmark` of `models` on two mini_en utterances, local runner, folders in tmp."""
    flags = [f for m in models for f in ("-m", m)]
    return cli(
        "benchmark", *flags, "-d", "mini_en", "--runner", "local", "--results", tmp_path / "r",
        "--cache", tmp_path / "c", "--no-progress", "--max-utts", "2",
    )  # fmt: skip


@pytest.mark.parametrize("value", ["ever", "abcabcab", "aaaaaaaaaaaa"])
def test_a_secret_too_weak_to_be_one_is_refused_by_name(
    tmp_path: Path, cli, monkeypatch, value: str
) -> None:
    monkeypatch.setenv("FAKE_API_KEY", value)
    code, out, err = _bench(cli, tmp_path, _model(tmp_path / "models"))
    assert code == 2, err
    line = [ln for ln in err.splitlines() if ln.startswith("error:")][0]
    assert "FAKE_API_KEY" in line and "too weak" in line and value not in line
    assert not list((tmp_path / "r").rglob("summary.json"))
    assert not (tmp_path / "c").exists() or not list((tmp_path / "c").rglob("hyp.tsv"))


def test_a_hypothesis_holding_a_secret_is_scored_as_written_and_flagged(
    tmp_path: Path, monkeypatch, capfd
) -> None:
    from asrbench.benchmark import JobSpec, run_benchmark

    folder = _model(tmp_path / "models")
    kw = dict(runner="local", progress=False, max_utts=4, scorer_options={"nsw": False})
    monkeypatch.delenv("FAKE_API_KEY", raising=False)
    plain = run_benchmark(
        folder, "mini_en", JobSpec(results_root=tmp_path / "r0", cache_root=tmp_path / "c0", **kw)
    )
    monkeypatch.setenv("FAKE_API_KEY", TOKEN)
    capfd.readouterr()
    s = run_benchmark(
        folder, "mini_en", JobSpec(results_root=tmp_path / "r1", cache_root=tmp_path / "c1", **kw)
    )
    console = capfd.readouterr()
    # the score is that of the unaltered transcripts
    assert s.metrics.errors == plain.metrics.errors and s.metrics.ter == plain.metrics.ter
    assert (s.out_dir / "hyp.raw.tsv").read_bytes() == (plain.out_dir / "hyp.raw.tsv").read_bytes()
    assert TOKEN in (s.out_dir / "hyp.raw.tsv").read_text()
    # the utterance is flagged, the cell counts it
    rows = [json.loads(x) for x in (s.out_dir / "utterances.jsonl").read_text().splitlines()]
    flagged = [r for r in rows if r.get("secret_in_hyp")]
    assert len(flagged) == 1 and flagged[0]["secret_in_hyp"] == ["FAKE_API_KEY"]
    assert TOKEN in flagged[0]["hyp"]
    summary = json.loads((s.out_dir / "summary.json").read_text())
    assert summary["n_secret_in_hyp"] == 1
    assert "n_secret_in_hyp" not in json.loads((plain.out_dir / "summary.json").read_text())
    # the console names the secret and the utterance, never the value; the logs are redacted
    assert TOKEN not in console.out + console.err
    assert "FAKE_API_KEY" in console.err and flagged[0]["id"] in console.err
    logs = list((s.out_dir / "logs").glob("*.log"))
    assert logs and all(TOKEN not in p.read_text() for p in logs)
    assert any("[REDACTED:FAKE_API_KEY]" in p.read_text() for p in logs)


def test_a_weak_secret_of_a_later_model_stops_the_matrix_before_any_cell_runs(
    tmp_path: Path, cli, monkeypatch
) -> None:
    """`preflight` checks every model's secrets once, before the first cell: the matrix's first
    (healthy) model does not run only for the second to be refused."""
    monkeypatch.setenv("FAKE_API_KEY", "ever")
    code, _, err = _bench(cli, tmp_path, "pocketsphinx_en", _model(tmp_path / "models"))
    assert code == 2, err
    assert "FAKE_API_KEY" in err and "too weak" in err
    assert not list((tmp_path / "r").rglob("summary.json"))
    assert not (tmp_path / "c").exists() or not list((tmp_path / "c").rglob("hyp.tsv"))
