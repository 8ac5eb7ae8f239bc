"""Segmentation of long audio (asrbench/segmentation/) on real speech joined into a long recording.

The recording: real LibriSpeech utterances from datasets/ls_gender and datasets/mini_en, in
order, separated by pauses of 0.8 to 2.5 s of low room tone (seeded), so where every
utterance starts and ends in the recording is known exactly. VAD spans are checked against
those joins, windows against the file's length, cut files against the recording's samples,
and the merge rules against the transcript they must rebuild.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from asrbench.segmentation import (
    Segmentation,
    SegmentationError,
    Span,
    VadParams,
    WindowParams,
    cut_spans,
    merge_texts,
    merge_words,
    segment_vad,
    segment_windows,
    window_spans,
)
from asrbench.segmentation import frames as frames_mod
from asrbench.segmentation.merge import Word
from asrbench.segmentation.stream import blocks
from asrbench.segmentation.vad import spans as vad_spans
from asrbench.settings import REPO_ROOT

RATE = 16000
# The tolerance on the known joins: a span may start before its utterance (or end after it)
# by the padding plus one frame (silero) or four (webrtcvad, whose decisions trail the end of
# speech by up to 90 ms here), never more; and must find at least half of each utterance
# (LibriSpeech utterances keep up to a few tenths of a second of silence at each end).
PAD = 0.1
TOL = {"silero": PAD + 0.032, "webrtc": PAD + 0.12}
MIN_FOUND = 0.5


def _utterance_files() -> list[Path]:
    ls = sorted((REPO_ROOT / "datasets" / "ls_gender" / "audio").glob("*.wav"))
    mini = sorted((REPO_ROOT / "datasets" / "mini_en" / "audio").glob("*.wav"))
    return ls[:30] + [p for p in mini if not p.name.startswith("LJ")][:6]


def build_recording(path: Path, files: list[Path], seed: int = 7) -> list[tuple[float, float]]:
    """Join real utterances with pauses of room tone; return each utterance's (start, end)."""
    rng = np.random.default_rng(seed)
    parts: list[np.ndarray] = []
    joins: list[tuple[float, float]] = []
    pos = 0
    for f in files:
        audio, rate = sf.read(str(f), dtype="float32")
        assert rate == RATE
        pause = rng.normal(0.0, 1e-3, int(rng.uniform(0.8, 2.5) * RATE)).astype(np.float32)
        joins.append((pos / RATE, (pos + len(audio)) / RATE))
        parts += [audio, pause]
        pos += len(audio) + len(pause)
    sf.write(str(path), np.concatenate(parts), RATE, subtype="PCM_16")
    return joins


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> tuple[Path, list[tuple[float, float]]]:
    path = tmp_path_factory.mktemp("longform") / "session.wav"
    return path, build_recording(path, _utterance_files())


@pytest.fixture(scope="module")
def silero_scores(recording) -> frames_mod.FrameScores:
    """Silero's frame scores of the whole recording, computed once (the rules are pure)."""
    return frames_mod.silero_scores(blocks(recording[0], RATE))


def _check_against_joins(spans: list[Span], joins: list[tuple[float, float]], tol: float) -> None:
    starts = [a for a, _ in joins]
    for span in spans:
        k = int(np.searchsorted(starts, span.start + tol, side="right")) - 1
        a, b = joins[max(k, 0)]
        # inside one utterance (within the tolerance): no span bridges a pause between two
        assert a - tol <= span.start and span.end <= b + tol, (span, (a, b))
    for a, b in joins:
        inside = sum(min(s.end, b) - max(s.start, a) for s in spans if s.end > a and s.start < b)
        assert inside >= MIN_FOUND * (b - a), f"utterance {a:.2f}-{b:.2f} s: {inside:.2f} s found"


def test_recording_is_several_minutes_of_real_speech(recording) -> None:
    path, joins = recording
    assert sf.info(str(path)).duration > 180
    assert len(joins) == 36


