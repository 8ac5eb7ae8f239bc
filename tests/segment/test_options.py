"""Every segmenter option checked by name, type and range before anything runs (issue 38, item 7).

`--segment-opt method=nosuch` used to run webrtcvad and record `method: nosuch` in run.json;
`--segment-opt window_s=inf` failed as "segment nan-nan: times must be finite", naming no
option. Both now stop at the declared table of options (`asrbench/segmentation/records.py`), one
line naming the option and what it takes, exit 2, before any model runs. The CLI runs for
real (`ops/benchmark` in-process) with the packageless fake model and the local runner.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from asrbench.benchmark.pieces import SegmentRequest, plan_segmentation
from asrbench.resolve import resolve_dataset
from asrbench.segmentation import Segmentation, SegmentationError, VadParams, WindowParams
from tests.benchmark.conftest import make_fake_model


@pytest.mark.parametrize(
    ("mode", "option", "value"),
    [
        ("vad", "method", "nosuch"),
        ("vad", "method", "windows"),
        ("vad", "threshold", math.nan),
        ("vad", "threshold", "high"),
        ("vad", "threshold", True),
        ("vad", "min_silence_s", math.inf),
        ("vad", "min_speech_s", -1.0),
        ("vad", "pad_s", math.nan),
        ("vad", "max_segment_s", math.inf),
        ("vad", "aggressiveness", 1.5),
        ("vad", "aggressiveness", True),
        ("vad", "aggressiveness", 4),
        ("windows", "window_s", math.inf),
        ("windows", "window_s", math.nan),
        ("windows", "window_s", "30s"),
        ("windows", "overlap_s", math.inf),
        ("windows", "overlap_s", 40.0),
    ],
)
def test_a_bad_option_value_is_refused_naming_it(mode: str, option: str, value: object) -> None:
    ds = resolve_dataset("mini_long_en")
    request = SegmentRequest(mode, {option: value})
    with pytest.raises(SegmentationError) as info:
        plan_segmentation(ds, ds.utterances, 20, request)
    message = str(info.value)
    assert message.startswith(f"--segment-opt {option}={value!r}: must be "), message
    assert "nan-nan" not in message and "\n" not in message


def test_good_options_still_pass_and_numbers_are_one_type() -> None:
    ds = resolve_dataset("mini_long_en")
    opts = {"method": "webrtc", "aggressiveness": 2, "threshold": 1, "max_segment_s": 15}
    plan = plan_segmentation(ds, ds.utterances, 20, SegmentRequest("vad", opts))
    assert plan is not None
    params = plan.segmentation.params
    assert isinstance(params, VadParams) and params.method == "webrtc"
    assert params.threshold == 1.0 and isinstance(params.threshold, float)
    assert params.aggressiveness == 2 and isinstance(params.aggressiveness, int)
    assert params.max_segment_s == 15.0
    windows = plan_segmentation(
        ds, ds.utterances, None, SegmentRequest("windows", {"window_s": 20})
    )
    assert windows is not None and windows.segmentation.params == WindowParams(20.0, 5.0)


def test_a_record_with_an_unknown_method_is_not_read_as_another_detector() -> None:
    record = Segmentation(VadParams(method="webrtc"), model="webrtcvad", rate=16000).to_dict()
    with pytest.raises(SegmentationError, match="method='nosuch': must be silero or webrtc"):
        Segmentation.from_dict({**record, "method": "nosuch"})
    with pytest.raises(SegmentationError, match="window_s=inf"):
        WindowParams(window_s=math.inf)


@pytest.mark.parametrize(
    ("segment", "option", "named"),
    [
        ("vad", "method=nosuch", "--segment-opt method='nosuch': must be silero or webrtc"),
        ("windows", "window_s=0", "--segment-opt window_s=0: must be finite seconds > 0"),
        # nan and infinity are refused where KEY=VALUE options are read, as for --score-opt
        ("windows", "window_s=inf", "--segment-opt window_s=inf: not a finite number"),
    ],
)
def test_ops_benchmark_refuses_a_bad_segment_option_before_anything_runs(
    cli, tmp_path: Path, segment: str, option: str, named: str
) -> None:
    model = make_fake_model(tmp_path / "models", "fake_segment")
    code, out, err = cli(
        "benchmark", "-m", model, "-d", "mini_long_en", "--runner", "local",
        "--segment", segment, "--segment-opt", option, "--no-progress",
        "--results", tmp_path / "results", "--cache", tmp_path / "hyps",
    )  # fmt: skip
    assert code == 2, (out, err)
    assert named in err and len(err.strip().splitlines()) == 1, err
    assert not list((tmp_path / "results").rglob("run.json"))  # no cell, no provenance
