"""Capacity: N = 1 and 2 simultaneous PocketSphinx streams (local runner, two mini_en
utterances at 4x), the capacity.json it stores and the criterion applied to its own figures.

Whether N=2 is sustained depends on this machine's load, so the test checks that the verdict
follows from the recorded figures, not what the verdict is."""

from __future__ import annotations

import pytest

from asrbench.errors import InputError
from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.streaming import capacity
from asrbench.streaming.feed import FedUtterance
from asrbench.streaming.framing import Event
from asrbench.streaming.record import read_capacity
from asrbench.streaming.run import StreamSpec

pytest.importorskip("pocketsphinx")


def test_levels_double_up_to_the_limit():
    assert capacity.levels(1) == [1]
    assert capacity.levels(8) == [1, 2, 4, 8]
    assert capacity.levels(6) == [1, 2, 4, 6]
    with pytest.raises(InputError):
        capacity.levels(0)


def test_the_criterion_names_each_reason():
    def fig(p90, backlog, failed=0):
        return {"failed": failed, "eos_final_s": {"p90": p90}, "growth": {"p50": backlog}}

    crit = capacity.Criterion(factor=1.5, growth=0.1)
    base = fig(1.0, 0.01)
    assert capacity.judge(base, None, crit) == []
    assert capacity.judge(fig(1.5, 0.1), base, crit) == []  # both bounds inclusive
    (why,) = capacity.judge(fig(1.6, 0.1), base, crit)
    assert "1.5 x N=1's" in why
    assert len(capacity.judge(fig(2.0, 0.7, failed=1), base, crit)) == 3


def test_backlog_growth_is_the_slope_of_backlog_over_the_audio():
    def fed(delays):  # a partial per 100-ms chunk, received `delay` after that chunk's send
        sends = [10.0 + 0.1 * (k + 1) for k in range(len(delays))]
        events = [
            Event("partial", "u", "x", 0.1 * (k + 1), None, 0.0, sends[k] + d)
            for k, d in enumerate(delays)
        ]
        return FedUtterance("u", 0.1 * len(delays), 0.1, 10.0, sends, [0.0] * len(sends), events)

    assert capacity.growth(fed([0.3] * 10)) == pytest.approx(0.0, abs=1e-9)  # slow, steady
    # falling behind by 0.05 s per 100-ms chunk: 0.5 s per second of audio
    assert capacity.growth(fed([0.05 * k for k in range(10)])) == pytest.approx(0.5)
    assert capacity.growth(fed([0.1, 0.2])) is None
    levels = [
        {"n": 1, "sustained": True},
        {"n": 2, "sustained": False},
        {"n": 4, "sustained": True},
    ]
    assert capacity.sustained_up_to(levels) == 1


def test_two_simultaneous_pocketsphinx_streams(tmp_path):
    spec = StreamSpec("local", 100, 4.0, 2, 0, tmp_path, 200)
    model, ds = resolve_model("pocketsphinx_en"), resolve_dataset("mini_en")
    folder, rec = capacity.capacity(model, ds, spec, capacity.Probe(2, until_fail=False))
    assert folder.name.endswith("-capacity") and folder.parent.name == "pocketsphinx_en"
    assert read_capacity(folder / "capacity.json") == rec
    assert rec.tried == [1, 2] and [lv["n"] for lv in rec.levels] == [1, 2]
    one, two = rec.levels
    assert one["utterances"] == 2 and two["utterances"] == 4  # every stream fed both
    assert one["failed"] == two["failed"] == 0
    for lv in rec.levels:
        # the verdict is the criterion applied to the figures recorded beside it
        assert lv["not_sustained"] == capacity.judge(lv, one, capacity.Criterion())
        assert lv["sustained"] == (not lv["not_sustained"])
        e = lv["eos_final_s"]
        assert e["n"] == lv["utterances"] and e["min"] <= e["p90"] <= e["max"]
        assert lv["pacing"]["lateness_s"]["n"] > 0 and lv["backlog_s"]["n"] > 0
        assert lv["growth"]["n"] <= lv["utterances"]
        assert lv["cores_per_stream"] > 0  # the local programs' own CPU was counted
    assert rec.capacity == capacity.sustained_up_to(rec.levels)
    assert sorted((folder).glob("stream-2-*.log")) != []  # one program log per stream
    text = capacity.describe(folder, rec)
    assert f"capacity: {rec.capacity} simultaneous" in text
