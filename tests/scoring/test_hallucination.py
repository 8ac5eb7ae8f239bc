"""Hallucination and dropped-audio checks (scoring/hallucination.py) on hand-made cases whose
figures are worked out below each one."""

from __future__ import annotations

import json

import pytest

from scoring import Scorer, ScorerConfig
from scoring.errors import ScoringError
from scoring.hallucination import (
    ClipOutput,
    LongformSettings,
    Loop,
    clip_outputs,
    find_loops,
    most_in_a_row,
    nonspeech_figures,
    pauses,
    session_checks,
    words_of,
)
from scoring.segments import Segment, TimedWord


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    # The default pipeline (NONSPEECH, ITJ, PUNC...) without NSW, which needs a cache folder.
    return Scorer(ScorerConfig(nsw=False, bootstrap=0))


def test_markers_interjections_and_empty_outputs_are_no_words(scorer):
    hyps = {
        "music": "[Music]",
        "blank": "[BLANK_AUDIO] <unk> [SOUND] [MUSIC PLAYING]",
        "notes": "♪ ♪ uh... um",
        "paren": "(upbeat music)",  # a hypothesis's parentheses are words to the scorer too
        "thanks": "Thank you. Thank you.",
        "empty": "",
    }
    seconds = dict.fromkeys([*hyps, "none"], 10.0)  # "none": no hypothesis at all
    clips = {c.id: c.words for c in clip_outputs(hyps, seconds, {}, scorer.normalize)}
    assert clips == {
        "music": 0,
        "blank": 0,
        "notes": 0,
        "paren": 2,
        "thanks": 4,
        "empty": 0,
        "none": 0,
    }
    assert words_of("Thank you. Thank you.", scorer.normalize) == ["thank", "you"] * 2


def test_words_per_minute_and_share_by_content_group():
    # silence: three 30-s clips with 0, 0 and 6 words: 6 words / 1.5 min = 4.0 per minute,
    # 1 of 3 clips with output. noise: one 60-s clip with 3 words: 3.0 per minute, 1 of 1.
    # all: 9 words / 2.5 min = 3.6 per minute, 2 of 4 clips.
    clips = [
        ClipOutput("n1", "noise", 60.0, 3, "a b c"),
        ClipOutput("s1", "silence", 30.0, 0, ""),
        ClipOutput("s2", "silence", 30.0, 0, "[Music]"),
        ClipOutput("s3", "silence", 30.0, 6, "thank you " * 3),
    ]
    figs = nonspeech_figures(clips, reps=500)
    assert [g.group for g in figs.groups] == ["silence", "noise"]
    silence, noise = figs.groups
    assert (silence.clips, silence.words, silence.seconds) == (3, 6, 90.0)
    assert silence.words_per_min == pytest.approx(4.0)
    assert silence.share_with_output == pytest.approx(1 / 3)
    assert (silence.worst_id, silence.worst_words) == ("s3", 6)
    assert noise.words_per_min == pytest.approx(3.0)
    assert figs.overall.words_per_min == pytest.approx(3.6)
    assert (figs.overall.clips_with_output, figs.overall.share_with_output) == (2, 0.5)
    assert figs.overall.worst_id == "s3"
    low, high = figs.overall.words_per_min_ci
    # resampling clips: no replicate can beat 6 words in 0.5 min or go below 0
    assert 0.0 <= low < 3.6 < high <= 12.0
    s_low, s_high = figs.overall.share_ci
    assert 0.0 <= s_low < 0.5 < s_high <= 1.0
    out = json.loads(json.dumps(figs.to_dict()))
    assert out["format"] == "asrbench-hallucination-v1"
    assert out["groups"]["silence"]["clips"] == 3
    assert out["ci"] == {"level": 0.95, "replicates": 500, "over": "clips"}


def test_silent_model_has_a_zero_interval():
    clips = [ClipOutput(f"c{i}", "music", 20.0, 0, "") for i in range(4)]
    figs = nonspeech_figures(clips, reps=200)
    assert figs.overall.words_per_min == 0.0
    assert figs.overall.words_per_min_ci == (0.0, 0.0)
    assert figs.overall.share_ci == (0.0, 0.0)


def test_bad_clip_inputs_name_the_clip(scorer):
    with pytest.raises(ScoringError, match="stray"):
        clip_outputs({"stray": "hello"}, {"a": 10.0}, {}, scorer.normalize)
    with pytest.raises(ScoringError, match="'a'.*> 0 seconds"):
        clip_outputs({}, {"a": 0.0}, {}, scorer.normalize)


