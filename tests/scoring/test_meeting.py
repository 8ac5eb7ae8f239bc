"""Session scoring (scoring/meeting.py): session WER, cpWER, tcpWER, their errors for bad input,
the aligners they use (bit-parallel distance, time-constrained DP, the band of long pairs) and
`ops/score --metric` end to end."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest

from asrbench.longform.segments import write_timed
from asrbench.results.summary import read_summary
from asrbench.settings import REPO_ROOT
from scoring import Scorer, ScorerConfig, align
from scoring.align import align_batch, align_timed, levenshtein
from scoring.errors import ScoringError
from scoring.meeting import character_based, score_sessions, sessions_table
from scoring.segments import Segment
from tests.scoring.test_core import _reference_alignment


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    return Scorer(ScorerConfig(nsw=False, bootstrap=200))


def seg(sid: str, spk: str, start: float, end: float, words: str, line: int = 0) -> Segment:
    return Segment(sid, spk, start, end, words, line=line)


# Two reference speakers; the system swapped their labels and made one error each.
REF = [
    seg("s1", "A", 0.0, 2.0, "good morning everyone"),
    seg("s1", "B", 1.5, 3.0, "hello there"),
    seg("s1", "A", 3.0, 5.0, "let us begin the meeting"),
]
HYP = [
    seg("s1", "spk2", 0.1, 2.0, "good mourning everyone too"),  # 1 sub + 1 ins
    seg("s1", "spk1", 1.6, 3.0, "hello"),  # 1 del
    seg("s1", "spk2", 3.0, 5.0, "let us begin the meeting"),
]


def test_cpwer_pairs_speakers_by_fewest_errors(scorer) -> None:
    res = score_sessions(scorer, REF, HYP, "cpwer")
    (s,) = res.sessions
    assert dict(s.assignment) == {"A": "spk2", "B": "spk1"}
    assert (s.n_ref, s.sub, s.dele, s.ins, s.errors) == (10, 1, 1, 1, 3)
    assert res.metrics.ter == pytest.approx(0.3)
    assert res.metrics.n_utts == 1  # a session counts once


def test_unpaired_speakers_count_every_word(scorer) -> None:
    # a missed reference speaker: all deletions; an extra hypothesis speaker: all insertions
    missed = score_sessions(scorer, REF, [h for h in HYP if h.speaker == "spk2"], "cpwer")
    s = missed.sessions[0]
    assert (s.dele, s.missed_speakers, s.errors) == (2, 1, 4)  # B's 2 words, A's 2 errors
    extra = [*HYP, seg("s1", "spk3", 6.0, 7.0, "thank you all")]
    s = score_sessions(scorer, REF, extra, "cpwer").sessions[0]
    assert (s.ins, s.falarm_speakers, s.errors) == (4, 1, 6)
    assert (None, "spk3") in s.assignment


def test_tcpwer_collar(scorer) -> None:
    # the right words, 20 s late: cpWER counts them correct, tcpWER (collar 5 s) cannot
    # pair them (deleted and inserted), a 30 s collar can
    late = [seg("s1", "x", 20.0, 22.0, "good morning everyone")]
    ref = [seg("s1", "A", 0.0, 2.0, "good morning everyone")]
    assert score_sessions(scorer, ref, late, "cpwer").sessions[0].errors == 0
    tight = score_sessions(scorer, ref, late, "tcpwer", collar=5.0)
    assert (tight.sessions[0].dele, tight.sessions[0].ins) == (3, 3)
    assert tight.collar == 5.0 and tight.describe()["collar"] == 5.0
    assert score_sessions(scorer, ref, late, "tcpwer", collar=30.0).sessions[0].errors == 0


def test_session_wer_ignores_speakers_and_uses_dae(scorer) -> None:
    # one long utterance of the Scorer: speakers ignored, DAE applies (gonna = going to)
    ref = [seg("s1", "A", 0.0, 2.0, "we are going to start"), seg("s1", "B", 2.0, 3.0, "ok")]
    hyp = [seg("s1", "z", 0.0, 3.0, "we are gonna start okay")]
    res = score_sessions(scorer, ref, hyp, "wer")
    want = scorer.score({"u": "we are going to start ok"}, {"u": "we are gonna start okay"})
    assert res.sessions[0].errors == want.metrics.errors
    assert res.metrics.ter == want.metrics.ter


def test_intervals_resample_sessions(scorer) -> None:
    # 4 sessions with rates 0, 0, 0.5, 1: the interval's ends are session-level rates
    refs, hyps = [], []
    for i, hyp in enumerate(["a b", "a b", "a x", "x y"]):
        refs.append(seg(f"s{i}", "A", 0, 1, "a b"))
        hyps.append(seg(f"s{i}", "h", 0, 1, hyp))
    res = score_sessions(scorer, refs, hyps, "cpwer")
    ci = res.metrics.ter_ci
    assert res.metrics.n_utts == 4 and ci is not None
    assert "sessions" in (res.metrics.ci_method or "")
    assert 0 <= ci.low < res.metrics.ter < ci.high <= 1


@pytest.mark.parametrize(
    ("hyps", "message"),
    [
        ([seg("s9", "h", 0, 1, "a", line=4)], "hyp.json:4: session 's9' is not in the reference"),
        ([seg("s1", "", 0, 1, "a", line=2)], "hyp.json:2: session 's1' has a hypothesis segment"),
        (
            [seg("s1", f"h{i}", i, i + 1, "a", line=i + 1) for i in range(21)],
            "hyp.json:21: session 's1' has more than 20",
        ),
    ],
)
def test_bad_hypothesis_names_file_and_line(scorer, hyps, message: str) -> None:
    with pytest.raises(ScoringError, match=message.replace("(", r"\(")):
        score_sessions(scorer, REF, hyps, "cpwer", sources=("ref", "hyp.json"))


def test_session_without_reference_words(scorer) -> None:
    refs = [*REF, seg("s2", "A", 0, 1, "", line=7), seg("s2", "A", 1, 2, "uh", line=8)]
    with pytest.raises(ScoringError, match=r"ref.stm:7: session 's2' has no reference word"):
        score_sessions(scorer, refs, HYP, "tcpwer", sources=("ref.stm", "hyp"))
    with pytest.raises(ScoringError, match="metric must be one of"):
        score_sessions(scorer, REF, HYP, "mimo")


def test_character_based_times() -> None:
    # MeetEval's split: in proportion to the characters; one word keeps the segment
    assert character_based(1.0, 4.0, ["ab", "c"]) == [(1.0, 3.0), (3.0, 4.0)]
    assert character_based(1.0, 4.0, ["abc"]) == [(1.0, 4.0)]


def test_levenshtein_equals_the_dp() -> None:
    rng = random.Random(0)
    for _ in range(400):
        r = [6 + rng.randrange(5) for _ in range(rng.randint(0, 90))]
        h = [6 + rng.randrange(5) for _ in range(rng.randint(0, 90))]
        assert levenshtein(r, h) == _reference_alignment(r, h, 200)[1] // 200


def _timed_brute(r, rt, h, ht, k) -> int:
    """The whole time-constrained table in plain Python (MeetEval's unoptimised form)."""
    d = [[j * k for j in range(len(h) + 1)]]
    for i in range(1, len(r) + 1):
        row = [i * k]
        for j in range(1, len(h) + 1):
            best = min(d[i - 1][j] + k, row[j - 1] + k)
            if rt[i - 1][0] < ht[j - 1][1] and rt[i - 1][1] > ht[j - 1][0]:
                best = min(best, d[i - 1][j - 1] + (0 if r[i - 1] == h[j - 1] else k + 1))
            row.append(best)
        d.append(row)
    return d[-1][-1]


def test_time_constrained_alignment_equals_the_whole_table() -> None:
    rng = random.Random(1)

    def times(n: int) -> np.ndarray:
        starts = sorted(rng.uniform(0, 20) for _ in range(n))
        spans = [(s, s + rng.uniform(0, 2)) for s in starts]
        if rng.random() < 0.3:  # out of time order too
            rng.shuffle(spans)
        return np.array(spans, dtype=np.float64).reshape(-1, 2)

    for _ in range(300):
        n, m = rng.randint(0, 20), rng.randint(0, 20)
        r = np.array([rng.randrange(4) for _ in range(n)], dtype=np.int64)
        h = np.array([rng.randrange(4) for _ in range(m)], dtype=np.int64)
        rt, ht = times(n), times(m)
        ops, cost = align_timed(r, rt, h, ht, 50)
        assert cost == _timed_brute(r.tolist(), rt, h.tolist(), ht, 50)
        assert ops.count("S") * 51 + (ops.count("D") + ops.count("I")) * 50 == cost
        i = j = 0
        for op in ops:  # every pairing overlaps in time, and C means equal words
            if op in "CS":
                assert rt[i][0] < ht[j][1] and rt[i][1] > ht[j][0]
                assert (op == "C") == (r[i] == h[j])
            i += op != "I"
            j += op != "D"
        assert (i, j) == (n, m)


@pytest.mark.parametrize("band_cells", [1 << 25, 40])
def test_band_path_equals_the_batched_aligner(monkeypatch, band_cells: int) -> None:
    # plain long pairs go through the band (whole, then every s-th row kept): same ops, costs
    rng = random.Random(band_cells)
    pairs = []
    for _ in range(150):
        r = [6 + rng.randrange(8) for _ in range(rng.randint(1, 50))]
        h = [x if rng.random() < 0.7 else 6 + rng.randrange(8) for x in r if rng.random() < 0.9]
        pairs.append((r, h or [6]))
    want = align_batch(pairs, 60)
    monkeypatch.setattr(align, "_ROW_CELLS", 4)
    monkeypatch.setattr(align, "_BAND_CELLS", band_cells)
    assert align_batch(pairs, 60) == want


@pytest.mark.parametrize("every", [4, 32])
def test_anchored_pieces_equal_the_whole_table(monkeypatch, every: int) -> None:
    # a plain long pair cut where every alignment of E edits passes: the pieces' ops, joined,
    # are the whole table's (few-word vocabularies make many ties, so few unique cells)
    monkeypatch.setattr(align, "_ANCHOR_EVERY", every)
    monkeypatch.setattr(align, "_ROW_CELLS", 60)
    rng = random.Random(every)
    cuts = 0
    for _ in range(80):
        vocab = rng.choice([2, 4, 50])
        r = np.array([6 + rng.randrange(vocab) for _ in range(rng.randint(20, 300))])
        h = np.array(
            [x if rng.random() < 0.8 else 6 + rng.randrange(vocab) for x in r if rng.random() < 0.9]
            or [6]
        )
        k = max(len(r), len(h)) + 2
        assert align._align_anchored(r, h, k) == align._align_long(r, h, k, None, None)
        cuts += len(align._anchors(r, h)[1])
    assert cuts > 100  # the pieces were used, not only the band


def _ops_score(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO_ROOT / "ops" / "score"), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_ops_score_session_mode(tmp_path: Path) -> None:
    ref, hyp = tmp_path / "ref.stm", tmp_path / "hyp.seglst.json"
    write_timed(ref, REF, "stm")
    write_timed(hyp, HYP, "seglst")
    out = tmp_path / "out"
    proc = _ops_score(ref, hyp, "--metric", "tcpwer", "--collar", "2", "--no-nsw", "-o", out)
    assert proc.returncode == 0, proc.stderr
    summary = read_summary(out / "summary.json")
    assert summary.session is not None
    assert (summary.session["metric"], summary.session["collar"]) == ("tcpwer", 2.0)
    assert summary.metrics is not None and summary.metrics.errors == 3
    assert summary.scorer["session"] == {"metric": "tcpwer", "collar": 2.0}
    (line,) = (out / "sessions.jsonl").read_text().splitlines()
    assert json.loads(line)["assignment"] == [["A", "spk2"], ["B", "spk1"]]
    assert "tcpWER (collar 2 s)" in (out / "sessions.txt").read_text()
    # a bad hypothesis: one line naming the file and line, no traceback
    (tmp_path / "bad.seglst.json").write_text(
        json.dumps([{**HYP[0].to_seglst(), "session_id": "nope"}])
    )
    proc = _ops_score(ref, tmp_path / "bad.seglst.json", "--metric", "cpwer", "-o", out)
    assert proc.returncode != 0
    assert "bad.seglst.json:" in proc.stderr and "'nope' is not in the reference" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_sessions_table(scorer) -> None:
    text = sessions_table(score_sessions(scorer, REF, HYP, "cpwer"))
    assert text.splitlines()[0] == "cpWER"
    assert "A->spk2" in text and "30.00" in text


def test_orcwer_streams_without_speakers(scorer, tmp_path: Path) -> None:
    # a CTM (no speakers): one stream per channel; each reference segment goes whole to the
    # stream that explains it best, here both to channel 1
    from scoring.meeting import read_segments
    from scoring.segments import TimedWord

    words = "good morning everyone hello let us begin the meeting".split()
    ctm = tmp_path / "hyp.ctm"
    write_timed(ctm, [TimedWord("s1", i * 0.5, 0.4, w) for i, w in enumerate(words)], "ctm")
    res = score_sessions(scorer, REF, read_segments(ctm), "orcwer")
    s = res.sessions[0]
    assert (s.errors, s.dele, s.n_ref) == (1, 1, 10)  # "there" deleted
    assert {h for _, h in s.assignment} == {"channel 1"}
    with pytest.raises(ScoringError, match="has a hypothesis segment with no speaker"):
        score_sessions(scorer, REF, read_segments(ctm), "cpwer")


def test_orcwer_refuses_a_table_too_large(scorer, monkeypatch) -> None:
    from scoring import meeting

    monkeypatch.setattr(meeting, "ORC_MAX_CELLS", 50)
    with pytest.raises(ScoringError, match=r"session 's1': ORC-WER over 2 hypothesis streams"):
        score_sessions(scorer, REF, HYP, "orcwer")
