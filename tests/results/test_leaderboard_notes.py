"""`ops/leaderboard` says what it knows (issue 39, item 9).

A results tree is written with the platform's own writer (`write_summary`) and per-utterance
records, as `ops/benchmark` leaves it, without running a model: on `d1`, `close_a` (10.0 %)
and `close_b` (10.33 %) differ on two utterances of 60, which the paired bootstrap cannot tell
apart, and `far` (40 %) is worse everywhere. The printed leaderboard starts with the table,
puts each TER's 95 % CI beside it, ties the two close models in the mean rank (by TER alone
they are 1st and 2nd), and the benchmark's one-line report names its error count.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.benchmark.run import CellResult
from asrbench.cli import main
from asrbench.results import leaderboard
from asrbench.results.layout import Placement
from asrbench.results.summary import Selection, Summary, write_summary
from scoring.metrics import CI_METHOD, Interval, Metrics

N_UTTS, N_REF = 60, 10


def _summary(model: str, ds: str, errs: list[int], ci: tuple[float, float]) -> Summary:
    n_ref = N_REF * len(errs)
    m = Metrics(
        unit="word",
        n_utts=len(errs),
        n_ref=n_ref,
        n_hyp=n_ref,
        cor=n_ref - sum(errs),
        sub=sum(errs),
        ins=0,
        dele=0,
        n_err_utts=sum(e > 0 for e in errs),
        mter_den=n_ref,
        n_missing=0,
        n_empty_ref=0,
        ter_ci=Interval(ci[0], ci[1], 0.01, 0.95, 1000),
        ci_method=CI_METHOD,
    )
    return Summary(
        producer="benchmark",
        result_key=f"sha256:{model}{ds}",
        metrics=m,
        selection=Selection(len(errs), len(errs), "sha256:all"),
        scorer={"config_hash": "sha256:s"},
        model=model,
        dataset=ds,
        dataset_hash="sha256:d",
    )


def _put(root: Path, model: str, ds: str, errs: list[int], ci: tuple[float, float]) -> None:
    cell = root / model / ds
    write_summary(cell / "summary.json", _summary(model, ds, errs, ci))
    (cell / "utterances.jsonl").write_text(
        "".join(
            json.dumps({"id": f"u{i}", "ops": [], "sub": e, "ins": 0, "del": 0, "n_ref": N_REF})
            + "\n"
            for i, e in enumerate(errs)
        )
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = [1] * N_UTTS  # one error in ten words: 10 %
    close = list(base)
    close[0] = close[1] = 2  # 62 errors in 600 words: 10.33 %
    _put(tmp_path, "close_a", "d1", base, (0.081, 0.119))
    _put(tmp_path, "close_b", "d1", close, (0.085, 0.125))
    _put(tmp_path, "far", "d1", [4] * N_UTTS, (0.38, 0.42))
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["leaderboard", *args]) == 0
    return capsys.readouterr().out


def _row(text: str, model: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| {model} |"))
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_the_table_comes_first_with_cis_beside_ter(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run(capsys, "--results", str(root))
    lines = out.splitlines()
    # a one-line heading, then the table; before this issue a 1,900-character paragraph
    assert lines[0] == "### Accuracy: TER % [95 % CI] (rank)" and lines[1] == ""
    assert lines[2] == "| model | d1 | mean rank |"
    assert out.index("Notes:") > out.index("| far |")
    assert max(len(ln) for ln in lines[:8]) < 120
    assert _row(out, "close_a")[1] == "10.00 [8.1, 11.9] (1-2)"
    assert _row(out, "far")[1] == "40.00 [38.0, 42.0] (3)"


def test_models_the_tests_cannot_tell_apart_tie_in_the_mean_rank(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board = leaderboard.build(root)
    cells = board["cells"]
    assert (cells["close_a"]["d1"]["rank"], cells["close_b"]["d1"]["rank"]) == (1, 2)
    assert cells["close_a"]["d1"]["group"] == cells["close_b"]["d1"]["group"] == "1-2"
    assert board["mean_rank"] == {"close_a": 1.0, "close_b": 1.0, "far": 3.0}
    out = _run(capsys, "--results", str(root))
    assert _row(out, "close_a")[-1] == _row(out, "close_b")[-1] == "1 (tie)"
    assert _row(out, "far")[-1] == "3"
    # rows best first, then by name
    order = [ln.split("|")[1].strip() for ln in out.splitlines() if ln.startswith("| ")]
    assert order[:4] == ["model", "close_a", "close_b", "far"]
    # the JSON says which tests it rests on
    stored = json.loads((root / "leaderboard.json").read_text())
    assert stored["format"] == "asrbench-leaderboard-v6"
    assert stored["significance"] == {"reps": 1000, "level": 0.95}
    # without tests the ranks are by TER alone, and the note says so
    out = _run(capsys, "--results", str(root), "--reps", "0")
    assert [_row(out, m)[-1] for m in ("close_a", "close_b", "far")] == ["1", "2", "3"]
    assert "(tie)" not in out and "--reps 0" in out


def test_accuracy_long_form_and_latency_are_tables_of_their_own(root: Path) -> None:
    _put(root, "close_a", "long_set", [3] * 4, (0.2, 0.4))
    board = leaderboard.build(root, reps=0)
    board["cells"]["close_a"]["long_set"]["longform"] = True  # as a long-form dataset's cell
    text = leaderboard.to_markdown(board)
    accuracy = text[: text.index("### Long-form")]
    assert "long_set" not in accuracy.split("Notes:")[0]
    assert "| model | d1 | mean rank |" in accuracy
    long = text[text.index("### Long-form") : text.index("Notes:")]
    assert "| model | long_set |" in long and "[session; whole]" in long
    csv = leaderboard.to_csv(board).splitlines()
    assert csv[0].endswith(
        "d1 TER% low,d1 TER% high,long_set TER% low,long_set TER% high,"
        "d1 rank range,long_set rank range"
    )


def test_the_benchmark_line_names_the_error_count(root: Path) -> None:
    summary = _summary("close_b", "d1", [1] * 59 + [4], (0.1, 0.12))
    line = CellResult(summary, Placement(root / "close_b" / "d1", "reported"), 60, True, 1, 1)
    assert "WER 10.50% (63 errors in 600 words, coverage 1.0" in line.line()
