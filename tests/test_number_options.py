"""Issue 38, item 9: `ops/score --metric tcpwer --collar inf` (or `1e308`) was accepted.

`--collar` was declared a text option and read with `float()` later, so the house rule that
refuses nan and infinity in every float option (`asrbench.cli._house_rules`, tested by
`tests/test_help.py`, which walks the options annotated `float`) never saw it. It is a
float option now, with a documented range (0 to `scoring.meeting.MAX_COLLAR`, a day). So that
no number escapes that way again, this walks every option of every command: an option holding a
number must be typed as one, unless it is listed below as a text that also takes other forms,
and those refuse nan and infinity too. Numbers given as `KEY=VALUE` (`--score-opt`,
`--segment-opt`) are refused the same way.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from asrbench.cli import main
from scoring.meeting import MAX_COLLAR
from tests.test_help import COMMAND_PATHS, FLOAT_OPTIONS

# Options whose text is a number or something else: `3` or `2%` (`asrbench.cli.benchmark._budget`).
TEXT_NUMBER_OPTIONS = {("benchmark", "--max-failed"), ("stream", "--max-failed")}


def _annotation(param) -> object:
    return getattr(getattr(param, "type_descriptor", None), "annotation", None)


def _reads_as_number(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        float(value.rstrip("%"))
    except ValueError:
        return False
    return True


def test_every_option_holding_a_number_is_typed_as_one() -> None:
    text_numbers = {
        (" ".join(path), max(p.opts, key=len))
        for path, cmd in COMMAND_PATHS
        for p in cmd.params
        if p.opts and _annotation(p) is str and _reads_as_number(p.default)
    }
    # `--collar` was here (a text "5"): its nan, inf and 1e308 reached the scorer
    assert text_numbers == TEXT_NUMBER_OPTIONS
    assert (["score"], "--collar") in FLOAT_OPTIONS  # so test_help's nan/inf walk covers it


@pytest.mark.parametrize(("command", "option"), sorted(TEXT_NUMBER_OPTIONS))
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "nan%", "inf%", "1e308%"])
def test_text_number_options_refuse_nan_and_infinity(
    command: str, option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--as-alias", f"ops/{command}", command, "-m", "no_such_model", "-d", "mini_en"]
    code = main([*argv, option, value])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.splitlines() == [err] and err.startswith(f"error: {option} {value!r}")


def _timed(tmp_path: Path) -> tuple[Path, Path]:
    ref, hyp = tmp_path / "ref.stm", tmp_path / "hyp.stm"
    ref.write_text("s1 1 A 0.0 2.0 hello world\n")
    hyp.write_text("s1 1 A 0.0 2.0 hello world\n")
    return ref, hyp


@pytest.mark.parametrize("value", ["inf", "1e308", str(MAX_COLLAR * 2), "-1", "nan"])
def test_collar_outside_its_range_is_refused(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref, hyp = _timed(tmp_path)
    out = tmp_path / "out"
    args = [str(ref), str(hyp), "-o", str(out), "--metric", "tcpwer", "--no-nsw"]
    code = main(["--as-alias", "ops/score", "score", *args, "--collar", value])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.splitlines() == [err] and err.startswith(f"error: --collar {float(value):g}")
    assert ("finite" in err) if not math.isfinite(float(value)) else ("86400" in err)
    assert not out.exists()  # refused before anything is read or written


@pytest.mark.parametrize("value", ["0", str(MAX_COLLAR)])
def test_collar_at_its_bounds_is_scored(value: str, tmp_path: Path) -> None:
    ref, hyp = _timed(tmp_path)
    out = tmp_path / "out"
    args = [str(ref), str(hyp), "-o", str(out), "--metric", "tcpwer", "--no-nsw"]
    assert main(["--as-alias", "ops/score", "score", *args, "--collar", value]) == 0
    assert (out / "summary.json").is_file()


def test_the_library_refuses_an_absurd_collar_too() -> None:
    from scoring import Scorer, ScorerConfig
    from scoring.errors import ScoringError
    from scoring.meeting import score_sessions

    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    for collar in (math.inf, 1e308, math.nan, -1.0):
        with pytest.raises(ScoringError, match="collar"):
            score_sessions(scorer, [], [], "tcpwer", collar=collar)


@pytest.mark.parametrize("option", ["--score-opt", "--segment-opt"])
@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity"])
def test_key_value_numbers_refuse_nan_and_infinity(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--as-alias", "ops/benchmark", "benchmark", "-m", "no_such_model"]
    # a float option of each (the scorer's options are checked by name, then by type)
    code = main([*argv, option, f"confidence={value}"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.splitlines() == [err]
    assert err.startswith(f"error: {option} confidence={float(value)}")
