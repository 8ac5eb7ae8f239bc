"""The job end to end with the local runner and small fake models: failures, matrix, rescoring."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from asrbench.benchmark import JobSpec, run_benchmark
from asrbench.settings import REPO_ROOT

OPS = REPO_ROOT / "ops"


def _ops(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(OPS / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def test_partial_failures_are_deletions_and_listed(fake_models, tmp_path: Path) -> None:
    bad = ("LJ001-0002", "arctic_a0010")
    folder = fake_models("fake_partial", fail_ids=bad)
    s = run_benchmark(
        folder,
        "mini_en",
        JobSpec(
            runner="local",
            results_root=tmp_path / "r",
            cache_root=tmp_path / "c",
            progress=False,
            utt_timeout_s=7,
            scorer_options={"nsw": False},
        ),
    )
    assert s.summary.n_failed == 2
    assert sorted(f["id"] for f in s.summary.failed) == sorted(bad)
    m = s.metrics
    assert m.n_utts == 35 and m.n_missing == 2 and m.coverage == 33 / 35
    assert (
        s.placement.kind == "reported" and s.out_dir == tmp_path / "r" / "fake_partial" / "mini_en"
    )
    rows = {
        json.loads(x)["id"]: json.loads(x)
        for x in (s.out_dir / "utterances.jsonl").read_text().splitlines()
    }
    gone = rows["LJ001-0002"]
    assert gone["failed"] == "simulated decoder crash" and gone["missing"]
    assert gone["del"] == gone["n_ref"] > 0 and gone["sub"] == gone["ins"] == 0
    assert (s.out_dir / "failed.tsv").read_text().count("\n") == 2
    # the per-utterance timeout reached the program through the contract's variable
    assert "utt timeout 7" in (s.out_dir / "logs" / "shard-0.log").read_text()
    # each file of the cell is written once (no second summary or utterances in scoring/)
    assert sorted(p.name for p in (s.out_dir / "scoring").iterdir()) == [
        "alignment.txt",
        "hyp.pra",
        "hyp.sys",
        "table.txt",
    ]
    run = json.loads((s.out_dir / "run.json").read_text())
    assert run["cache"]["inputs"]["runtime"]["env"] == {"ASRBENCH_UTT_TIMEOUT": "7"}


def test_rescoring_never_reruns_the_model(fake_models, tmp_path: Path) -> None:
    folder = fake_models("fake_ok")
    kw = dict(
        runner="local",
        results_root=tmp_path / "r",
        cache_root=tmp_path / "c",
        progress=False,
        max_utts=6,
        seed=3,
    )
    first = run_benchmark(folder, "mini_en", JobSpec(scorer_options={"nsw": False}, **kw))
    assert not first.cache_hit
    again = run_benchmark(
        folder, "mini_en", JobSpec(scorer_options={"nsw": False, "punc": False}, **kw)
    )
    assert again.cache_hit
    run = json.loads((again.out_dir / "run.json").read_text())
    assert run["cache"]["utts_run"] == 0 and run["shards"] == []
    assert run["scorer"]["config"]["punc"] is False
    assert again.summary.scorer["config_hash"] != first.summary.scorer["config_hash"]
    # samples are stored as samples, each under its own key, never as the reported cell
    assert first.placement.kind == again.placement.kind == "sample"
    assert first.out_dir != again.out_dir and first.out_dir.name.startswith("mini_en~sample-")
    assert not (tmp_path / "r" / "fake_ok" / "mini_en").exists()
    # a bigger sample reuses the 6 cached utterances and runs only the new ones
    more = run_benchmark(
        folder, "mini_en", JobSpec(scorer_options={"nsw": False}, **{**kw, "max_utts": 9})
    )
    run = json.loads((more.out_dir / "run.json").read_text())
    assert run["cache"]["utts_run"] == 3
    # run.json's typed sections read back and write out byte for byte (issue 40 item 6)
    from asrbench.results.records import RunRecord, read_record, write_record

    rec = read_record(more.out_dir / "run.json", RunRecord.from_dict)
    assert rec.cache.utts_run == 3 and rec.cache.hit is False and rec.times.segment_s is None
    assert rec.model.id == "fake_ok" and rec.model.image is None and rec.dataset.n_utts == 35
    assert rec.selection.n_utts == 9 and rec.selection.is_sample and rec.host.hostname
    assert rec.language is not None and rec.language.dataset == "en" and not rec.forced_language
    write_record(tmp_path / "again.json", rec)
    written = (more.out_dir / "run.json").read_bytes()
    assert (tmp_path / "again.json").read_bytes() == written


def test_matrix_failing_model_leaves_other_cells_alone(fake_models, tmp_path: Path) -> None:
    ok, broken = fake_models("fake_good"), fake_models("fake_broken", mode="broken")
    req = tmp_path / "req.yaml"
    req.write_text(
        f"models: [{ok}, {broken}]\ndatasets: [mini_en]\n"
        f"options: {{runner: local, max_utts: 4, jobs: 2, results: {tmp_path / 'r'},"
        f" cache: {tmp_path / 'c'}, scorer: {{nsw: false}}}}\n"
    )
    p = _ops("benchmark", "--request", str(req), "--no-progress")
    assert p.returncode == 1, p.stderr
    assert "fake_good on mini_en: WER" in p.stdout
    assert "1 of 2 cells done; failed: " in p.stdout
    assert "model fake_broken exited with status 3" in p.stderr
    assert "cannot load weights from /nonexistent/model.bin" in p.stderr  # the log tail
    assert "rerun the same command to continue" in p.stderr
    # a 4-utterance sample: stored as such, beside (never as) the reported cell
    assert len(list((tmp_path / "r" / "fake_good").glob("mini_en~sample-*/summary.json"))) == 1
    assert not (tmp_path / "r" / "fake_broken").exists()
    # the leaderboard is built from stored results only, and marks the sample
    t = _ops("leaderboard", "--results", str(tmp_path / "r"))
    assert t.returncode == 0 and "| fake_good |" in t.stdout and "(sample 4/35)" in t.stdout
    assert (tmp_path / "r" / "leaderboard.csv").is_file()


def test_unwritable_results_or_full_disk_fail_before_running(fake_models, tmp_path: Path) -> None:
    folder = fake_models("fake_never")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    p = _ops(
        "benchmark",
        "-m",
        str(folder),
        "--runner",
        "local",
        "--results",
        str(blocker / "results"),
        "--cache",
        str(tmp_path / "c"),
    )
    assert p.returncode == 1 and "results folder" in p.stderr and "not writable" in p.stderr
    p = _ops(
        "benchmark",
        "-m",
        str(folder),
        "--runner",
        "local",
        "--results",
        str(tmp_path / "r"),
        "--cache",
        str(tmp_path / "c"),
        env={"ASRBENCH_MIN_FREE_MB": str(1 << 40)},
    )
    assert p.returncode == 1 and "MiB free" in p.stderr
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())


def test_crashed_program_is_isolated_to_the_uninterrupted_result(
    fake_models, tmp_path: Path
) -> None:
    crashy = fake_models("fake_crashy", mode="crash_once", marker=tmp_path / "crashed")
    steady = fake_models("fake_steady")
    kw = dict(
        runner="local",
        cache_root=tmp_path / "c",
        progress=False,
        max_utts=10,
        scorer_options={"nsw": False},
    )
    resumed = run_benchmark(crashy, "mini_en", JobSpec(results_root=tmp_path / "r", jobs=1, **kw))
    run = json.loads((resumed.out_dir / "run.json").read_text())
    # First attempt: 2 done, then the program died on the 3rd. Isolation round: the 3rd alone,
    # the other 7 without it; both succeed now, so nothing is counted as failed.
    assert [(x["round"], x["n_utts"]) for x in run["shards"]] == [(0, 10), (1, 1), (1, 7)]
    assert "exited with status 139" in run["shards"][0]["error"]
    assert resumed.summary.n_failed == 0 and resumed.metrics.n_missing == 0
    assert run["cache"]["utts_run"] == 10
    whole = run_benchmark(steady, "mini_en", JobSpec(results_root=tmp_path / "r2", jobs=2, **kw))
    a, b = resumed.out_dir, whole.out_dir
    for name in ("hyp.raw.tsv", "utterances.jsonl", "timing.tsv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    for s in (sa, sb):
        for k in ("model", "model_identity", "hyps_key", "result_key"):
            s.pop(k)
    assert sa == sb
    # run.json holds what reproducing the number needs
    assert run["git"]["commit"] and isinstance(run["git"]["dirty"], bool)
    assert run["model"]["card"]["id"] == "fake_crashy" and run["model"]["source_hash"]
    assert run["dataset"]["hash"].startswith("sha256:") and run["selection"]["ids_sha256"]
    assert run["options"]["max_utts"] == 10 and run["options"]["seed"] == 0
    assert run["scorer"]["config"]["data_files"] and run["packages"]["python"]
    assert run["host"]["cpus"] and run["times"]["started"] < run["times"]["ended"]


def test_reference_free_dataset_gives_hypotheses_and_no_error_rate(
    fake_models, tmp_path: Path, mini_en: Path
) -> None:
    import yaml

    from asrbench.dataset import load_dataset, write_dataset
    from asrbench.results.summary import read_summary

    src = load_dataset(mini_en)
    ds_dir = tmp_path / "nofree"
    (ds_dir / "audio").mkdir(parents=True)
    utts = [u.replaced(text="") for u in src.utterances[:3]]
    for u in utts:
        (ds_dir / u.audio).write_bytes((mini_en / u.audio).read_bytes())
    meta = {**src.meta, "id": "nofree", "reference_free": True}
    write_dataset(ds_dir, meta, src.columns, utts)
    folder = fake_models("fake_ref_free")
    s = run_benchmark(
        folder,
        ds_dir,
        JobSpec(
            runner="local", results_root=tmp_path / "r", cache_root=tmp_path / "c", progress=False
        ),
    )
    assert s.metrics is None and s.summary.reference_free
    assert "hypotheses only" in s.line() and "WER" not in s.line()
    stored = read_summary(s.out_dir / "summary.json")
    assert stored.metrics is None and stored.selection.n_utts == 3
    rows = [json.loads(x) for x in (s.out_dir / "utterances.jsonl").read_text().splitlines()]
    assert [r["hyp"] for r in rows] == ["in being comparatively modern"] * 3
    assert not (s.out_dir / "scoring").exists()
    assert yaml.safe_load((ds_dir / "dataset.yaml").read_text())["reference_free"] is True
    from asrbench.results.leaderboard import build

    assert build(tmp_path / "r")["models"] == []  # nothing to rank


def test_one_bad_utterance_fails_only_itself_and_is_retried(
    fake_models, tmp_path: Path, cli
) -> None:
    """A model whose decoder is spoiled by one utterance (as a 0-frame WAV spoiled PocketSphinx):
    only that utterance fails, the run exits 1 unless a budget allows it, and the failure is
    never served from the cache: the next run tries it again."""
    bad = "LJ001-0002"
    folder = fake_models("fake_poison", mode="poison", fail_ids=(bad,))
    common = [
        "benchmark",
        "-m",
        folder,
        "-d",
        "mini_en",
        "--runner",
        "local",
        "--results",
        tmp_path / "r",
        "--cache",
        tmp_path / "c",
        "--no-progress",
        "--score-opt",
        "nsw=false",
    ]
    code, out, err = cli(*common)
    assert code == 1 and "1 of 35 utterance(s) failed" in err, err
    cell = tmp_path / "r" / "fake_poison" / "mini_en"
    summary = json.loads((cell / "summary.json").read_text())
    assert [f["id"] for f in summary["failed"]] == [bad]
    assert summary["failed"][0]["reason"] == "simulated decoder crash"
    assert summary["metrics"]["n_missing"] == 1 and summary["metrics"]["n_utts"] == 35
    code, out, err = cli(*common, "--max-failed", "1")
    assert code == 0, err
    run = json.loads((cell / "run.json").read_text())
    assert run["cache"]["utts_run"] == 1 and not run["cache"]["hit"]  # the failure was retried
    code, out, err = cli(*common, "--max-failed", "3%")
    assert code == 0
    code, out, err = cli(*common, "--max-failed", "lots")
    assert code == 2 and "--max-failed" in err


def test_model_output_breaking_the_contract_is_named_not_trusted(
    fake_models, tmp_path: Path
) -> None:
    liar = fake_models("fake_liar", mode="liar")
    s = run_benchmark(
        liar,
        "mini_en",
        JobSpec(
            runner="local",
            results_root=tmp_path / "r",
            cache_root=tmp_path / "c",
            progress=False,
            max_utts=4,
            scorer_options={"nsw": False},
        ),
    )
    run = json.loads((s.out_dir / "run.json").read_text())
    problems = " ".join(run["contract_problems"])
    assert "'not-given' was not in the wav list" in problems
    assert "written twice with different values" in problems
    first = [f for f in s.summary.failed]
    assert len(first) == 1 and first[0]["reason"].startswith("contract error")
    rows = [json.loads(x) for x in (s.out_dir / "utterances.jsonl").read_text().splitlines()]
    assert "not-given" not in {r["id"] for r in rows} and len(rows) == 4


def test_tabs_inside_a_text_read_the_same_by_benchmark_and_score(
    fake_models, tmp_path: Path, cli, mini_en: Path
) -> None:
    tabs = fake_models("fake_tabs", mode="tabs")
    s = run_benchmark(
        tabs,
        "mini_en",
        JobSpec(
            runner="local",
            results_root=tmp_path / "r",
            cache_root=tmp_path / "c",
            progress=False,
            max_utts=3,
            scorer_options={"nsw": False},
        ),
    )
    assert set((s.out_dir / "hyp.raw.tsv").read_text().splitlines()[0].split("\t")[1:]) == {
        "in being comparatively modern"
    }
    ref = tmp_path / "ref.tsv"
    chosen = {
        json.loads(x)["id"] for x in (s.out_dir / "utterances.jsonl").read_text().splitlines()
    }
    ref.write_text(
        "".join(
            f"{u.id}\t{u.text}\n"
            for u in __import__("asrbench.dataset").dataset.load_dataset(mini_en)
            if u.id in chosen
        )
    )
    hyp = tmp_path / "hyp.tsv"
    hyp.write_text("".join(f"{i}\tin being\tcomparatively modern\n" for i in sorted(chosen)))
    code, out, err = cli("score", ref, hyp, "-o", tmp_path / "s", "--no-nsw", "--reports", "none")
    assert code == 0, err
    scored = json.loads((tmp_path / "s" / "summary.json").read_text())["metrics"]
    assert scored["errors"] == s.metrics.errors and scored["n_hyp"] == s.metrics.n_hyp


def _small_copy(mini_en: Path, dest: Path, n: int = 3, edit: str | None = None) -> Path:
    """The first n utterances of mini_en under the same ID; `edit` replaces the first text."""
    import shutil

    shutil.copytree(mini_en, dest, ignore=shutil.ignore_patterns("audio"))
    lines = (mini_en / "metadata.tsv").read_text().splitlines()
    head, rows = lines[0], lines[1 : n + 1]
    if edit is not None:
        cols = rows[0].split("\t")
        cols[head.split("\t").index("TEXT")] = edit
        rows[0] = "\t".join(cols)
    (dest / "metadata.tsv").write_text("\n".join([head, *rows]) + "\n")
    (dest / "audio").mkdir()
    for r in rows:
        rel = r.split("\t")[head.split("\t").index("AUDIO")]
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mini_en / rel, dest / rel)
    return dest


def test_another_dataset_under_the_same_id_never_replaces_the_reported_cell(
    fake_models, mini_en: Path, tmp_path: Path
) -> None:
    """Issue 16 item 1: results are keyed by content, not by the dataset's ID."""
    folder = fake_models("fake_ok")
    first_ds = _small_copy(mini_en, tmp_path / "a" / "mini_en")
    other_ds = _small_copy(mini_en, tmp_path / "b" / "mini_en", edit="a different reference")
    kw = dict(
        runner="local", results_root=tmp_path / "r", cache_root=tmp_path / "c", progress=False
    )
    first = run_benchmark(folder, first_ds, JobSpec(**kw))
    assert first.placement.kind == "reported"
    reported = tmp_path / "r" / "fake_ok" / "mini_en"
    before = (reported / "summary.json").read_bytes()
    other = run_benchmark(folder, other_ds, JobSpec(**kw))
    assert other.placement.kind == "variant" and "dataset content differs" in other.placement.note
    assert other.out_dir.name.startswith("mini_en~") and other.out_dir.parent == reported.parent
    assert (reported / "summary.json").read_bytes() == before  # untouched
    # a rerun of the first content is the reported cell again; the leaderboard says which
    # cell it reports and names the one it left out
    assert run_benchmark(folder, first_ds, JobSpec(**kw)).placement.kind == "reported"
    t = _ops("leaderboard", "--results", str(tmp_path / "r"))
    assert t.returncode == 0, t.stderr
    cell = json.loads((tmp_path / "r" / "leaderboard.json").read_text())["cells"]["fake_ok"][
        "mini_en"
    ]
    assert cell["path"] == str(reported) and cell["others"] == 1 and "+1" in t.stdout
    assert cell["dataset_hash"] == json.loads(before)["dataset_hash"]
    # --replace makes the other one the reported cell and moves the first beside it
    swapped = run_benchmark(folder, other_ds, JobSpec(replace=True, **kw))
    assert swapped.placement.kind == "reported" and swapped.out_dir == reported
    assert (
        json.loads((reported / "summary.json").read_text())["dataset_hash"]
        != json.loads(before)["dataset_hash"]
    )
    assert len(list(reported.parent.glob("mini_en~*/summary.json"))) == 1