def test_silero_spans_follow_the_known_joins(recording, silero_scores) -> None:
    path, joins = recording
    duration = sf.info(str(path)).duration
    spans = vad_spans(silero_scores, VadParams(pad_s=PAD), duration)
    _check_against_joins(spans, joins, TOL["silero"])
    assert len(spans) >= len(joins)
    assert all(b.start > a.end for a, b in zip(spans, spans[1:], strict=False))


def test_segment_vad_end_to_end_records_its_choice(recording) -> None:
    path, joins = recording
    params = VadParams(method="webrtc", pad_s=PAD)
    segs = segment_vad(path, params)
    _check_against_joins(list(segs.spans), joins, TOL["webrtc"])
    record = segs.segmentation.to_dict()
    assert record["method"] == "webrtc" and record["model"].startswith("webrtcvad-wheels ")
    assert Segmentation.from_dict(record) == segs.segmentation
    speech = sum(b - a for a, b in joins)
    assert 0.6 * speech < segs.speech_s < 1.2 * speech


def test_long_speech_is_split_within_the_limit_and_nothing_is_lost(
    recording, silero_scores
) -> None:
    duration = sf.info(str(recording[0])).duration
    whole = vad_spans(silero_scores, VadParams(min_silence_s=2.0), duration)
    assert max(s.duration for s in whole) > 12  # pauses inside utterances no longer split
    cut = vad_spans(silero_scores, VadParams(min_silence_s=2.0, max_segment_s=6), duration)
    assert max(s.duration for s in cut) <= 6
    assert len(cut) > len(whole)

    def covered(spans: list[Span]) -> float:
        return sum(s.duration for s in spans)

    assert covered(cut) == pytest.approx(covered(whole), abs=1e-9)
    # each cut falls where the detector heard less speech than at the span's median frame
    for a, b in zip(cut, cut[1:], strict=False):
        if a.end == b.start:
            frame = int(a.end / silero_scores.frame_s)
            step = silero_scores.frame_s
            inner = silero_scores.probs[int(a.start / step) : int(b.end / step)]
            assert silero_scores.probs[frame] <= np.median(inner)


def test_resampled_stereo_file_gives_the_same_spans(recording, tmp_path) -> None:
    """44.1 kHz stereo: mixed down and resampled in the stream, times in the file's seconds."""
    audio, _ = sf.read(str(recording[0]), dtype="float32", frames=40 * RATE)
    import soxr

    hi = soxr.resample(audio, RATE, 44100, quality="VHQ")
    sf.write(str(tmp_path / "hi.wav"), np.stack([hi, hi], axis=1), 44100, subtype="FLOAT")
    sf.write(str(tmp_path / "lo.wav"), audio, RATE, subtype="FLOAT")
    params = VadParams(method="webrtc", pad_s=0.0)
    hi_spans = segment_vad(tmp_path / "hi.wav", params, block_s=3.3).spans
    lo_spans = segment_vad(tmp_path / "lo.wav", params).spans
    assert len(hi_spans) == len(lo_spans) > 3
    for a, b in zip(hi_spans, lo_spans, strict=True):
        assert abs(a.start - b.start) <= 0.06 and abs(a.end - b.end) <= 0.06


def test_stream_equals_reading_whole_whatever_the_block_size(recording) -> None:
    audio, _ = sf.read(str(recording[0]), dtype="float32", frames=30 * RATE)
    for block_s in (0.05, 1.0, 7.3):
        streamed = np.concatenate(list(blocks(recording[0], RATE, block_s)))
        assert np.array_equal(streamed[: len(audio)], audio)


