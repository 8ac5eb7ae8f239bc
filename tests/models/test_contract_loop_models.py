"""Every local model family, its real program and weights through the local runner, on three
real mini_en utterances, one of them made to hang: the per-utterance timeout
(`ASRBENCH_UTT_TIMEOUT`) fails that one and the others are transcribed, with the same text the
program gives without a timeout (in its own process).

The hang is the shared loop's test hook (`ASRBENCH_TEST_HANG_ID`, `models/_common/contract.py`):
inside the model's worker process, on that utterance, a block in C that no signal ends, as a
decoder stuck in native code would be. What is real: each family's program, its model loaded in
the worker, the kill, the fresh worker that loads the model again and transcribes the rest.

Each waits out the timeout once, plus two model loads and four decodes. The timeout was 30 s
(34 s a family in the 2026-11-29 `make test`); it is 10 s now, over twice the slowest
of these short decodes on a loaded two-core machine (docs/MEASUREMENTS.md, "make test within 20
minutes"). PocketSphinx and faster-whisper run in `make test`; whisper.cpp is `full`, and so is
Moonshine (not measurable there, see below). A family whose
native library dies with SIGILL while loading (libmoonshine on a CPU without the instructions it
was built for) is skipped, unless ASRBENCH_REQUIRE names it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from asrbench.resolve import resolve_model
from asrbench.runners.base import RunnerError, RunOptions
from asrbench.runners.local import LocalRunner
from tests.conftest import require_cpu

TIMEOUT = "10"  # seconds: several times a short utterance's decode here, even under load
FAMILIES = [
    pytest.param("pocketsphinx_en", id="pocketsphinx"),
    # `full` (14-34 s each): pocketsphinx keeps the hung-utterance contract in `make test`
    pytest.param("whisper_tiny_en", id="faster-whisper", marks=pytest.mark.full),
    pytest.param("whispercpp_tiny_en", id="whisper.cpp", marks=pytest.mark.full),
    pytest.param("moonshine_base_en", id="moonshine", marks=pytest.mark.full),
]


def tsv(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return dict(line.split("\t", 1) for line in lines)


@pytest.mark.parametrize("model_id", FAMILIES)
def test_a_hung_utterance_is_failed_by_the_timeout_and_the_rest_transcribed(
    model_id, mini, tmp_path
):
    utts = sorted(mini.utterances, key=lambda u: u.duration)[:3]
    hung = utts[1].id
    model, runner = resolve_model(model_id), LocalRunner()
    env = {"ASRBENCH_UTT_TIMEOUT": TIMEOUT, "ASRBENCH_TEST_HANG_ID": hung}
    try:
        result = runner.run(model, mini, tmp_path / "cut", utts, RunOptions(env=env))
    except RunnerError as exc:  # libmoonshine needs CPU instructions some machines lack
        require_cpu(model_id, "killed by signal 4" not in str(exc), str(exc))
        raise
    out = result.hyp_path.parent
    assert tsv(out / "failed.tsv") == {hung: f"timeout after {TIMEOUT} s"}
    hyps = tsv(out / "hyp.tsv")
    assert set(hyps) == {u.id for u in utts} - {hung}
    assert set(tsv(out / "timing.tsv")) == set(hyps)
    assert all(hyps.values()), hyps
    log = result.log_path.read_text(encoding="utf-8")
    assert "model loaded again" in log  # a fresh worker after the kill
    # The worker gives exactly the text the program gives in its own process.
    plain = runner.run(model, mini, tmp_path / "plain", [u for u in utts if u.id != hung])
    assert tsv(plain.hyp_path) == hyps
    # ... and without a timeout the program runs the model in its own process, unless its card
    # recycles the worker by memory (moonshine: `runtime.recycle_rss_mb`), which needs one
    if not (model.card.extra.get("runtime") or {}).get("recycle_rss_mb"):
        assert "worker process" not in plain.log_path.read_text(encoding="utf-8")
