"""`ops/serve` end to end: a real zoo model (Whisper tiny.en in Docker) behind the OpenAI
transcription API, transcribed through the `openai_api_en` wrapper over 127.0.0.1."""

from __future__ import annotations

import io
import os
import re
import subprocess
import threading
import wave
from collections.abc import Iterator

import pytest
import requests
from models_support import require

from asrbench.images import engine_available
from asrbench.resolve import resolve_model
from asrbench.runners import RunnerError, RunOptions, read_tsv_pairs
from asrbench.runners.local import LocalRunner

pytestmark = [pytest.mark.docker, pytest.mark.slow]
KEY = "serve-test-key-31337"


@pytest.fixture(scope="module")
def server(repo_root) -> Iterator[str]:
    require("docker", engine_available(), "no Docker Engine answers")
    env = {**os.environ, "ASRBENCH_SERVE_KEY": KEY}
    proc = subprocess.Popen(
        [str(repo_root / "ops" / "serve"), "-m", "whisper_tiny_en", "--runner", "docker",
         "--port", "0", "--api-key-env", "ASRBENCH_SERVE_KEY"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=600)  # the first start may build the image
    if not first or not first[0].startswith("http://127.0.0.1:"):
        proc.kill()
        pytest.fail(f"ops/serve did not start: {first} {proc.stderr.read()[-2000:]}")
    yield first[0].strip()
    proc.terminate()
    proc.wait(timeout=30)


def words(text: str) -> list[str]:
    return re.sub(r"[^\w\s']", " ", text.lower()).split()


def test_openai_wrapper_end_to_end_against_real_asr(server, mini, few, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    utts = few[:2]
    options = RunOptions(timeout_s=600, env={"OPENAI_BASE_URL": server,
                                             "ASRBENCH_API_CONCURRENCY": "2"})
    result = LocalRunner().run(resolve_model("openai_api_en"), mini, tmp_path, utts, options)
    hyps = read_tsv_pairs(result.hyp_path)
    assert set(hyps) == {u.id for u in utts}
    for u in utts:
        ref, hyp = words(u.text), set(words(hyps[u.id]))
        assert sum(w in hyp for w in ref) / len(ref) > 0.7, (u.text, hyps[u.id])
    assert KEY not in result.log_path.read_text()


def test_wrong_key_is_rejected_and_wrapper_fails_fast(server, mini, few, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-the-key")
    options = RunOptions(timeout_s=300, env={"OPENAI_BASE_URL": server})
    with pytest.raises(RunnerError, match="rejected the credentials.*OPENAI_API_KEY"):
        LocalRunner().run(resolve_model("openai_api_en"), mini, tmp_path, few[:1], options)


def test_serve_rejects_non_wav_and_wrong_rate(server):
    url = server + "/audio/transcriptions"
    auth = {"Authorization": f"Bearer {KEY}"}
    r = requests.post(url, headers=auth, files={"file": ("x.mp3", b"ID3not-a-wav")},
                      data={"model": "x"}, timeout=30)
    assert r.status_code == 400 and "WAV" in r.json()["error"]["message"]
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\0\0" * 800)
    r = requests.post(url, headers=auth, files={"file": ("x.wav", buf.getvalue())}, timeout=30)
    assert r.status_code == 400 and "16000 Hz" in r.json()["error"]["message"]
    models = requests.get(server + "/models", timeout=30).json()
    assert models["data"][0]["id"] == "whisper_tiny_en"