@pytest.mark.parametrize(
    ("duration", "window", "overlap"),
    [(3600.0, 30.0, 5.0), (100.0, 30.0, 5.0), (80.0, 30.0, 5.0), (12.5, 30.0, 5.0), (61, 20, 0)],
)
def test_windows_cover_the_file_exactly_with_the_overlap(duration, window, overlap) -> None:
    spans = window_spans(duration, WindowParams(window_s=window, overlap_s=overlap))
    assert spans[0].start == 0 and spans[-1].end == duration
    assert all(s.duration <= window for s in spans)
    assert all(s.duration == window for s in spans[:-1])
    for a, b in zip(spans, spans[1:], strict=False):
        assert a.end - b.start == pytest.approx(overlap, abs=1e-9)
    assert len(spans) == max(1, int(np.ceil((duration - overlap) / (window - overlap))))


def test_cut_windows_rebuild_the_recording_sample_for_sample(recording, tmp_path) -> None:
    path = recording[0]
    segs = segment_windows(path, WindowParams(window_s=30.0, overlap_s=4.0))
    files = cut_spans(path, segs.spans, tmp_path / "cut", RATE, block_s=4.7)
    original, _ = sf.read(str(path), dtype="int16")
    rebuilt = [sf.read(str(files[0].path), dtype="int16")[0]]
    for f in files[1:]:
        rebuilt.append(sf.read(str(f.path), dtype="int16")[0][4 * RATE :])
    assert np.array_equal(np.concatenate(rebuilt), original)
    assert not list((tmp_path / "cut").glob(".*tmp*"))


def test_cut_past_the_end_names_the_file_and_leaves_no_temp(recording, tmp_path) -> None:
    path = recording[0]
    duration = sf.info(str(path)).duration
    spans = [Span(1.0, 2.0), Span(duration + 5, duration + 6)]
    with pytest.raises(SegmentationError, match=r"session\.wav: 1 span\(s\) start after"):
        cut_spans(path, spans, tmp_path, RATE)
    assert not list(tmp_path.glob(".*tmp*"))


