"""ops/benchmark on long recordings (issue 29, item 2): segmentation per run, pieces run with the
normal machinery, reassembled per recording, scored against the long-form reference.

Real programs only: the fake model of tests/benchmark (no packages, local runner) for identity,
failure and resume; PocketSphinx (local runner) for a real segmented, scored recording.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import soundfile as sf

from asrbench.benchmark.cache import cache_key
from asrbench.benchmark.pieces import SegmentRequest, piece_rows, plan_segmentation
from asrbench.benchmark.request import JobSpec
from asrbench.benchmark.run import run_benchmark
from asrbench.errors import InputError
from asrbench.resolve import resolve_dataset
from asrbench.segmentation import SegmentationError
from asrbench.settings import REPO_ROOT
from tests.benchmark.conftest import make_fake_model
from tests.conftest import (
    communicate_or_explain,
    hyp_lines_written,
    start_job,
)
from tests.factories import edit_card


@pytest.fixture
def env() -> Path:
    """The settings cache the pieces datasets go to: the default one, as for every run (they
    are named by content and moved in whole, so runs and tests share them safely; a temporary
    one would also move the local runner's virtualenvs and the scorer's compiled grammars,
    rebuilding them here)."""
    from asrbench.settings import settings

    return settings().cache


def _fake(tmp_path: Path, name: str, limit: float | None = 12, **kw) -> Path:
    return make_fake_model(tmp_path / "models", name, max_input_s=limit, **kw)


def _spec(tmp_path: Path, **kw) -> JobSpec:
    return JobSpec(
        runner="local",
        results_root=tmp_path / "results",
        cache_root=tmp_path / "hyps",
        progress=False,
        scorer_options={"nsw": False},
        command=("test",),
        **kw,
    )


def _run_json(cell: Path) -> dict:
    return json.loads((cell / "run.json").read_text())


def test_no_segmentation_keeps_the_identity(env: Path, tmp_path: Path) -> None:
    """auto that cuts nothing (every utterance within the card's limit: mini_en's longest is
    11 s; a card without a limit) is the run without segmentation: same cache key (runtime
    without a segmentation entry), same result key, same summary bytes, no segmentation
    record, no timed file."""
    model = _fake(tmp_path, "fake_limited")
    a = run_benchmark(model, "mini_en", _spec(tmp_path, max_utts=4))
    b = run_benchmark(model, "mini_en", _spec(tmp_path / "b", max_utts=4, segment="none"))
    run_a = _run_json(a.out_dir)
    assert run_a["cache"]["inputs"]["runtime"] == {"env": {}, "gpus": None}
    ds = resolve_dataset("mini_en")
    key, _ = cache_key(run_a["model"]["identity"], ds.content_hash(), {"env": {}, "gpus": None})
    assert a.summary.hyps_key == b.summary.hyps_key == key
    assert a.summary.result_key == b.summary.result_key
    assert (a.out_dir / "summary.json").read_bytes() == (b.out_dir / "summary.json").read_bytes()
    assert "segmentation" not in run_a["options"]
    assert not (a.out_dir / "hyp.timed.jsonl").exists()
    # a long-form dataset with a card that has no limit: the model's own decoding, unchanged
    free = _fake(tmp_path, "fake_free", limit=None)
    c = run_benchmark(free, "mini_long_en", _spec(tmp_path / "c"))
    d = run_benchmark(free, "mini_long_en", _spec(tmp_path / "d", segment="none"))
    assert c.summary.result_key == d.summary.result_key
    assert _run_json(c.out_dir)["cache"]["utts_run"] == 2  # two whole recordings


def test_segmentation_changes_the_key_and_is_recorded(env: Path, tmp_path: Path) -> None:
    model = _fake(tmp_path, "fake_limited")
    cells = {
        mode: run_benchmark(model, "mini_long_en", _spec(tmp_path / mode, segment=mode))
        for mode in ("auto", "none", "windows")
    }
    keys = {m: c.summary.result_key for m, c in cells.items()}
    assert len(set(keys.values())) == 3
    seg = _run_json(cells["auto"].out_dir)["options"]["segmentation"]
    assert (seg["mode"], seg["method"], seg["merge"]) == ("auto", "vad", "concat")
    assert seg["record"]["max_segment_s"] == 12.0  # the card's limit
    assert set(seg["cut"]) == {"lj_reading", "fsdd_jackson_numbers"} and seg["whole"] == []
    pieces = resolve_dataset(seg["pieces_dataset"]["folder"])
    assert all(u.duration <= 12.0 + 1e-3 for u in pieces.utterances)
    assert sum(seg["cut"].values()) == len(pieces.utterances)
    # the pieces are the cell's stage: the cell keeps the recordings' dataset hash and its own
    # key; the model's hypotheses live in the pieces' cache entry
    run = _run_json(cells["auto"].out_dir)
    assert run["cache"]["key"] == cells["auto"].summary.hyps_key != seg["pieces_cache_key"]
    assert Path(run["cache"]["folder"]).name == seg["pieces_cache_key"]
    assert run["dataset"]["hash"] == resolve_dataset("mini_long_en").content_hash()
    win = _run_json(cells["windows"].out_dir)["options"]["segmentation"]
    assert (win["record"]["window_s"], win["record"]["overlap_s"]) == (12.0, 3.0)
    # every recording scored whole: one line per recording, the fake's text once per piece
    hyps = dict(
        line.split("\t", 1)
        for line in (cells["auto"].out_dir / "hyp.raw.tsv").read_text().splitlines()
    )
    for rid, n in seg["cut"].items():
        assert hyps[rid].split() == "in being comparatively modern".split() * n
    timed = [json.loads(x) for x in (cells["auto"].out_dir / "hyp.timed.jsonl").open()]
    assert [t["id"] for t in timed] == sorted(seg["cut"])
    for t in timed:
        assert len(t["segments"]) == seg["cut"][t["id"]]
        starts = [s["start"] for s in t["segments"]]
        assert starts == sorted(starts)
    # the report's timeline is stored with the cell (results/derived.py): the recordings'
    # timelines from the parent dataset's segments, the model's output spans from the pieces
    stored = json.loads((cells["auto"].out_dir / "timeline.json").read_text())
    assert stored["format"] == "asrbench-timeline-v1" and stored["note"] is None
    assert [r["id"] for r in stored["recordings"]] == sorted(seg["cut"])
    for r in stored["recordings"]:
        assert len(r["output"]) == seg["cut"][r["id"]] and r["pause_words"] is not None


def test_bad_segmentation_options_are_one_line(env: Path) -> None:
    ds = resolve_dataset("mini_long_en")
    with pytest.raises(SegmentationError, match="thresold: not a parameter of --segment vad"):
        plan_segmentation(ds, ds.utterances, 12, SegmentRequest("vad", {"thresold": 0.4}))
    with pytest.raises(SegmentationError, match="window: not a parameter of --segment windows"):
        plan_segmentation(ds, ds.utterances, None, SegmentRequest("windows", {"window": 20}))
    # checked even where auto cuts nothing (a card without a limit)
    with pytest.raises(SegmentationError, match="thresold"):
        plan_segmentation(ds, ds.utterances, None, SegmentRequest("auto", {"thresold": 0.4}))
    with pytest.raises(SegmentationError, match="threshold=2.0"):
        plan_segmentation(ds, ds.utterances, 12, SegmentRequest("vad", {"threshold": 2.0}))
    with pytest.raises(InputError, match="--segment .vda."):
        JobSpec(segment="vda")


def test_a_failed_piece_fails_its_recording(env: Path, tmp_path: Path) -> None:
    model = _fake(tmp_path, "fake_failing", fail_ids=("lj_reading__0003",))
    cell = run_benchmark(model, "mini_long_en", _spec(tmp_path))
    (failed,) = cell.summary.failed
    assert failed["id"] == "lj_reading"
    assert failed["reason"].startswith("piece lj_reading__0003 (")
    assert "simulated decoder crash" in failed["reason"]
    hyp = (cell.out_dir / "hyp.raw.tsv").read_text()
    assert "lj_reading" not in hyp and "fsdd_jackson_numbers\t" in hyp  # never half a recording
    ref_words = len(resolve_dataset("mini_long_en").utterances[0].text.split())
    assert cell.metrics is not None and cell.metrics.n_ref >= ref_words  # counted, as deletions


def test_interrupted_run_resumes_at_the_missing_pieces(env: Path, tmp_path: Path) -> None:
    """Ctrl-C while pieces are in flight: nothing is scored; the rerun runs only the pieces
    that have no result, and scores whole recordings."""
    gate = tmp_path / "gate-open"
    model = _fake(tmp_path, "fake_gated", mode="gate", marker=gate)
    cache, results = tmp_path / "hyps", tmp_path / "r"
    cmd = [
        str(REPO_ROOT / "ops" / "benchmark"),
        *("-m", str(model), "-d", "mini_long_en", "--runner", "local", "--jobs", "2"),
        *("--max-utts", "1"),
        *("--cache", str(cache), "--results", str(results), "--no-progress"),
        *("--score-opt", "nsw=false"),
    ]
    proc = start_job(cmd)
    deadline, done = time.monotonic() + 120, 0
    while time.monotonic() < deadline and proc.poll() is None and done < 2:
        done = hyp_lines_written(cache)
        time.sleep(0.1)  # waiting on the state: one piece per shard written, both blocked
    assert done == 2 and proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = communicate_or_explain(proc, 120)
    assert proc.returncode == 130, err
    assert not results.exists() or not list(results.rglob("summary.json"))
    gate.write_text("open")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "resumed: 2 utterance(s) recovered" in p.stderr
    (cell,) = (results / "fake_gated").glob("mini_long_en~sample-*")
    run = _run_json(cell)
    seg = run["options"]["segmentation"]
    n_pieces = sum(seg["cut"].values())
    assert run["cache"]["utts_run"] == n_pieces - 2
    assert (cell / "hyp.raw.tsv").read_text().count("\n") == 1


@pytest.fixture(scope="module")
def short_long(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 40-s long-form dataset: the first LJ Speech sentences of mini_long_en's lj_reading, cut
    from its real audio with their exact segments (so a real model runs in CI time)."""
    src = REPO_ROOT / "datasets" / "mini_long_en"
    segs = [
        s
        for s in json.loads((src / "segments.seglst.json").read_text())
        if s["session_id"] == "lj_reading" and s["end_time"] <= 40
    ]
    root = tmp_path_factory.mktemp("data") / "short_long_en"
    (root / "audio").mkdir(parents=True)
    info = sf.info(src / "audio" / "lj_reading.wav")
    y, rate = sf.read(
        src / "audio" / "lj_reading.wav",
        frames=round((segs[-1]["end_time"] + 0.5) * info.samplerate),
        dtype="int16",
    )
    sf.write(root / "audio" / "digits.wav", y, rate, subtype="PCM_16")
    for s in segs:
        s["session_id"] = "digits"
    lines = ",\n".join(json.dumps(s) for s in segs)
    (root / "segments.seglst.json").write_text(f"[\n{lines}\n]\n")
    text = " ".join(s["words"] for s in segs)
    (root / "metadata.tsv").write_text(
        f"ID\tAUDIO\tDURATION\tTEXT\ndigits\taudio/digits.wav\t{len(y) / rate:.3f}\t{text}\n"
    )
    (root / "dataset.yaml").write_text(
        "id: short_long_en\nlanguage: en\nsample_rate: 16000\nkind: longform\n"
    )
    return root


