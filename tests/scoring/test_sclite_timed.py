"""STM reference + CTM hypothesis (issue 25 item 4): sclite's rule for handing CTM words to
STM segments, IGNORE_TIME_SEGMENT_IN_SCORING, and the exact mode against
`sclite -r REF.stm stm -h HYP.ctm ctm` on generated recordings."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from scoring import Scorer, ScorerConfig
from scoring.errors import ScoringError
from scoring.io import timed_pair
from scoring.sclite_timed import read_stm_ctm, stm_ctm_texts
from scoring.segments import Segment, TimedWord
from tests.conftest import require
from tests.scoring.sclite import find_sclite, run_sclite_timed

WORDS = ["a", "b", "c", "d", "ab"]


def _exact(**kw: object) -> Scorer:
    return Scorer(ScorerConfig(nsw=False, itj=False, ukus=False, bootstrap=0, align="sclite", **kw))


def _segment_text(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return "IGNORE_TIME_SEGMENT_IN_SCORING"
    out = []
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        if r < 0.15:
            out.append("{ " + " / ".join(rng.choice(WORDS + ["@"]) for _ in range(2)) + " }")
        elif r < 0.25:
            out.append(f"({rng.choice(WORDS)})")
        else:
            out.append(rng.choice(WORDS))
    return " ".join(out)


def _recordings(seed: int, n_files: int) -> tuple[str, str]:
    """An STM and a CTM: per file and channel, segments of 0.5-4 s with gaps (some none) and
    speakers taking turns; hypothesis words inside segments, in gaps, before the first
    segment and after the last, some straddling a boundary."""
    rng = random.Random(seed)
    stm, ctm = [], []
    for f in range(n_files):
        for chan_stm, chan_ctm in (("1", "1"), ("a", "A")):
            t = rng.uniform(0, 2)
            ends = []
            for _ in range(rng.randint(1, 8)):
                start = t + rng.choice([0, 0, rng.uniform(0, 3)])
                end = start + rng.uniform(0.5, 4)
                stm.append(
                    f"file{f:03d} {chan_stm} s{rng.randint(1, 3)} {start:.2f} {end:.2f} "
                    f"{_segment_text(rng)}"
                )
                ends.append(end)
                t = end
            words = []
            for _ in range(rng.randint(0, 10 * len(ends))):
                start = rng.uniform(0, t + 3)
                words.append((round(start, 2), round(rng.uniform(0.05, 0.8), 2)))
            for start, dur in sorted(words):
                ctm.append(f"file{f:03d} {chan_ctm} {start:.2f} {dur:.2f} {rng.choice(WORDS)}")
    return "\n".join(stm) + "\n", "\n".join(ctm) + "\n"


def test_words_go_to_the_segment_sclite_gives_them() -> None:
    segs = [
        Segment("f", "s", 0.0, 2.0, "a b"),
        Segment("f", "s", 5.0, 7.0, "c d"),
        Segment("f", "s", 7.0, 8.0, "IGNORE_TIME_SEGMENT_IN_SCORING"),
        Segment("f", "s", 10.0, 12.0, "e"),
    ]
    words = [
        TimedWord("f", start, 0.2, w)
        for start, w in [
            (0.5, "a"),
            (1.9, "b"),
            (2.1, "x"),
            (4.5, "y"),
            (5.5, "c"),
            (7.5, "q"),
            (9.0, "z"),
            (10.5, "e"),
            (13.0, "w"),
        ]
    ]
    refs, hyps = stm_ctm_texts(segs, words)
    # b's midpoint (2.0) is not before the end (2.0): the next segment's; x, in the gap, too;
    # q in the ignored segment is dropped with it; z (a gap) and w (after the last) go to e
    assert refs == {"f-1-s-000": "a b", "f-1-s-001": "c d", "f-1-s-002": "e"}
    assert hyps == {"f-1-s-000": "a", "f-1-s-001": "b x y c", "f-1-s-002": "z e w"}


def test_exact_mode_equals_sclite_on_stm_and_ctm(tmp_path: Path) -> None:
    """60 generated recordings (two channels each, ~500 segments, alternations, optional
    words, ignored segments): every segment's C/S/D/I is sclite's."""
    require("sclite", find_sclite() is not None, "apt-get install sctk")
    stm, ctm = _recordings(11, 60)
    (tmp_path / "ref.stm").write_text(stm, encoding="utf-8")
    (tmp_path / "hyp.ctm").write_text(ctm, encoding="utf-8")
    theirs = run_sclite_timed(tmp_path / "ref.stm", tmp_path / "hyp.ctm", tmp_path / "sclite")
    refs, hyps = read_stm_ctm(tmp_path / "ref.stm", tmp_path / "hyp.ctm")
    res = _exact().score(refs, hyps)
    # ours FILE-CHANNEL-SPEAKER-NNN, sclite's SPEAKER-NNN (the same count of the speaker's)
    ours = {"-".join(u.id.split("-")[-2:]): (u.cor, u.sub, u.dele, u.ins) for u in res.utterances}
    assert len(ours) == len(res.utterances) > 300
    assert ours == theirs
    m = res.metrics
    assert [sum(v[i] for v in theirs.values()) for i in range(4)] == [m.cor, m.sub, m.dele, m.ins]


def test_ops_score_stm_ctm(tmp_path: Path) -> None:
    from tests.scoring.test_cli_score import _run

    (tmp_path / "ref.stm").write_text(
        ";; a comment\nrec 1 spk 0.0 2.0 <o,f0,male> the { cat / dog } sat\n"
        "rec 1 spk 2.0 3.0 IGNORE_TIME_SEGMENT_IN_SCORING\n",
        encoding="utf-8",
    )
    (tmp_path / "hyp.ctm").write_text(
        "rec 1 0.1 0.3 the\nrec 1 0.5 0.3 dog\nrec 1 1.0 0.3 sat;tag\nrec 1 2.5 0.2 uh\n",
        encoding="utf-8",
    )
    proc = _run(
        tmp_path / "ref.stm",
        tmp_path / "hyp.ctm",
        "-o",
        tmp_path / "out",
        "--no-nsw",
        "--bootstrap",
        "0",
        "--align",
        "sclite",
    )
    assert proc.returncode == 0, proc.stderr
    line = json.loads((tmp_path / "out" / "utterances.jsonl").read_text().splitlines()[0])
    assert (line["id"], line["cor"], line["n_ref"]) == ("rec-1-spk-000", 3, 3)
    assert "C 3  S 0  D 0  I 0" in proc.stdout  # the ignored segment's `uh` is not scored
    (tmp_path / "hyp.tsv").write_text("rec-1-spk-000\tthe cat sat\n", encoding="utf-8")
    mixed = _run(tmp_path / "ref.stm", tmp_path / "hyp.tsv", "-o", tmp_path / "o2", "--no-nsw")
    assert mixed.returncode == 2 and "--hyp-format ctm" in mixed.stderr


def test_stray_hypothesis_files_and_bad_alternations_are_named(tmp_path: Path) -> None:
    segs = [Segment("f", "s", 0.0, 2.0, "a")]
    with pytest.raises(ScoringError, match=r"h.ctm:7: 1 hypothesis word.*file 'g'"):
        stm_ctm_texts(segs, [TimedWord("g", 0.5, 0.1, "a", line=7)], "h.ctm")
    (tmp_path / "r.stm").write_text("f 1 s 0 1 a\nf 1 s 1 2 { a / }\n", encoding="utf-8")
    (tmp_path / "h.ctm").write_text("", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"r.stm:2: malformed alternation"):
        read_stm_ctm(tmp_path / "r.stm", tmp_path / "h.ctm")
    assert timed_pair("x.stm", "y.CTM", "auto", "auto")
    assert timed_pair("x.txt", "y.txt", "stm", "ctm")
    assert not timed_pair("x.trn", "y.trn", "auto", "auto")
