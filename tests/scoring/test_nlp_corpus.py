"""A folder of NLP recordings through `ops/score` (asrbench/entity_scoring.py): cut in a pool of
processes (`--jobs`) with the same files as in one, and the NSW readings of the entity mapping
kept for the next run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from asrbench.entity_scoring import POOL_MIN_PIECES, nlp_utterances, pool_size, tagged
from asrbench.settings import REPO_ROOT
from tests.conftest import own_cache

E21 = REPO_ROOT / "tests" / "fixtures" / "earnings21"
FILES = ("utterances.jsonl", "table.txt", "hyp.sys", "summary.json")


def _corpus(tmp_path: Path, n: int) -> tuple[Path, Path]:
    """n recordings: the Earnings-21 excerpt under n IDs (each cut into chunks), Google's
    output for each, all but the first shortened so they differ."""
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    ref.mkdir()
    hyp.mkdir()
    lines = (E21 / "google" / "4320211.nlp").read_text(encoding="utf-8").splitlines()
    for k in range(n):
        shutil.copy(E21 / "4320211.nlp", ref / f"r{k}.nlp")
        kept = lines[: len(lines) - 7 * k]
        (hyp / f"r{k}.nlp").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return ref, hyp


def test_a_pool_writes_the_same_files_as_one_process(cli, tmp_path: Path) -> None:
    ref, hyp = _corpus(tmp_path, 3)
    outs = {}
    for jobs in ("1", "2"):
        outs[jobs] = tmp_path / f"o{jobs}"
        code, _, err = cli("score", ref, hyp, "--no-nsw", "-j", jobs, "-o", outs[jobs])
        assert code == 0, err
    for name in FILES:
        assert (outs["1"] / name).read_bytes() == (outs["2"] / name).read_bytes(), name
    assert b'"r2"' in (outs["2"] / "utterances.jsonl").read_bytes()


def test_the_pool_is_for_many_long_recordings() -> None:
    few = [("a", [None] * 10, "x"), ("b", [None] * 10, "y")]
    many = [("a", [None] * POOL_MIN_PIECES, "x"), ("b", [None] * 10, "y")]
    assert pool_size(None, few) == 1
    assert pool_size(None, many[:1]) == 1  # one recording: nothing to share out
    assert pool_size(None, many) == min(2, os.cpu_count() or 1)
    assert pool_size(1, many) == 1 and pool_size(8, many) == 2  # bound by the recordings


def test_jobs_below_one_is_refused(cli, tmp_path: Path) -> None:
    ref, hyp = _corpus(tmp_path, 1)
    code, _, err = cli("score", ref, hyp, "--no-nsw", "-j", "0", "-o", tmp_path / "o")
    assert code == 2 and "--jobs 0" in err and "Traceback" not in err


def test_the_entity_mappings_readings_are_kept(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After one run nothing is left for nemo to read: the pieces the entity mapping reads
    on their own are stored with the scorer's readings."""
    from asrbench.cli.score import EntityInputs, _read_inputs
    from asrbench.scorers import get_scorer

    cache = own_cache(tmp_path / "cache")
    (cache / "nsw_results.sqlite").unlink(missing_ok=True)  # this test's copy: reads counted
    monkeypatch.setenv("ASRBENCH_CACHE", str(cache))
    # scorers are built once per process: one an earlier test built reads another cache
    monkeypatch.setattr("asrbench.scorers._SCORERS", {})
    ref, hyp = E21 / "4320211.nlp", E21 / "google" / "4320211.nlp"
    code, _, err = cli("score", ref, hyp, "-o", tmp_path / "o")
    assert code == 0, err
    scorer = get_scorer("en", {"bootstrap": 0})
    refs, hyps, recs, _, _ = _read_inputs(ref, hyp, ("auto", "auto"), EntityInputs())
    assert recs is not None and scorer.nsw is not None
    before = scorer.nsw.calls
    tagged(scorer, nlp_utterances(scorer, refs, hyps, recs), recs)
    assert scorer.nsw.calls == before


def test_the_entity_mappings_pieces_read_in_one_batch_as_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Scorer.normalize_batch` over a recording's piece texts, cold, the new strings read by
    two processes (thresholds lowered to a test's size): each text's tokens as
    `Scorer.normalize` gives them one at a time, in another cold cache."""
    from scoring import Scorer, ScorerConfig
    from scoring.nlp import read_nlp, reference_pieces
    from scoring.normalize import nsw as nsw_module

    monkeypatch.setattr(nsw_module, "POOL_MIN_READS", 2)
    monkeypatch.setattr(nsw_module, "READ_BLOCK", 1)
    pieces = reference_pieces(read_nlp(E21 / "4320211.nlp"), None)
    texts = list(dict.fromkeys(p.branches[0] for p in pieces))
    scorers = []
    for name in ("batch", "single"):
        cache = own_cache(tmp_path / name)
        (cache / "nsw_results.sqlite").unlink(missing_ok=True)
        scorers.append(Scorer(ScorerConfig(bootstrap=0, cache_dir=str(cache))))
    batch, single = scorers
    assert batch.nsw is not None and single.nsw is not None
    batch.nsw.jobs = 2
    assert batch.normalize_batch(texts) == [single.normalize(t) for t in texts]
    assert batch.nsw.calls == single.nsw.calls > 2


def test_the_entity_mappings_strings_are_read_ahead_beside_the_alignment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cold, in two processes (thresholds lowered to a test's size): the entity mapping's new
    strings are still being read in the background when the recordings are scored, and
    joined when the mapping starts; the same results, tags and strings read as in one
    process."""
    from asrbench.cli.score import EntityInputs, _read_inputs
    from scoring import Scorer, ScorerConfig
    from scoring.normalize import nsw as nsw_module

    monkeypatch.setattr(nsw_module, "POOL_MIN_READS", 2)
    monkeypatch.setattr(nsw_module, "READ_BLOCK", 1)
    ref, hyp = E21 / "4320211.nlp", E21 / "google" / "4320211.nlp"
    runs = []
    for jobs in (1, 2):
        cache = own_cache(tmp_path / f"c{jobs}")
        (cache / "nsw_results.sqlite").unlink(missing_ok=True)
        scorer = Scorer(ScorerConfig(bootstrap=0, cache_dir=str(cache)))
        refs, hyps, recs, _, _ = _read_inputs(ref, hyp, ("auto", "auto"), EntityInputs())
        assert recs is not None and scorer.nsw is not None
        utts = nlp_utterances(scorer, refs, hyps, recs, jobs)
        ahead = scorer.nsw._ahead is not None
        tags = tagged(scorer, utts, recs)
        assert scorer.nsw._ahead is None
        runs.append((ahead, utts, tags, scorer.nsw.calls))
    assert [r[0] for r in runs] == [False, True]
    assert runs[0][1:] == runs[1][1:]