def test_pocketsphinx_segmented_and_scored(env: Path, tmp_path: Path, short_long: Path) -> None:
    """A real model through VAD (auto: the recording is over the card's 30 s): pieces within
    the limit, their texts joined in time order, scored against the whole reference."""
    (one,) = resolve_dataset(short_long).utterances
    assert one.duration > 30
    cell = run_benchmark(REPO_ROOT / "models" / "pocketsphinx_en", short_long, _spec(tmp_path))
    run = _run_json(cell.out_dir)
    seg = run["options"]["segmentation"]
    assert (seg["mode"], seg["method"], list(seg["cut"])) == ("auto", "vad", ["digits"])
    pieces = resolve_dataset(seg["pieces_dataset"]["folder"])
    rows = piece_rows(pieces)["digits"]
    assert len(rows) == seg["cut"]["digits"] > 1 and all(r.span.duration <= 30.0 for r in rows)
    piece_hyps = dict(
        line.split("\t", 1)
        for line in (Path(run["cache"]["folder"]) / "hyp.tsv").read_text().splitlines()
    )
    joined = " ".join(piece_hyps[r.id].strip() for r in rows if piece_hyps[r.id].strip())
    assert (cell.out_dir / "hyp.raw.tsv").read_text() == f"digits\t{joined}\n"
    m = cell.metrics
    assert m is not None and m.n_ref == len(one.text.split())
    assert m.ter is not None and m.ter < 1.0  # a real transcript, scored as one session
    # PocketSphinx's own word times, shifted by each piece's start into the recording
    (timed,) = [json.loads(x) for x in (cell.out_dir / "hyp.timed.jsonl").open()]
    assert timed["source"] == "model"
    assert " ".join(w["word"] for w in timed["words"]) == joined
    spoken = [r for r in rows if piece_hyps[r.id].strip()]
    assert len(timed["segments"]) == len(spoken)
    for seg, r in zip(timed["segments"], spoken, strict=True):
        assert r.span.start <= seg["start"] <= seg["end"] <= r.span.end + 0.02
        assert seg["text"] == piece_hyps[r.id].strip()