def test_a_newer_scorer_replaces_the_reported_cell_other_options_do_not(
    fake_models, mini_en: Path, tmp_path: Path, monkeypatch
) -> None:
    """Upgrading the platform changes the scorer's code and data files (its config hash) but
    not what the user chose: the rerun is the reported result, not a variant beside a stale
    one. Other user options (--score-opt) still go beside it."""
    import asrbench.scorers as scorers

    folder = fake_models("fake_ok")
    ds = _small_copy(mini_en, tmp_path / "ds" / "mini_en")
    kw = dict(
        runner="local", results_root=tmp_path / "r", cache_root=tmp_path / "c", progress=False
    )
    first = run_benchmark(folder, ds, JobSpec(**kw))
    real = scorers.scorer_identity

    def upgraded(scorer, options=None):
        sid = real(scorer, options)
        return scorers.ScorerIdentity(
            **{**sid.__dict__, "config_hash": "sha256:" + "1" * 64, "code": "sha256:" + "2" * 64}
        )

    monkeypatch.setattr(scorers, "scorer_identity", upgraded)
    monkeypatch.setattr("asrbench.benchmark.run.scorer_identity", upgraded)
    again = run_benchmark(folder, ds, JobSpec(**kw))
    assert again.placement.kind == "reported" and again.out_dir == first.out_dir
    summary = json.loads((first.out_dir / "summary.json").read_text())
    assert summary["scorer"]["config_hash"] == "sha256:" + "1" * 64
    assert summary["scorer"]["options"] == {}
    other = run_benchmark(folder, ds, JobSpec(scorer_options={"nsw": False}, **kw))
    assert other.placement.kind == "variant" and "scorer options differ" in other.placement.note