def test_loops():
    words = "i went home thank you thank you thank you thank you and so on".split()
    assert find_loops(words) == [Loop(3, 2, 4, "thank you")]
    # three in a row is speech ("no no no"): a loop must cover 6 words
    assert find_loops("no no no i said".split()) == []
    # six words: one word six times, or a 2-gram three times; the shortest n is reported
    assert find_loops("so so so so so so".split()) == [Loop(0, 1, 6, "so")]
    # a sentence looped: 4-gram x 3 = 12 words, then the text moves on
    loop = "we will be right back".split()[:4] * 3
    assert find_loops(["ok", *loop, "bye"]) == [Loop(1, 4, 3, "we will be right")]
    with pytest.raises(ScoringError):
        find_loops(words, min_repeats=1)
    # how often the reference says it in a row (a read-back is said twice by the speakers)
    ref = "say one two one two one two then one two".split()
    assert most_in_a_row(ref, ["one", "two"]) == 3
    assert most_in_a_row(ref, ["two", "one"]) == 2
    assert most_in_a_row(ref, ["three"]) == 0


def _session() -> tuple[list[Segment], list[str]]:
    """Eight back-to-back 5-s segments of five 3-letter words each: word i spans [i, i+1] s."""
    words = [f"w{i:02d}" for i in range(40)]
    segs = [
        Segment("s", "A", 5.0 * k, 5.0 * k + 5, " ".join(words[5 * k : 5 * k + 5]))
        for k in range(8)
    ]
    return segs, words


def test_dropped_fifteen_second_stretch(scorer):
    segs, words = _session()
    # The model skips segments 2-4 (words 10-24: 10 s to 25 s) and segment 6 (30-35 s, only
    # 5 s: under the 10-s threshold), and loops at the end.
    kept = words[:10] + words[25:30] + words[35:]
    hyp = " ".join(kept + ["thank", "you"] * 3)
    got = session_checks(scorer, segs, hyp)
    assert len(got.dropped) == 1
    drop = got.dropped[0]
    assert (drop.start_time, drop.end_time) == (pytest.approx(10.0), pytest.approx(25.0))
    assert drop.words == 15 and drop.text.startswith("w10 w11")
    assert got.dropped_seconds == pytest.approx(15.0)
    assert got.loops == (Loop(20, 2, 3, "thank you", ref_repeats=0),) and got.loop_words == 6
    assert (got.ref_words, got.hyp_words) == (40, 26)
    assert got.pauses is None  # text only: words in pauses cannot be placed
    # a lower threshold finds the 5-s drop too
    low = session_checks(scorer, segs, hyp, settings=LongformSettings(min_drop=4.0))
    assert [round(d.seconds, 6) for d in low.dropped] == [15.0, 5.0]
    d = got.to_dict()
    assert d["dropped_seconds"] == pytest.approx(15.0) and d["settings"]["min_drop"] == 10.0


def test_words_in_pauses_with_timed_hypothesis(scorer):
    refs = [
        Segment("p", "A", 0.0, 5.0, "the cat sat down"),
        Segment("p", "B", 8.0, 10.0, "on the mat"),
    ]
    assert pauses(refs, 1.0, duration=12.0) == [(5.0, 8.0), (10.0, 12.0)]
    hyp = [
        TimedWord("p", 0.2, 0.5, "the"),
        TimedWord("p", 1.0, 0.5, "cat"),
        TimedWord("p", 2.0, 0.5, "sat"),
        TimedWord("p", 4.9, 0.2, "down"),  # midpoint 5.0: within the collar, not in the pause
        TimedWord("p", 6.0, 0.5, "Thanks."),  # midpoint 6.25: inside the pause
        TimedWord("p", 8.1, 0.5, "on"),
        TimedWord("p", 8.7, 0.5, "the"),
        TimedWord("p", 9.3, 0.5, "mat"),
        TimedWord("p", 11.0, 0.4, "[Music]"),  # not a word
        TimedWord("p", 11.2, 0.4, "bye"),  # trailing pause
    ]
    got = session_checks(scorer, refs, hyp, duration=12.0)
    assert [(p.start_time, p.end_time, p.words, p.text) for p in got.pauses] == [
        (5.0, 8.0, 1, "thanks"),
        (10.0, 12.0, 1, "bye"),
    ]
    assert got.pause_words == 2 and got.pause_seconds == pytest.approx(5.0)
    assert got.dropped == () and got.loops == ()
    # segment times only: each word at the centre of its character share of the segment
    segs = [Segment("p", "h", 5.5, 7.5, "thank you")]  # points 6.0 and 7.0
    got = session_checks(scorer, refs, segs, duration=12.0)
    assert got.pauses[0].words == 2 and got.pauses[0].text == "thank you"


