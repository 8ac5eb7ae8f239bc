"""Reference word times by forced alignment (PocketSphinx), on mini_en's real audio.

The times are checked against an independent measure, the speech's end by energy alone, and
for what holds of any alignment (inside the audio, in order); the agreement is printed
(`pytest -s`) for docs/STREAMING.md.
"""

from __future__ import annotations

import statistics

import pytest

from asrbench.resolve import resolve_dataset
from asrbench.scorers import get_scorer
from asrbench.streaming import align

pytest.importorskip("pocketsphinx")


@pytest.fixture(scope="module")
def mini_en():
    return resolve_dataset("mini_en")


@pytest.fixture(scope="module")
def scorer():
    return get_scorer("en")


@pytest.fixture(scope="module")
def aligned(mini_en, scorer, tmp_path_factory):
    root = tmp_path_factory.mktemp("cache")
    times = align.word_times(mini_en, mini_en.utterances, scorer.normalize, {"c": 1}, root)
    return root, times


def test_every_placed_word_lies_inside_its_audio_in_reference_order(mini_en, scorer, aligned):
    _, times = aligned
    assert set(times) == {u.id for u in mini_en.utterances}
    for u in mini_en.utterances:
        wt = times[u.id]
        assert wt.words == scorer.normalize(u.text)  # the scorer's tokens, one time each
        pcm, rate = align.read_pcm16(mini_en.audio_path(u))
        duration = len(pcm) / 2 / rate
        placed = [(s, e) for s, e in zip(wt.starts, wt.ends, strict=True) if e is not None]
        assert all(0 <= s < e <= duration for s, e in placed), u.id
        assert [s for s, _ in placed] == sorted(s for s, _ in placed), u.id
        assert (wt.unplaced > 0) == (wt.why is not None), u.id


def test_words_missing_from_the_dictionary_are_unplaced_and_counted(aligned):
    _, times = aligned
    checker = align.Aligner()
    oov = [
        (uid, w)
        for uid, wt in times.items()
        for w, e in zip(wt.words, wt.ends, strict=True)
        if checker.decoder.lookup_word(w) is None
    ]
    assert oov  # mini_en has proper names CMUdict lacks ("schoeffer", "subiaco")
    for uid, w in oov:
        wt = times[uid]
        assert wt.ends[wt.words.index(w)] is None and "dictionary" in (wt.why or "")
    total = sum(wt.unplaced for wt in times.values())
    assert len(oov) <= total < 0.05 * sum(len(wt.words) for wt in times.values())


def test_alignment_agrees_with_the_end_of_speech_by_energy(mini_en, aligned):
    _, times = aligned
    gaps = []
    for u in mini_en.utterances:
        pcm, rate = align.read_pcm16(mini_en.audio_path(u))
        bounds = align.energy_bounds(pcm, rate)
        assert bounds is not None
        wt = times[u.id]
        if wt.ends and wt.ends[-1] is not None:
            gaps.append(abs(wt.ends[-1] - bounds[1]))
    gaps.sort()
    median, p80 = statistics.median(gaps), gaps[int(0.8 * len(gaps))]
    print(f"\n|aligned end - energy end| over {len(gaps)} utterances: median {median:.3f} s, "
          f"p80 {p80:.3f} s, max {gaps[-1]:.3f} s")  # fmt: skip
    assert median < 0.2 and p80 < 0.35


def test_the_cache_is_reused_and_keyed_by_the_scorer(mini_en, scorer, aligned):
    root, times = aligned
    path = align.cache_path(root, mini_en, {"c": 1})
    stamp = path.stat().st_mtime_ns
    again = align.word_times(mini_en, mini_en.utterances[:3], scorer.normalize, {"c": 1}, root)
    assert path.stat().st_mtime_ns == stamp  # nothing missing: read, not rewritten
    assert again == {u.id: times[u.id] for u in mini_en.utterances[:3]}
    assert align.cache_path(root, mini_en, {"c": 2}) != path
    path.write_text("{not json")  # a damaged cache is rebuilt, not trusted
    one = align.word_times(mini_en, mini_en.utterances[:1], scorer.normalize, {"c": 1}, root)
    assert one[mini_en.utterances[0].id] == times[mini_en.utterances[0].id]


def test_a_text_the_aligner_cannot_place_at_all():
    wt = align.Aligner().align("u", ["zzyzxq", "qwvvx"], b"\x00\x00" * 16000)
    assert wt.unplaced == 2 and wt.ends == [None, None] and wt.why


def test_other_languages_get_no_word_times(scorer, tmp_path):
    fr = resolve_dataset("mini_fr")
    assert align.word_times(fr, fr.utterances, scorer.normalize, {}, tmp_path) == {}
