"""Issue 30 item 2: every utterance of the selection ends with a hypothesis or a failure reason,
even when a program crashes half way through every shard it is given, round after round."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.benchmark.conftest import make_program_model

HALF_PROGRAM = textwrap.dedent(r'''
    """Test model: transcribes the first half of its wav list (rounded down), then exits 3."""
    import sys
    from pathlib import Path

    wav_list, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    lines = [ln for ln in wav_list.read_text().splitlines() if ln]
    with open(out / "hyp.tsv", "a") as hyp, open(out / "timing.tsv", "a") as timing:
        for line in lines[: len(lines) // 2]:
            uid = line.partition("\t")[0]
            hyp.write(f"{uid}\tin being comparatively modern\n")
            timing.write(f"{uid}\t0.0100\t1.000\n")
    print(f"half: wrote {len(lines) // 2} of {len(lines)}, crashing", file=sys.stderr)
    sys.exit(3)
''')


def make_half_model(root: Path, model_id: str = "fake_half") -> Path:
    return make_program_model(root, model_id, HALF_PROGRAM)


def test_half_crashing_program_leaves_no_utterance_unaccounted(tmp_path: Path, cli) -> None:
    folder = make_half_model(tmp_path / "models")
    results, cache = tmp_path / "r", tmp_path / "c"
    code, out, err = cli(
        "benchmark",
        "-m",
        folder,
        "-d",
        "mini_en",
        "--runner",
        "local",
        "--results",
        results,
        "--cache",
        cache,
        "--no-progress",
        "-j",
        "3",
        "--max-utts",
        "16",
        "--score-opt",
        "nsw=false",
        "--max-failed",
        "3",
    )
    cells = list((results / "fake_half").glob("mini_en*/summary.json"))
    assert len(cells) == 1, (code, err)
    cell = cells[0].parent
    summary = json.loads((cell / "summary.json").read_text())
    rows = [json.loads(x) for x in (cell / "utterances.jsonl").read_text().splitlines()]
    assert len(rows) == 16
    unaccounted = [r["id"] for r in rows if r.get("hyp") is None and not r.get("failed")]
    assert unaccounted == []
    failed_ids = {r["id"] for r in rows if r.get("failed")}
    hyp_ids = {r["id"] for r in rows if r.get("hyp") is not None}
    assert not failed_ids & hyp_ids and len(failed_ids | hyp_ids) == 16
    assert summary["n_failed"] == len(failed_ids) == len(summary["failed"])
    assert {f["id"] for f in summary["failed"]} == failed_ids
    assert all(f["reason"] for f in summary["failed"])
    tsv = [ln.split("\t") for ln in (cell / "failed.tsv").read_text().splitlines()]
    assert {t[0] for t in tsv} == failed_ids and all(t[1] for t in tsv)
    assert summary["metrics"]["n_missing"] == len(failed_ids)
    # the program crashes on every shard it is given: more than 3 utterances end failed, so
    # the budget of 3 is exceeded and the command says so with exit status 1
    assert len(failed_ids) > 3
    assert code == 1, err
    assert f"{len(failed_ids)} of 16 utterance(s) failed" in err


def test_an_unaccounted_utterance_stops_before_scoring_as_an_internal_error() -> None:
    import pytest

    from asrbench.benchmark.output import Records
    from asrbench.benchmark.run import _check_accounted
    from asrbench.dataset import Utterance
    from asrbench.errors import EXIT_FAILED, InternalError, exit_code_for

    utts = [Utterance(id=i, audio=f"audio/{i}.wav", text="x", duration=1.0) for i in "abc"]
    _check_accounted("m x d", utts, Records(hyp={"a": "x"}, failed={"b": "why", "c": "why"}))
    with pytest.raises(InternalError, match=r"1 utterance\(s\) without .* \(c\)") as exc:
        _check_accounted("m x d", utts, Records(hyp={"a": "x"}, failed={"b": "why"}))
    assert exit_code_for(exc.value) == EXIT_FAILED and "internal error" in str(exc.value)
