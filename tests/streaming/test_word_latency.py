"""Per-word emission latency and cursor lag on a real PocketSphinx stream (local runner, three
mini_en utterances at 4x) with the real forced alignment: what must hold of the recorded
events, checked against events.jsonl, not numbers echoed back."""

from __future__ import annotations

import json

import pytest

from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.scorers import get_scorer
from asrbench.streaming import match, metrics
from asrbench.streaming.record import read_stream
from asrbench.streaming.run import StreamSpec, describe, stream_cell

pytest.importorskip("pocketsphinx")


@pytest.fixture(scope="module")
def cell(tmp_path_factory):
    spec = StreamSpec("local", 100, 4.0, 3, 0, tmp_path_factory.mktemp("results"), 200)
    res = stream_cell(resolve_model("pocketsphinx_en"), resolve_dataset("mini_en"), spec)
    events = {
        (u := json.loads(line))["id"]: u
        for line in (res.folder / "events.jsonl").read_text().splitlines()
    }
    return res, events


def _send_of(utt: dict, audio_s: float) -> float:
    k = max(0, -(-round(audio_s / utt["chunk_s"], 9) // 1) - 1)  # chunk holding audio_s
    return utt["sends"][min(int(k), len(utt["sends"]) - 1)]


def test_every_reference_word_is_timed_never_right_or_unplaced(cell):
    res, _ = cell
    ds, scorer = resolve_dataset("mini_en"), get_scorer("en")
    refs = {u.id: u.text for u in ds.utterances}
    assert res.record.n_failed == 0
    for row in res.record.utterances:
        tokens = scorer.normalize(refs[row["id"]])
        assert row["words_ref"] == len(tokens)
        timed, never, unplaced = (
            len(row["word_latency_s"]),
            row["words_never_emitted"],
            row["words_unplaced"],
        )
        assert timed + never + unplaced == len(tokens)
    assert sum(len(r["word_latency_s"]) for r in res.record.utterances) > 0


def test_each_word_latency_is_a_real_receipt_of_a_hypothesis_holding_the_word(cell):
    res, events = cell
    scorer = get_scorer("en")
    for row in res.record.utterances:
        utt = events[row["id"]]
        hyps = [e for e in utt["events"] if e["type"] in ("partial", "final")]
        for lat in row["word_latency_s"]:
            # some hypothesis was received exactly `lat` after the send of some chunk
            assert any(abs(e["mono_recv"] - s - lat) < 1e-9 for e in hyps for s in utt["sends"]), (
                row["id"]
            )
        # no word is emitted later than the final that holds it
        final = hyps[-1]
        assert all(lat <= final["mono_recv"] - utt["sends"][0] for lat in row["word_latency_s"])
        # every placed word the final got right was emitted (by the final at the latest)
        ref = next(u.text for u in resolve_dataset("mini_en").utterances if u.id == row["id"])
        (scored,) = scorer.utterances({"u": ref}, {"u": final["text"]})
        right_in_final = len(match.correct_indices(scored.codes))
        assert len(row["word_latency_s"]) >= right_in_final - row["words_unplaced"]


def test_cursor_lags_are_bounded_by_the_audio_each_hypothesis_had(cell):
    res, events = cell
    for row in res.record.utterances:
        utt = events[row["id"]]
        partials = [e for e in utt["events"] if e["type"] == "partial"]
        assert len(row["cursor_lag_s"]) + row["cursor_lag_skipped"] == len(partials)
        # a lag is the cursor minus a word end inside the audio: at most the cursor, at
        # least the cursor minus the whole audio
        assert all(-utt["audio_s"] <= x <= utt["audio_s"] for x in row["cursor_lag_s"])
        assert sum(row["cursor_lag_weight_s"]) <= utt["audio_s"] + 1e-9
        final = row["cursor_lag_final_s"]  # None: the final got no placed word right
        assert final is None or 0 <= final <= utt["audio_s"]


def test_pooled_word_figures_are_ordered_and_stored(cell):
    res, _ = cell
    record = read_stream(res.folder / "stream.json")
    p = record.pooled
    for key in ("word_latency_s", "cursor_lag_interim_s", "cursor_lag_final_s"):
        s = p[key]
        assert s["min"] <= s["p50"] <= s["p90"] <= s["p99"] <= s["max"], key
        assert s["midpoint"] == pytest.approx((s["min"] + s["max"]) / 2)
        assert s["min"] <= s["weighted_mean"] <= s["max"]
    w = p["word_latency_s"]
    assert w["n"] == sum(len(r["word_latency_s"]) for r in record.utterances)
    assert w["mean_ci"]["low"] <= w["mean"] <= w["mean_ci"]["high"]
    text = describe(res)
    assert "word emission latency" in text and "cursor lag, interim" in text
    assert any("forced alignment" in n for n in record.notes)
    assert metrics.RefTiming([0.5], [frozenset({0})]).eos == 0.5