def test_timed_output_is_checked(tmp_path: Path) -> None:
    """A program's hyp.timed.jsonl: bad lines are contract problems, ignored; the last line
    of an ID wins; a torn last line is dropped."""
    from asrbench.results.timed import read_hyp_timed

    path = tmp_path / "hyp.timed.jsonl"
    good = {"id": "a", "segments": [{"start": 0, "end": 1.5, "text": "hi"}], "words": []}
    lines = [
        json.dumps({**good, "segments": []}),
        json.dumps(good),
        "{not json",
        json.dumps({"id": "b", "segments": [{"start": 2.0, "end": 1.0, "text": "x"}]}),
        json.dumps({"id": "c", "segments": [], "words": [{"start": -1, "end": 1, "word": "x"}]}),
        json.dumps({"id": "z", "segments": []}),
        json.dumps({"id": "a", "segments": []}),  # torn: no newline after it
    ]
    path.write_text("\n".join(lines))
    timed, problems = read_hyp_timed(path, given={"a", "b", "c"})
    assert timed == {"a": {"id": "a", "segments": [good["segments"][0]], "words": []}}
    assert [p.split(":")[0] for p in problems] == [
        f"hyp.timed.jsonl line {n}" for n in (3, 4, 5, 6)
    ]
    assert "not in the wav list" in problems[-1]