def test_loop_the_speakers_said_is_told_apart(scorer):
    # the reference chants "go team" four times; the model writes it six times
    refs = [Segment("c", "A", 0.0, 4.0, "go team " * 4 + "yes")]
    got = session_checks(scorer, refs, "go team " * 6 + "yes")
    assert got.loops == (Loop(0, 2, 6, "go team", ref_repeats=4),)


def test_session_without_reference_words_is_an_error(scorer):
    with pytest.raises(ScoringError, match="'q'.*no words"):
        session_checks(scorer, [Segment("q", "A", 0.0, 3.0, "[noise]")], "hello")
    with pytest.raises(ScoringError, match="reference segments"):
        session_checks(scorer, [], "hello")


def test_embedded_long_sessions(scorer):
    """datasets/mini_long_en: the references themselves hold no loop (digit strings repeat by
    chance, speech says "no no no": the defaults must not flag them), and a hypothesis that
    leaves out reference segments 5-7 of lj_reading is found to drop exactly their span."""
    from pathlib import Path

    from scoring.timed import read_seglst

    path = (
        Path(__file__).resolve().parents[2] / "datasets" / "mini_long_en" / "segments.seglst.json"
    )
    segs = read_seglst(path)
    sessions = sorted({s.session_id for s in segs})
    assert sessions == ["fsdd_jackson_numbers", "lj_reading"]
    for sid in sessions:
        refs = [s for s in segs if s.session_id == sid]
        own = session_checks(scorer, refs, " ".join(s.words for s in refs))
        assert (own.dropped, own.loops) == ((), ())
        assert own.ref_words == own.hyp_words > 100
    lj = sorted((s for s in segs if s.session_id == "lj_reading"), key=lambda s: s.start_time)
    gone = lj[5:8]
    assert gone[-1].end_time - gone[0].start_time >= 10.0  # the three span over 10 s
    hyp = " ".join(s.words for s in lj[:5] + lj[8:])
    got = session_checks(scorer, lj, hyp)
    assert len(got.dropped) == 1
    drop = got.dropped[0]
    assert drop.start_time == pytest.approx(gone[0].start_time)
    assert drop.end_time == pytest.approx(gone[-1].end_time)
    assert drop.words == sum(len(scorer.normalize(s.words)) for s in gone)


def test_a_nonspeech_dataset_run_records_its_figures_in_the_summary() -> None:
    # The hook ops/benchmark uses on a `nonspeech: true` dataset: the embedded clips, the
    # hypotheses a model might write (one failed clip is left out), and the Summary round trip.
    from asrbench.benchmark.output import Records
    from asrbench.benchmark.run import _hallucination
    from asrbench.dataset import load_dataset
    from asrbench.results.summary import Selection, Summary, new_summary
    from asrbench.settings import REPO_ROOT

    ds = load_dataset(REPO_ROOT / "datasets" / "nonspeech_clips")
    assert ds.nonspeech and ds.reference_free
    first, second, third = (u.id for u in ds.utterances[:3])
    rec = Records(hyp={first: "[Music]", second: "thank you for watching"}, failed={third: "x"})
    figures = _hallucination(ds, ds.utterances, rec)
    assert figures is not None
    overall = figures["overall"]
    # 4 words ("thank you for watching"; the marker is not a word) over the clips that did not fail
    seconds = sum(u.duration for u in ds.utterances if u.id != third)
    assert overall["words"] == 4 and overall["clips"] == len(ds) - 1
    assert overall["clips_with_output"] == 1
    assert overall["words_per_min"] == pytest.approx(4 / seconds * 60)
    plain = load_dataset(REPO_ROOT / "datasets" / "mini_en")
    assert _hallucination(plain, plain.utterances, Records()) is None
    ids = [u.id for u in ds.utterances]
    sel = Selection.of(ids, len(ids), None, 0)
    summary = new_summary("benchmark", None, sel, {}, hyps="h", data="d", hallucination=figures)
    again = Summary.from_dict(summary.to_dict())
    assert again.hallucination == figures and again.result_key == summary.result_key