def test_api_cost_estimates_reach_the_cell_and_its_summary(fake_models, tmp_path: Path) -> None:
    """cost.tsv (API models, models/README.md) is harvested with the hypotheses, cached,
    written into the cell and summed into summary.json `cost`; a rerun serves it from cache."""
    folder = fake_models("fake_costed", mode="costed")
    kw = dict(
        runner="local",
        results_root=tmp_path / "r",
        cache_root=tmp_path / "c",
        progress=False,
        max_utts=5,
        seed=2,
    )
    first = run_benchmark(folder, "mini_en", JobSpec(**kw))
    cost = dict(line.split("\t") for line in (first.out_dir / "cost.tsv").read_text().splitlines())
    summary = json.loads((first.out_dir / "summary.json").read_text())
    assert len(cost) == 5 and set(cost.values()) == {"0.001250"}
    assert summary["cost"]["usd"] == 0.00625 and summary["cost"]["n_costed"] == 5
    assert summary["cost"]["n_utts"] == 5 and summary["cost"]["unparsable"] == []
    again = run_benchmark(folder, "mini_en", JobSpec(**kw))
    assert again.cache_hit and again.summary.cost == summary["cost"]
    # a model that writes no cost.tsv has no cost section
    plain = run_benchmark(fake_models("fake_plain"), "mini_en", JobSpec(**kw))
    assert plain.summary.cost is None and not (plain.out_dir / "cost.tsv").exists()