@pytest.fixture(scope="module")
def mixed_utts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ordinary (utterance) dataset: three real mini_en utterances of 1.9, 5.1 and 9.7 s."""
    src = REPO_ROOT / "datasets" / "mini_en"
    ids = ("LJ001-0002", "LJ001-0004", "LJ001-0001")
    lines = (src / "metadata.tsv").read_text().splitlines()
    rows = [x for x in lines[1:] if x.split("\t")[0] in ids]
    root = tmp_path_factory.mktemp("data") / "three_en"
    (root / "audio").mkdir(parents=True)
    for row in rows:
        audio = row.split("\t")[1]
        (root / audio).write_bytes((src / audio).read_bytes())
    (root / "metadata.tsv").write_text("\n".join([lines[0], *rows]) + "\n")
    (root / "dataset.yaml").write_text("id: three_en\nlanguage: en\nsample_rate: 16000\n")
    return root


def _card_with_limit(tmp_path: Path, limit: float) -> Path:
    """models/pocketsphinx_en, its card declaring a lower `max_input_s` (same id and
    requirements: the local runner's virtualenv is shared)."""
    folder = tmp_path / "models" / "pocketsphinx_en"
    shutil.copytree(REPO_ROOT / "models" / "pocketsphinx_en", folder, ignore=_PYCACHE)

    def lower(card: dict) -> None:
        assert card["max_input_s"] == 30
        card["max_input_s"] = limit

    return edit_card(folder, lower)


_PYCACHE = shutil.ignore_patterns("__pycache__")


def test_auto_cuts_only_the_utterances_over_the_limit(
    env: Path, tmp_path: Path, mixed_utts: Path
) -> None:
    """`--segment auto` (the default) on an ordinary dataset: the utterance longer than the
    card's limit is cut by VAD, the others go whole and come out as without segmentation (a
    real model, PocketSphinx, its card copied with a 6-s limit)."""
    model = _card_with_limit(tmp_path, 6)
    auto = run_benchmark(model, mixed_utts, _spec(tmp_path / "auto"))
    plain = run_benchmark(model, mixed_utts, _spec(tmp_path / "none", segment="none"))
    seg = _run_json(auto.out_dir)["options"]["segmentation"]
    assert (seg["mode"], seg["method"], list(seg["cut"])) == ("auto", "vad", ["LJ001-0001"])
    assert sorted(seg["whole"]) == ["LJ001-0002", "LJ001-0004"]
    pieces = piece_rows(resolve_dataset(seg["pieces_dataset"]["folder"]))
    assert len(pieces["LJ001-0001"]) == seg["cut"]["LJ001-0001"] > 1
    assert all(r.span.duration <= 6.0 + 1e-3 for r in pieces["LJ001-0001"])
    assert [len(pieces[x]) for x in seg["whole"]] == [1, 1]

    def hyps(cell) -> dict[str, str]:
        rows = (cell.out_dir / "hyp.raw.tsv").read_text().splitlines()
        return dict(x.split("\t", 1) for x in rows)

    cut, whole = hyps(auto), hyps(plain)
    for rid in seg["whole"]:
        assert cut[rid] == whole[rid]  # the same audio, the same program: the same text
    assert cut["LJ001-0001"].split() and auto.metrics is not None and plain.metrics is not None
    assert auto.metrics.n_ref == plain.metrics.n_ref and not auto.summary.failed
    assert auto.summary.result_key != plain.summary.result_key
