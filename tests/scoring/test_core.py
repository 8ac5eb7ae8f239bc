"""Alignment, metrics and inputs of the scorer (reports: test_report.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import Metrics, Scorer, ScorerConfig, ScoringError, read_transcripts
from scoring.align import align_batch
from scoring.metrics import Interval
from scoring.stats import bootstrap_ci, paired_bootstrap
from scoring.wfst import FstAligner

WORDS = st.lists(st.sampled_from(["a", "b", "c", "d", "the", "cat"]), max_size=8)


def _lev(r: list[str], h: list[str]) -> int:
    prev = list(range(len(h) + 1))
    for i, x in enumerate(r, 1):
        cur = [i]
        for j, y in enumerate(h, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


@settings(max_examples=150, deadline=None)
@given(WORDS, WORDS)
def test_properties(plain_scorer: Scorer, r: list[str], h: list[str]) -> None:
    res = plain_scorer.score(
        {"u": " ".join(r), "v": " ".join(h)}, {"u": " ".join(h), "v": " ".join(r)}
    )
    u, v = res.utterances
    assert u.errors == _lev(r, h)  # Levenshtein distance
    assert 0.0 <= u.mter <= 1.0 and u.mter == v.mter  # bounded and symmetric
    if u.ter is not None:
        assert u.ter >= u.mter
    assert (u.sub, u.dele, u.ins) == (v.sub, v.ins, v.dele)  # swapping sides swaps D and I
    same = plain_scorer.score({"u": " ".join(r)}, {"u": " ".join(r)}).utterances[0]
    assert same.errors == 0
    assert u.cor + u.sub + u.dele == len(r) and u.cor + u.sub + u.ins == len(h)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(WORDS, WORDS), min_size=1, max_size=12))
def test_pooled_is_sum_and_no_utterance_lost(plain_scorer: Scorer, pairs) -> None:
    refs = {f"u{i}": " ".join(r) for i, (r, _) in enumerate(pairs)}
    hyps = {f"u{i}": " ".join(h) for i, (_, h) in enumerate(pairs) if i % 3}  # some missing
    res = plain_scorer.score(refs, hyps)
    assert [u.id for u in res.utterances] == list(refs)
    m = res.metrics
    for attr in ("cor", "sub", "ins", "dele"):
        assert getattr(m, attr) == sum(getattr(u, attr) for u in res.utterances)
    assert m.n_ref == sum(len(r) for r, _ in pairs)
    assert m.n_missing == sum(1 for i in range(len(pairs)) if not i % 3 or not pairs[i][1])
    if m.n_ref:
        assert m.ter == m.errors / m.n_ref


def test_fst_and_fast_path_agree(scorer: Scorer) -> None:
    rng = random.Random(7)
    vocab = [
        "i'm",
        "i",
        "am",
        "gonna",
        "going",
        "to",
        "okay",
        "ok",
        "the",
        "cat",
        "story",
        "teller",
    ]
    refs = {f"u{i}": " ".join(rng.choices(vocab, k=rng.randint(0, 9))) for i in range(300)}
    hyps = {k: " ".join(rng.choices(vocab, k=rng.randint(0, 9))) for k in refs}
    fast = scorer.score(refs, hyps)
    via_fst = Scorer(ScorerConfig(nsw=False, engine="fst", bootstrap=10)).score(refs, hyps)
    for a, b in zip(fast.utterances, via_fst.utterances, strict=True):
        # Identical counts always; the words may differ only between equally good forms.
        assert (a.cor, a.sub, a.ins, a.dele, a.n_hyp) == (b.cor, b.sub, b.ins, b.dele, b.n_hyp)
        if not a.alternatives and not b.alternatives:
            assert (a.codes, a.hyp) == (b.codes, b.hyp)


@pytest.mark.parametrize("k", [20, 3000])  # three-level weights, and the prune fallback
def test_fst_cost_is_levenshtein(k: int) -> None:
    al = FstAligner(10, k)
    assert al.three_level == (k == 20)
    (edits, subs), hyp, _, _ = al.best_path([6, 7, 8], [6, 9, 8, 10])
    assert (edits, subs) == (2, 1) and hyp == [6, 9, 8, 10]
    codes, costs = align_batch([([6, 7, 8], [6, 9, 8, 10])], k)
    assert divmod(costs[0], k) == (edits, subs) and codes[0] == "CSCI"


@pytest.mark.parametrize("k", [20, 3000])
def test_fst_tie_break_fewest_insertions(k: int) -> None:
    # "a d" (2 deletions) and "a b c d e f" (2 insertions) both cost 2 edits, 0 substitutions.
    (edits, subs), hyp, chosen, _ = FstAligner(12, k).best_path(
        [6, 7, 8, 9], [((6, 9), (6, 7, 8, 9, 10, 11))]
    )
    assert (edits, subs) == (2, 0) and hyp == [6, 9] and chosen == [(6, 9)]


def test_enumeration_tie_break_fewest_insertions(tmp_path) -> None:
    alt = tmp_path / "alt.txt"
    alt.write_text("a d|a b c d e f\n", encoding="utf-8")
    for engine in ("auto", "fst"):
        sc = Scorer(ScorerConfig(nsw=False, alternatives=str(alt), engine=engine, bootstrap=0))
        u = sc.score({"u": "a b c d"}, {"u": "a b c d e f"}).utterances[0]
        assert (u.hyp, u.dele, u.ins) == (["a", "d"], 2, 0), engine


def test_tie_break_prefers_fewer_substitutions() -> None:
    # "a b" vs "b c": two substitutions or deletion+match+insertion, both 2 edits.
    codes, _ = align_batch([([1, 2], [2, 3])], 10)
    assert sorted(codes[0]) == ["C", "D", "I"]


def test_empty_reference_and_missing_hypothesis(plain_scorer: Scorer) -> None:
    res = plain_scorer.score({"e": "", "m": "two words", "x": "..."}, {"e": "extra"})
    e, m, x = res.utterances
    assert e.ter is None and e.mter == 1.0
    assert m.missing and m.dele == 2 and m.ter == 1.0
    assert x.ter is None and x.mter == 0.0 and x.errors == 0
    assert res.metrics.coverage == pytest.approx(1 / 3)
    assert res.metrics.n_empty_ref == 2


def test_unknown_ids_are_an_error(plain_scorer: Scorer) -> None:
    with pytest.raises(ScoringError, match="not in the reference"):
        plain_scorer.score({"a": "x"}, {"b": "x"})


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        ("r.tsv", "ID\tTEXT\nu1\thello world\nu2\t\n", "tsv"),
        ("text", "u1 hello world\nu2\n", "kaldi"),
        ("r.trn", "hello world (u1)\n (u2)\n", "trn"),
        ("r.jsonl", '{"id": "u1", "text": "hello world"}\n{"id": "u2", "text": ""}\n', "jsonl"),
    ],
)
def test_readers(tmp_path, name: str, content: str, fmt: str) -> None:
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    from scoring.io import detect_format

    assert detect_format(p) == fmt
    assert read_transcripts(p) == {"u1": "hello world", "u2": ""}


def test_reader_errors_name_file_and_line(tmp_path) -> None:
    p = tmp_path / "dup.tsv"
    p.write_text("a\tx\nb\ty\na\tz\n", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"dup.tsv:3: duplicate"):
        read_transcripts(p)
    p.write_bytes(b"a\tx\nb\t\xff\xfe\n")
    with pytest.raises(ScoringError, match=r"dup.tsv:2: not valid UTF-8"):
        read_transcripts(p)


def test_bootstrap_and_paired_test() -> None:
    rng = random.Random(1)
    den = [rng.randint(5, 20) for _ in range(300)]
    a = [rng.randint(0, d // 3) for d in den]
    b = [x + (1 if rng.random() < 0.5 else 0) for x in a]
    ci = bootstrap_ci(a, den, 500, seed=3)
    point = sum(a) / sum(den)
    assert ci["low"] < point < ci["high"]
    test = paired_bootstrap(b, a, den, 500, seed=3)
    assert test["delta_ter"] > 0 and test["p_value"] < 0.01
    assert paired_bootstrap(a, a, den, 100)["p_value"] == 1.0


def test_chinese_character_level() -> None:
    sc = Scorer(ScorerConfig(lang="zh", bootstrap=10))
    res = sc.score({"z": "今天天气很好。"}, {"z": "嗯，今天天气很好！"})
    assert res.utterances[0].errors == 0 and res.metrics.ter == 0.0
    assert res.metrics.unit == "mixed" and res.metrics.name == "TER"  # CJK chars + words
    res = sc.score({"z": "ＡＢＣ，今天"}, {"z": "abc 今夫"})
    assert res.utterances[0].n_ref == 3 and res.utterances[0].sub == 1


def _reference_alignment(r: list[int], h: list[int], k: int) -> tuple[str, int]:
    """Plain-Python DP with the documented cost (K, K, K+1) and back-trace rule."""
    n, m = len(r), len(h)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                d[i][j] = (i + j) * k
                continue
            sub = 0 if r[i - 1] == h[j - 1] else k + 1
            d[i][j] = min(d[i - 1][j - 1] + sub, d[i - 1][j] + k, d[i][j - 1] + k)
    ops, i, j = [], n, m
    while i or j:
        sub = 0 if i and j and r[i - 1] == h[j - 1] else k + 1
        if i and j and d[i][j] == d[i - 1][j - 1] + sub:
            ops.append("C" if sub == 0 else "S")
            i, j = i - 1, j - 1
        elif i and d[i][j] == d[i - 1][j] + k:
            ops.append("D")
            i -= 1
        else:
            ops.append("I")
            j -= 1
    return "".join(reversed(ops)), d[n][m]


@pytest.mark.parametrize("k", [12, 400, 40000])  # int16, int32 and int64 DP tables
def test_align_batch_matches_reference_dp(k: int) -> None:
    rng = random.Random(k)
    pairs = []
    for _ in range(300):
        r = [6 + rng.randrange(5) for _ in range(rng.randint(0, 10))]
        h = [6 + rng.randrange(5) for _ in range(rng.randint(0, 10))]
        pairs.append((r, h))
    codes, costs = align_batch(pairs, k)
    assert list(zip(codes, costs, strict=True)) == [_reference_alignment(r, h, k) for r, h in pairs]


def test_bootstrap_groups_identical_rows() -> None:
    from scoring.stats import _distinct_rows

    rng = np.random.default_rng(0)
    cols = rng.integers(-3, 9, size=(500, 3)).astype(np.float64)
    rows, counts = _distinct_rows(cols)
    ref_rows, ref_counts = np.unique(cols, axis=0, return_counts=True)
    assert np.array_equal(rows, ref_rows) and np.array_equal(counts, ref_counts)
    cols[0, 0] = 0.5  # not integer-valued: the generic path
    rows, counts = _distinct_rows(cols)
    ref_rows, ref_counts = np.unique(cols, axis=0, return_counts=True)
    assert np.array_equal(rows, ref_rows) and np.array_equal(counts, ref_counts)


@pytest.mark.parametrize("k", [40, 4000])
def test_align_batch_splits_long_batches_the_same(monkeypatch, k: int) -> None:
    from scoring import align

    rng = random.Random(k)
    pairs = [
        (
            [6 + rng.randrange(9) for _ in range(rng.randint(0, 30))],
            [6 + rng.randrange(9) for _ in range(rng.randint(0, 30))],
        )
        for _ in range(400)
    ]
    whole = align_batch(pairs, k)
    monkeypatch.setattr(align, "_CELLS", 300)  # forces batches of 16 pairs or fewer
    monkeypatch.setattr(align, "_CHUNK", 64)
    assert align_batch(pairs, k) == whole
    assert whole == tuple(
        map(list, zip(*(_reference_alignment(r, h, k) for r, h in pairs), strict=True))
    )


def test_wide_ids_align_the_same() -> None:
    # Word ids beyond int16 switch the id arrays to int32: same alignment.
    rng = random.Random(3)
    pairs = [
        ([rng.randrange(6, 9) for _ in range(8)], [rng.randrange(6, 9) for _ in range(7)])
        for _ in range(50)
    ]
    shifted = [([x + 70000 for x in r], [x + 70000 for x in h]) for r, h in pairs]
    assert align_batch(pairs, 30) == align_batch(shifted, 30)


def test_quantile_is_numpys() -> None:
    from scoring.stats import _quantile

    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 10, 999, 1000, 1001):
        values = rng.random(n) * rng.choice([1e-3, 1.0, 7.0])
        ordered = np.sort(values)
        for q in (0.0, (1 - 0.95) / 2, 0.25, 0.5, 0.75, 1 - (1 - 0.95) / 2, 1.0, rng.random()):
            assert _quantile(ordered, q) == float(np.quantile(values, q)), (n, q)


def test_metrics_round_trip(scorer: Scorer) -> None:
    res = scorer.score(
        {"a": "the cat sat", "b": "", "c": "hello world"}, {"a": "the hat sat on", "b": "noise"}
    )
    m = res.metrics
    assert m.ter_ci is not None and m.ci_method
    for metrics in (m, Metrics.from_dict(m.to_dict()), m.with_ci(None, None)):
        d = json.loads(json.dumps(metrics.to_dict()))  # through JSON, as summary.json stores it
        back = Metrics.from_dict(d)
        assert back == metrics
        assert back.to_dict() == metrics.to_dict()
        assert (back.ter, back.mter, back.ser, back.coverage) == (
            metrics.ter,
            metrics.mter,
            metrics.ser,
            metrics.coverage,
        )
    assert m.errors == sum(u.errors for u in res.utterances)
    assert m.to_dict()["del"] == m.dele and m.to_dict()["ter"] == m.errors / m.n_ref
    assert isinstance(m.ter_ci, Interval) and m.ter_ci.low <= m.ter <= m.ter_ci.high


def test_metrics_from_dict_recomputes_rates() -> None:
    d = Metrics(
        unit="word",
        n_utts=2,
        n_ref=10,
        n_hyp=9,
        cor=8,
        sub=1,
        ins=0,
        dele=1,
        n_err_utts=1,
        mter_den=10,
        n_missing=0,
        n_empty_ref=0,
    ).to_dict()
    d["ter"] = 0.99  # a tampered rate is not trusted: the counts decide
    assert Metrics.from_dict(d).ter == 0.2


def test_nsw_defaults_to_a_cache_folder_and_can_be_switched_off() -> None:
    from scoring.normalize.nsw import default_cache_dir

    assert Scorer(ScorerConfig()).nsw.cache_dir == default_cache_dir()
    assert Scorer(ScorerConfig(nsw=False)).nsw is None


def test_reader_strips_crlf_and_bom(tmp_path: Path) -> None:
    p = tmp_path / "r.tsv"
    p.write_bytes(b"\xef\xbb\xbfu1\thello\r\nu2\tworld\r\n")
    assert read_transcripts(p) == {"u1": "hello", "u2": "world"}


def test_bootstrap_integer_product_equals_float_product() -> None:
    from scoring.stats import _distinct_rows, _replicates

    rng = np.random.default_rng(9)
    cols = np.column_stack(
        [rng.integers(0, 30, 5000), rng.integers(1, 60, 5000), rng.integers(1, 70, 5000)]
    ).astype(np.float64)
    rows, counts = _distinct_rows(cols)
    weights = np.random.default_rng(4).multinomial(len(cols), counts / len(cols), size=300)
    assert np.array_equal(_replicates(cols, 300, 4), weights.astype(np.float64) @ rows)


def test_mter_is_the_papers_pooled_definition(plain_scorer: Scorer) -> None:
    # SpeechColab paper: mTER = LD(ref, hyp) / max(|ref|, |hyp|); its leaderboard pools it
    # as total errors / max(total ref tokens, total hyp tokens). The per-utterance-pooled
    # variant (errors / sum of max(|ref_u|, |hyp_u|)) is mter_utt.
    res = plain_scorer.score({"a": "one", "b": "", "c": "x y z"}, {"a": "", "b": "two", "c": "x y"})
    m = res.metrics
    assert (m.errors, m.n_ref, m.n_hyp, m.mter_den) == (3, 4, 3, 5)
    assert m.mter == 3 / max(4, 3) and m.mter_utt == 3 / 5 and m.ter == 3 / 4
    # with no more hypothesis than reference tokens, mTER equals TER (as the leaderboard shows)
    assert m.mter == m.ter
    # pooled over the corpus it is not bounded by 1 (deletions here, insertions there)...
    res = plain_scorer.score({"a": "one", "b": ""}, {"a": "", "b": "two"})
    assert res.metrics.mter == 2.0 and res.metrics.mter_utt == 1.0
    # ... and it is |hyp| of the hypothesis as aligned (after DAE), per utterance as pooled
    d = res.metrics.to_dict()
    assert d["mter"] == 2.0 and d["mter_utt"] == 1.0 and d["mter_den"] == 2
    assert set(d["ci"]) == {"method", "ter", "mter", "mter_utt"}


def test_metrics_from_an_older_summary_moves_its_mter_interval() -> None:
    # Before mTER took the paper's definition, summaries held no mter_utt and their ci.mter
    # was the interval of today's mter_utt: it is read as such, never as the paper's.
    old = Metrics(
        unit="word",
        n_utts=2,
        n_ref=10,
        n_hyp=12,
        cor=8,
        sub=1,
        ins=3,
        dele=1,
        n_err_utts=1,
        mter_den=13,
        n_missing=0,
        n_empty_ref=0,
    ).to_dict()
    old.pop("mter_utt")
    old["ci"] = {
        "method": "m",
        "ter": None,
        "mter": {"low": 0.1, "high": 0.5, "stderr": 0.1, "level": 0.95, "replicates": 10},
    }
    back = Metrics.from_dict(old)
    assert back.mter_ci is None and back.mter_utt_ci.high == 0.5
    assert back.mter == 5 / 12 and back.mter_utt == 5 / 13


def test_bootstrap_metrics_keeps_ter_and_mter_utt_intervals() -> None:
    # One resampling for all three rates; |hyp| is shared out inside the groups of
    # (errors, |ref|, max(|ref|, |hyp|)), so TER and mTER_utt are exactly the intervals of
    # the grouping without |hyp|, and the mTER replicates have the right distribution.
    from scoring.stats import _replicates, bootstrap_metrics, bootstrap_ratios

    rng = random.Random(3)
    ref = [rng.randint(1, 30) for _ in range(3000)]
    hyp = [max(0, r + rng.randint(-4, 3)) for r in ref]
    err = [rng.randint(0, max(r, h)) for r, h in zip(ref, hyp, strict=True)]
    umax = [max(r, h) for r, h in zip(ref, hyp, strict=True)]
    got = bootstrap_metrics(err, ref, hyp, 500, 0.95, 7)
    want = bootstrap_ratios(err, {"ter": ref, "mter_utt": umax}, 500, 0.95, 7)
    assert got["ter"] == want["ter"] and got["mter_utt"] == want["mter_utt"]
    cols = np.column_stack([err, ref, umax]).astype(np.float64)
    sums = _replicates(cols, 4000, 11, split=np.array(hyp))
    n, mean_h, var_h = len(hyp), np.mean(hyp), np.var(hyp)
    # each replicate draws n utterances with replacement: E[sum h] = n mean, Var = n var
    assert abs(sums[:, 3].mean() - n * mean_h) < 4 * np.sqrt(n * var_h / 4000)
    assert 0.9 < sums[:, 3].var() / (n * var_h) < 1.1
    # |hyp| is a function of each group where every group has one |hyp|: exactly its sum
    same = _replicates(cols, 50, 2, split=np.array(umax))
    assert np.array_equal(same[:, 3], same[:, 2])
    assert got["mter"]["low"] <= sum(err) / max(sum(ref), sum(hyp)) <= got["mter"]["high"]


def test_utterances_then_summarize_is_score(scorer: Scorer) -> None:
    # ops/score takes the per-utterance results first and the metrics (the bootstrap) beside
    # its writing of utterances.jsonl: the same result as score().
    refs = {"a": "I am going to tell the storyteller", "b": "the colour of money", "c": ""}
    hyps = {"a": "I'm gonna tell a story-teller", "b": "the color of honey"}
    whole = scorer.score(refs, hyps)
    utts = scorer.utterances(refs, hyps)
    assert utts == whole.utterances
    assert scorer.summarize(utts) == whole.metrics
