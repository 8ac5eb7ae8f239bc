"""Whisper batching (`runtime.batch_size`, `ASRBENCH_BATCH_SIZE`): faster-whisper's
`BatchedInferencePipeline` behind the Whisper cards' program (`_common/whisper_transcribe.py`).

The real program and tiny.en weights through the local runner, on four short mini_en utterances:
every utterance transcribed and timed; its text the same whichever utterances share its batch
(the contract: a hypothesis must not depend on the shard, the order or the resume point); and
here the same as the sequential path's (the full-set comparison, where the pipeline's decoding
may differ, is benchmarks/whisper_batching.py, docs/BENCHMARKS.md). The look-ahead and the
batch-size check are tested on their own. About 25 s on a loaded two-core machine.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from asrbench.resolve import resolve_model
from asrbench.runners.base import RunOptions
from asrbench.runners.local import LocalRunner
from asrbench.settings import REPO_ROOT


@pytest.fixture(scope="module")
def program():
    """The program as a module: its folder is its import root (it imports `contract`,
    `weights`); the names are taken out of sys.modules again afterwards."""
    names = ("whisper_transcribe", "contract", "weights")
    before = {n: sys.modules.get(n) for n in names}
    sys.path.insert(0, str(REPO_ROOT / "models" / "_common"))
    try:
        yield importlib.import_module("whisper_transcribe")
    finally:
        sys.path.remove(str(REPO_ROOT / "models" / "_common"))
        for name, module in before.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def tsv(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return dict(line.split("\t", 1) for line in lines)


def test_a_batch_gives_each_utterance_the_text_it_gets_in_any_other_batch(mini, few, tmp_path):
    model, runner = resolve_model("whisper_tiny_en"), LocalRunner()
    batched = RunOptions(env={"ASRBENCH_BATCH_SIZE": "3"})
    forward = runner.run(model, mini, tmp_path / "forward", few, batched)
    backward = runner.run(model, mini, tmp_path / "backward", few[::-1], batched)
    hyps = tsv(forward.hyp_path)
    assert set(hyps) == {u.id for u in few} and all(hyps.values()), hyps
    assert set(tsv(forward.hyp_path.parent / "timing.tsv")) == set(hyps)
    assert not tsv(forward.hyp_path.parent / "failed.tsv")
    assert "batch size 3" in forward.log_path.read_text(encoding="utf-8")
    # [a b c] [d] forward, [d c b] [a] backward: other companions, the same text
    assert tsv(backward.hyp_path) == hyps
    sequential = runner.run(model, mini, tmp_path / "sequential", few)
    assert "batch size 1" in sequential.log_path.read_text(encoding="utf-8")
    assert tsv(sequential.hyp_path) == hyps


def test_the_look_ahead_follows_the_wav_list_and_skips_what_is_done(program, tmp_path):
    wav_list = tmp_path / "wav.list"
    wav_list.write_text("".join(f"u{i}\t/d/{i}.wav\n" for i in range(6)), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "hyp.tsv").write_text("u1\tdone before a crash\n", encoding="utf-8")
    (out / "failed.tsv").write_text("u3\tunreadable\n", encoding="utf-8")
    ahead = program.Ahead([str(wav_list), str(out)])
    assert ahead.after("/d/0.wav", 2, {}) == ["/d/2.wav", "/d/4.wav"]
    assert ahead.after("/d/0.wav", 2, {"/d/2.wav": ()}) == ["/d/4.wav", "/d/5.wav"]
    assert ahead.after("/d/5.wav", 3, {}) == []
    assert ahead.after("/elsewhere.wav", 3, {}) == []  # not in the list: a batch of one


def test_a_named_pipe_gives_no_look_ahead(program, tmp_path):
    fifo = tmp_path / "wav.fifo"
    os.mkfifo(fifo)
    assert program.Ahead([str(fifo), str(tmp_path)]).paths == []


@pytest.mark.parametrize(
    ("card_value", "env_value"), [(0, None), (2.5, None), (2, "two"), (1, "-3")]
)
def test_a_bad_batch_size_is_refused_naming_the_card_and_the_variable(
    program, card_value, env_value, monkeypatch
):
    if env_value is None:
        monkeypatch.delenv("ASRBENCH_BATCH_SIZE", raising=False)
    else:
        monkeypatch.setenv("ASRBENCH_BATCH_SIZE", env_value)
    card = {"id": "whisper_x", "runtime": {"batch_size": card_value}}
    with pytest.raises(SystemExit) as exc:
        program.batch_size(card)
    assert "models/whisper_x/model.yaml" in str(exc.value)
    assert "ASRBENCH_BATCH_SIZE" in str(exc.value)


def test_the_batch_size_comes_from_the_card_unless_the_environment_says(program, monkeypatch):
    monkeypatch.delenv("ASRBENCH_BATCH_SIZE", raising=False)
    assert program.batch_size({"id": "w", "runtime": {}}) == 1
    assert program.batch_size({"id": "w", "runtime": {"batch_size": 8}}) == 8
    monkeypatch.setenv("ASRBENCH_BATCH_SIZE", "2")
    assert program.batch_size({"id": "w", "runtime": {"batch_size": 8}}) == 2


@pytest.mark.full
def test_an_utterance_longer_than_the_window_is_cut_by_vad_and_batched(mini, tmp_path):
    """43 s of five mini_en utterances with half-second pauses: beyond Whisper's 30-s window,
    so the batched program hands it to the pipeline's VAD, whose clips are decoded together;
    every part's words come back (recall against the references, as tests/models/
    test_docker_models.py does)."""
    import subprocess
    import wave

    import numpy as np

    utts = [u for u in mini.utterances if 5.0 < u.duration < 10.0][:5]
    pcm = []
    for u in utts:
        with wave.open(str(mini.audio_path(u)), "rb") as w:
            pcm += [np.frombuffer(w.readframes(w.getnframes()), "<i2"), np.zeros(8000, "<i2")]
    long_wav = tmp_path / "long.wav"
    with wave.open(str(long_wav), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(np.concatenate(pcm).tobytes())
    src = tmp_path / "src"
    src.mkdir()
    for name in ("contract.py", "weights.py", "whisper_transcribe.py"):
        (src / name).write_bytes((REPO_ROOT / "models" / "_common" / name).read_bytes())
    (src / "model.yaml").write_bytes((REPO_ROOT / "models/whisper_tiny_en/model.yaml").read_bytes())
    (tmp_path / "wav.list").write_text(f"long\t{long_wav}\n", encoding="utf-8")
    env = {**os.environ, "ASRBENCH_BATCH_SIZE": "4"}
    cmd = [sys.executable, str(src / "whisper_transcribe.py"), "wav.list", "out"]
    subprocess.run(cmd, cwd=tmp_path, env=env, check=True, capture_output=True, timeout=600)
    hyp = set(tsv(tmp_path / "out" / "hyp.tsv")["long"].lower().replace(",", " ").split())
    for u in utts:
        words = [w.strip(".,;:!?\"'") for w in u.text.lower().replace(",", " ").split()]
        recall = sum(w in hyp for w in words) / len(words)
        assert recall > 0.8, (u.id, recall, sorted(hyp))
