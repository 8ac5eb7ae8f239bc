"""Pure parts of the benchmark job: sampling, sharding, cache keys and records, leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asrbench.benchmark.cache import HypCache, Records, cache_key, read_records
from asrbench.benchmark.cell import check_writable, timing_stats
from asrbench.benchmark.errors import BenchmarkError
from asrbench.benchmark.progress import Progress
from asrbench.benchmark.request import load_request
from asrbench.benchmark.shard import split_shards
from asrbench.dataset import Utterance, load_dataset, sample_utterances
from asrbench.results import leaderboard
from asrbench.results.summary import Selection, Summary, write_summary
from asrbench.scorers import get_scorer
from scoring.metrics import Metrics


def _utts(n: int) -> list[Utterance]:
    return [Utterance(f"u{i:03d}", f"a/{i}.wav", 1.0 + (i * 7) % 5, "x") for i in range(n)]


def test_sample_is_seeded_nested_and_in_dataset_order(mini_en: Path) -> None:
    utts = load_dataset(mini_en, check_audio=False).utterances
    a = sample_utterances(utts, 10, seed=1)
    assert [u.id for u in a] == [u.id for u in sample_utterances(utts, 10, seed=1)]
    assert [u.id for u in a] != [u.id for u in utts[:10]]  # not the first N
    assert [u.id for u in a] != [u.id for u in sample_utterances(utts, 10, seed=2)]
    pos = {u.id: i for i, u in enumerate(utts)}
    assert [pos[u.id] for u in a] == sorted(pos[u.id] for u in a)
    assert {u.id for u in a} <= {u.id for u in sample_utterances(utts, 20, seed=1)}
    assert len(sample_utterances(utts, None)) == len(utts) == len(sample_utterances(utts, 999))


def test_shards_partition_balance_and_keep_order() -> None:
    utts = _utts(23)
    shards = split_shards(utts, 3)
    assert len(shards) == 3
    flat = [u.id for s in shards for u in s]
    assert sorted(flat) == [u.id for u in utts] and len(flat) == len(set(flat))
    loads = [sum(u.duration for u in s) for s in shards]
    assert max(loads) - min(loads) <= max(u.duration for u in utts)
    for s in shards:
        assert [u.id for u in s] == sorted(u.id for u in s)
    assert split_shards(utts, 3) == shards
    assert len(split_shards(utts[:2], 8)) == 2
    with pytest.raises(ValueError):
        split_shards(utts, 0)


def test_cache_key_depends_on_model_dataset_and_output_changing_options() -> None:
    base = cache_key("sha256:img", "sha256:data", {"env": {}, "gpus": None})[0]
    assert base == cache_key("sha256:img", "sha256:data", {"gpus": None, "env": {}})[0]
    assert base != cache_key("sha256:img2", "sha256:data", {"env": {}, "gpus": None})[0]
    assert base != cache_key("sha256:img", "sha256:data2", {"env": {}, "gpus": None})[0]
    assert (
        base
        != cache_key(
            "sha256:img", "sha256:data", {"env": {"ASRBENCH_UTT_TIMEOUT": "5"}, "gpus": None}
        )[0]
    )


def test_harvest_merges_shards_drops_torn_lines_and_keeps_first_result(tmp_path: Path) -> None:
    key, inputs = cache_key("m", "d", {})
    c = HypCache(tmp_path, key, inputs)
    c.save(Records({"a": "old"}, {"a": "1\t1"}, {}))
    s0 = c.attempts / "x" / "shard-0" / "out"
    s1 = c.attempts / "x" / "shard-1" / "out"
    s0.mkdir(parents=True)
    s1.mkdir(parents=True)
    (s0 / "hyp.tsv").write_text("a\tnew\nb\tbee\nc\ttor")  # torn last line: c is not done
    (s0 / "timing.tsv").write_text("b\t0.5\t2.0\n")
    (s1 / "failed.tsv").write_text("d\tboom\n")
    (c.attempts / "x" / "shard-1" / "run.log").write_text("log\n")
    with c.locked("t"):
        rec, recovered, logs, problems = c.harvest()
    assert recovered == 1 and problems == []  # b is new; a keeps its first text
    assert rec.hyp == {"a": "old", "b": "bee"} and rec.failed == {"d": "boom"}
    assert rec.timing["b"] == "0.5\t2.0"
    assert not c.attempts.exists() and [p.name for p in logs] == ["x-shard-1.log"]
    assert read_records(c.root).done() == {"a", "b", "d"}
    assert (c.root / "hyp.tsv").read_text() == "a\told\nb\tbee\n"
    assert json.loads((c.root / "key.json").read_text())["model"] == "m"


def test_timing_stats_rtf_and_percentiles() -> None:
    utts = [
        Utterance("a", "a.wav", 2.0, ""),
        Utterance("b", "b.wav", 6.0, ""),
        Utterance("c", "c.wav", 1.0, ""),
    ]
    rec = Records({"a": "", "b": "", "c": ""}, {"a": "1.0\t2.0", "b": "3.0\t6.0"}, {})
    t = timing_stats(utts, rec)
    assert t["rtf"] == pytest.approx(4.0 / 8.0) and t["n_timed"] == 2
    assert t["latency_s"]["p50"] == pytest.approx(2.0) and t["latency_max_s"] == 3.0


def test_benchmark_scorer_counts_missing_as_deletions() -> None:
    res = get_scorer("en").score({"a": "The cat sat.", "b": "hello world"}, {"a": "the hat sat on"})
    m = res.metrics
    assert (m.sub, m.ins, m.dele) == (1, 1, 2)
    assert m.n_missing == 1 and m.coverage == 0.5
    assert [u.id for u in res.utterances] == ["a", "b"]  # the missing one is not dropped


def summary_for(
    model: str,
    ds: str,
    wer: float,
    n_utts: int = 10,
    n_dataset: int = 10,
    dataset_hash: str = "sha256:d",
    key: str = "",
) -> Summary:
    """A stored-result summary whose TER is `wer` over 1000 reference words."""
    errors = round(1000 * wer)
    met = Metrics(
        unit="word",
        n_utts=n_utts,
        n_ref=1000,
        n_hyp=1000,
        cor=1000 - errors,
        sub=errors,
        ins=0,
        dele=0,
        n_err_utts=min(errors, n_utts),
        mter_den=1000,
        n_missing=0,
        n_empty_ref=0,
    )
    sel = Selection(n_utts, n_dataset, f"ids-{n_utts}")
    return Summary(
        producer="benchmark",
        result_key=key or f"sha256:{model}{ds}{wer}{n_utts}",
        metrics=met,
        selection=sel,
        scorer={"config_hash": "sha256:s"},
        model=model,
        dataset=ds,
        dataset_hash=dataset_hash,
    )


def test_leaderboard_ranks_per_dataset(tmp_path: Path) -> None:
    def put(model: str, ds: str, wer: float, folder: str = "", **kw) -> None:
        write_summary(
            tmp_path / model / (folder or ds) / "summary.json", summary_for(model, ds, wer, **kw)
        )

    put("m1", "d1", 0.10)
    put("m2", "d1", 0.20)
    put("m3", "d1", 0.10)
    put("m1", "d2", 0.30)
    put("m2", "d2", 0.05)
    board = leaderboard.build(tmp_path)
    assert board["models"] == ["m1", "m2", "m3"] and board["datasets"] == ["d1", "d2"]
    c = board["cells"]
    assert (c["m1"]["d1"]["rank"], c["m3"]["d1"]["rank"], c["m2"]["d1"]["rank"]) == (1, 1, 3)
    assert (c["m2"]["d2"]["rank"], c["m1"]["d2"]["rank"]) == (1, 2)
    # m3 is ranked on d1 only: the mean rank is taken over d1, the dataset every ranked model
    # has (a mean over each model's own datasets would put m3 at 1.0 above m1 at 1.5)
    assert "d2" not in c["m3"] and board["mean_rank_datasets"] == ["d1"]
    assert board["mean_rank"] == {"m1": 1.0, "m2": 3.0, "m3": 1.0}
    assert board["n_ranked"] == {"m1": 2, "m2": 2, "m3": 1}
    paths = leaderboard.write(board, tmp_path)
    md = paths["md"].read_text()
    # no per-utterance results here: no significance test, ranks by TER; m1 and m3 tie
    assert "| m1 | 10.00 (1) | 30.00 (2) | 1 (tie) |" in md and "Mean rank over d1 (" in md
    assert "| m2 | 20.00 (3) | 5.00 (1) | 3 |" in md and "--reps 0" not in md
    assert paths["csv"].read_text().splitlines()[2].startswith("m2,20.00,5.00,3,1")
    # A sample shows only where no full result exists, marked and unranked; results stored
    # beside a reported one are counted; an unreadable summary is named, the rest still built.
    put("m3", "d2", 0.01, folder="d2~sample-abc", n_utts=3)
    put("m1", "d1", 0.50, folder="d1~sample-def", n_utts=2)
    put("m1", "d1", 0.40, folder="d1~0123456789ab", dataset_hash="sha256:other")
    (tmp_path / "m2" / "d3").mkdir()
    (tmp_path / "m2" / "d3" / "summary.json").write_text('{"format": "asrbench-summ')
    board = leaderboard.build(tmp_path)
    c = board["cells"]
    assert c["m3"]["d2"]["sample"] and c["m3"]["d2"]["rank"] is None
    assert (c["m2"]["d2"]["rank"], c["m1"]["d2"]["rank"]) == (1, 2)  # the sample is unranked
    assert c["m1"]["d1"]["ter"] == 0.10 and c["m1"]["d1"]["others"] == 2
    assert len(board["problems"]) == 1 and "m2/d3/summary.json" in board["problems"][0]
    md = leaderboard.to_markdown(board)
    assert "1.00* (sample 3/10)" in md and "10.00 (1) +2" in md and "not valid JSON" in md


def test_request_file_is_checked(tmp_path: Path) -> None:
    good = tmp_path / "r.yaml"
    good.write_text("models: [a, b]\ndatasets: mini_en\noptions: {jobs: 2, max_utts: 5}\n")
    req = load_request(good)
    assert req.cells() == [("a", "mini_en"), ("b", "mini_en")] and req.options.jobs == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("models: [a]\ndatasets: [d]\noptions: {jobz: 2}\n")
    with pytest.raises(BenchmarkError, match="jobz"):
        load_request(bad)


def test_unwritable_or_full_results_folder_fails_early(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(BenchmarkError, match="not writable"):
        check_writable(blocker / "results", "results folder", 200)
    with pytest.raises(BenchmarkError, match="MiB free"):
        check_writable(tmp_path, "results folder", 1 << 42)


def test_progress_line_counts_done_utterances(tmp_path: Path) -> None:
    out = tmp_path / "shard-0" / "out"
    out.mkdir(parents=True)
    (out / "hyp.tsv").write_text("a\tx\nb\tpartial")
    (out / "failed.tsv").write_text("c\tboom\n")
    p = Progress(
        "m x d", {"a": 10.0, "b": 5.0, "c": 5.0}, 1, 3600.0, [tmp_path / "shard-0"], enabled=False
    )
    assert p.snapshot() == (2, 15.0)
    assert "3/4 utts (75%)" in p.line()