def test_bad_audio_and_parameters_are_one_line_errors(tmp_path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio")
    with pytest.raises(SegmentationError, match="bad.wav: not a readable audio file"):
        segment_vad(bad)
    with pytest.raises(SegmentationError, match="overlap_s=30"):
        WindowParams(window_s=30, overlap_s=30)
    with pytest.raises(SegmentationError, match="threshold=0"):
        VadParams(threshold=0)


def test_card_limit_is_checked_where_the_card_enters(tmp_path) -> None:
    """`max_input_s` on the real cards, and a bad value named with its file and field."""
    from asrbench.modelcard import ModelCardError, parse_card

    models = REPO_ROOT / "models"
    assert parse_card(models / "moonshine_base_en" / "model.yaml").max_input_s == 12
    assert parse_card(models / "whisper_tiny_en" / "model.yaml").max_input_s is None
    text = (models / "pocketsphinx_en" / "model.yaml").read_text(encoding="utf-8")
    for bad, why in (("0.5", "greater than or equal to 1"), ("'20s'", "valid number")):
        card = tmp_path / "model.yaml"
        card.write_text(text.replace("max_input_s: 30", f"max_input_s: {bad}"), encoding="utf-8")
        with pytest.raises(ModelCardError, match=rf"model.yaml: field 'max_input_s': .*{why}"):
            parse_card(card)


# --- merge rules on hand-made overlapping hypotheses -------------------------------------

TRANSCRIPT = (
    "it was the best of times it was the worst of times it was the age of wisdom it was the "
    "age of foolishness it was the epoch of belief it was the epoch of incredulity it was the "
    "season of light it was the season of darkness"
).split()


def _timed_transcript() -> list[Word]:
    """One word every 0.8 s, each 0.5 s long."""
    return [Word(0.8 * i, 0.8 * i + 0.5, w) for i, w in enumerate(TRANSCRIPT)]


def _window_hypothesis(span: Span, words: list[Word]) -> list[Word]:
    """What a model hears in a window: the words wholly inside, times relative to the window,
    plus a garbled fragment of any word cut by the window's edge."""
    out = []
    for w in words:
        if span.start <= w.start_time and w.end_time <= span.end:
            out.append(Word(w.start_time - span.start, w.end_time - span.start, w.word))
        elif w.start_time < span.end and w.end_time > span.start:
            a, b = max(w.start_time, span.start), min(w.end_time, span.end)
            out.append(Word(a - span.start, b - span.start, w.word[:1] + "h"))
    return out


def test_merge_words_keeps_each_word_once_by_the_overlap_midpoint() -> None:
    words = _timed_transcript()
    spans = window_spans(words[-1].end_time, WindowParams(window_s=9.0, overlap_s=2.4))
    assert len(spans) > 3
    hyps = [_window_hypothesis(s, words) for s in spans]
    merged = merge_words(spans, hyps)
    assert [w.word for w in merged] == TRANSCRIPT
    assert [round(w.start_time, 6) for w in merged] == [round(w.start_time, 6) for w in words]


def test_merge_words_needs_one_hypothesis_per_window() -> None:
    with pytest.raises(SegmentationError, match="2 windows but 1 hypotheses"):
        merge_words([Span(0, 1), Span(0.5, 2)], [[]])


def test_merge_texts_aligns_the_overlap_and_cuts_in_its_middle() -> None:
    words = _timed_transcript()
    spans = window_spans(words[-1].end_time, WindowParams(window_s=9.0, overlap_s=2.4))
    texts = []
    for s in spans:
        hyp = [w.word for w in _window_hypothesis(s, words)]
        hyp[0] = hyp[0].capitalize() + ","  # case and punctuation differ between windows
        texts.append(" ".join(hyp))
    merged = merge_texts(spans, texts).split()
    assert [w.strip(",").lower() for w in merged] == TRANSCRIPT


def test_merge_texts_without_an_overlap_appends_everything() -> None:
    two = [Span(0, 4), Span(3, 7)]
    assert merge_texts(two, ["one two three", "four five six"]) == "one two three four five six"
    assert merge_texts(two, ["a b c d", "c d e"]) == "a b c d e"
    assert merge_texts([*two, Span(6, 9)], ["", "x y", ""]) == "x y"
    with pytest.raises(SegmentationError, match="2 windows but 1 hypotheses"):
        merge_texts(two, ["a"])


# --- memory ------------------------------------------------------------------------------


def _traced_peak(path: Path) -> tuple[int, int]:
    tracemalloc.start()
    try:
        segs = segment_vad(path, VadParams(method="webrtc", max_segment_s=10))
        return tracemalloc.get_traced_memory()[1], len(segs.spans)
    finally:
        tracemalloc.stop()


def _long_file(path: Path, minutes: int) -> None:
    """Mostly room tone, one real utterance at the start of every minute; written in blocks."""
    speech = [sf.read(str(f), dtype="float32")[0] for f in _utterance_files()[:4]]
    rng = np.random.default_rng(3)
    with sf.SoundFile(str(path), "w", RATE, 1, subtype="PCM_16") as out:
        for minute in range(minutes):
            utt = speech[minute % len(speech)]
            out.write(utt)
            out.write(rng.normal(0, 1e-3, 60 * RATE - len(utt)).astype(np.float32))


def test_a_long_file_is_segmented_in_bounded_memory(tmp_path) -> None:
    """numpy's traced peak does not grow with the recording: 20 minutes (77 MB decoded as
    float32) peak as 2 minutes do, a few blocks. The 1-hour figures (and silero's) are
    benchmarks/segment_longform.py's."""
    peaks = {}
    for minutes in (2, 20):
        _long_file(tmp_path / f"{minutes}.wav", minutes)
        peaks[minutes], n_spans = _traced_peak(tmp_path / f"{minutes}.wav")
        assert minutes <= n_spans <= 5 * minutes
    assert peaks[20] < 1.2 * peaks[2] + 1e6, peaks
    assert peaks[20] < 77e6 / 8, peaks
