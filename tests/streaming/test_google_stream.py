"""google_stt_en's streaming program (models/google_stt_en/stream.py, gRPC StreamingRecognize)
against a loopback gRPC server of the same protos (tests/stubs/google_grpc.py), started as
`ops/stream --runner local` starts it and driven by the platform's paced feed, on real mini_en
audio where the transcript's length matters and on the stubs' word audio elsewhere.

Partials then the exact final; what the client sent (configuration first, then audio only, in
100-ms pieces, the key or the bearer token); a dropped stream (UNAVAILABLE, OUT_OF_RANGE)
reconnected with the unfinalised audio sent once more (nothing lost, nothing doubled); the
stream restarted before Google's duration limit; RESOURCE_EXHAUSTED backed off (never sooner
than its RetryInfo) and retried per the card's policy, then failing past it; a status that is
not retryable mid-stream keeps the finals before it and fails the rest; rejected credentials
stop at once naming the secrets. Checked against the stub only, never Google.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from asrbench.resolve import resolve_dataset, resolve_model
from asrbench.runners import RunOptions
from asrbench.streaming import feed, program
from asrbench.streaming.run import read_pcm
from tests.stubs.google_grpc import TOKEN, GoogleSpeechStub, expected_words
from tests.stubs.streaming_vendors import BLOCK_S, KEY, words_audio

RATE = 16000
PACE = feed.Pace(RATE, chunk_ms=100, speed=10.0)
BLOCK = int(BLOCK_S * RATE) * 2  # bytes per stub word
# mini_en's three shortest utterances: 6, 7 and 7 stub words (1.6 to 1.9 s)
SHORT = ("cmu_arctic_us_axb_a0005", "LJ001-0008", "LJ001-0002")


@pytest.fixture(scope="module")
def mini() -> dict[str, bytes]:
    ds = resolve_dataset("mini_en")
    utts = {u.id: u for u in ds.utterances}
    return {uid: read_pcm(ds, utts[uid], RATE) for uid in SHORT}


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[GoogleSpeechStub]:
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.delenv("GOOGLE_ACCESS_TOKEN", raising=False)
    server = GoogleSpeechStub()
    yield server
    server.close()


class Program:
    """The streaming program as `ops/stream --runner local` starts it, the platform's reader
    on its stdout."""

    def __init__(self, server: GoogleSpeechStub, tmp: Path, **env: str):
        self.log = tmp / "stream.log"
        settings = {"GOOGLE_STT_GRPC_ENDPOINT": server.endpoint, "ASRBENCH_API_BACKOFF_S": "0.01"}
        options = RunOptions(env={**settings, **env})
        with self.log.open("wb") as log:
            self.started = program.start(resolve_model("google_stt_en"), "local", log, options)
        self.proc = self.started.proc
        self.reader = feed.Reader(self.proc.stdout).start()  # type: ignore[arg-type]
        feed.wait_ready(self.reader, timeout=120)

    def feed(self, audio: dict[str, bytes], pace: feed.Pace = PACE) -> list[feed.FedUtterance]:
        return feed.feed_all(self.proc.stdin, self.reader, list(audio.items()), pace)  # type: ignore[arg-type]

    def stop(self) -> tuple[int, str]:
        self.started.stop()
        return self.proc.returncode, self.log.read_text()


def synthetic(**utts: list[int]) -> dict[str, bytes]:
    return {uid: words_audio(values) for uid, values in utts.items()}


def text(pcm: bytes) -> str:
    return " ".join(expected_words(pcm))


def test_partials_then_the_exact_final_and_what_the_client_sent(stub, mini, tmp_path):
    prog = Program(stub, tmp_path)
    fed = prog.feed(mini)
    rc, log = prog.stop()
    assert rc == 0, log
    for f, pcm in zip(fed, mini.values(), strict=True):
        assert f.failed is None and f.final is not None and f.final.text == text(pcm)
        partials = [e for e in f.events if e.type == "partial"]
        # the finals so far plus the interim (Google's stable and unstable pieces joined)
        assert len(partials) == len(expected_words(pcm))
        assert all(text(pcm).startswith(p.text) for p in partials)
        assert partials[0].mono_recv < f.final.mono_recv
        assert [e.audio_s for e in f.events] == sorted(e.audio_s for e in f.events)
    assert stub.calls == 3  # one stream per utterance
    for call, pcm in zip(stub.received, mini.values(), strict=True):
        assert call.metadata["x-goog-api-key"] == KEY and "authorization" not in call.metadata
        cfg = call.config
        assert (cfg.config.language_code, cfg.config.model) == ("en-US", "default")
        assert cfg.interim_results and not cfg.config.enable_automatic_punctuation
        assert call.audio_bytes == len(pcm) and call.audio_requests == math.ceil(len(pcm) / 3200)
        assert call.half_closed and call.status == "OK"


def test_tls_by_default(tmp_path, monkeypatch):
    """An endpoint without `insecure://` is TLS: the stub's self-signed certificate, trusted
    through grpc's roots file, carries the same stream."""
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    server = GoogleSpeechStub(tls_dir=tmp_path)
    try:
        roots = {"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(server.ca_file)}
        prog = Program(server, tmp_path, **roots)
        fed = prog.feed(synthetic(a=[1, 2, 3, 4]))
        rc, log = prog.stop()
    finally:
        server.close()
    assert rc == 0, log
    assert fed[0].final is not None and fed[0].final.text == "w1 w2 w3 w4"
    assert server.calls == 1 and server.received[0].metadata["x-goog-api-key"] == KEY


def test_a_bearer_token_when_no_key_is_set(stub, tmp_path, monkeypatch):
    monkeypatch.delenv("GOOGLE_API_KEY")
    monkeypatch.setenv("GOOGLE_ACCESS_TOKEN", TOKEN)
    prog = Program(stub, tmp_path)
    fed = prog.feed(synthetic(a=[1, 2, 3, 4]))
    rc, log = prog.stop()
    assert rc == 0, log
    assert fed[0].final is not None and fed[0].final.text == "w1 w2 w3 w4"
    meta = stub.received[0].metadata
    assert meta["authorization"] == f"Bearer {TOKEN}" and "x-goog-api-key" not in meta


@pytest.mark.parametrize("code", ["UNAVAILABLE", "INTERNAL"])
def test_a_dropped_stream_is_reconnected_and_nothing_is_lost(stub, mini, tmp_path, code):
    uid = SHORT[0]
    stub.script = [("abort", code, 5)]  # after 5 words: 3 final, 2 only interim
    prog = Program(stub, tmp_path)
    fed = prog.feed({uid: mini[uid]})
    rc, log = prog.stop()
    assert rc == 0, log
    assert fed[0].final is not None and fed[0].final.text == text(mini[uid])
    assert stub.calls == 2 and f"gRPC {code}" in log and "reconnecting (1/4)" in log
    assert stub.received[0].status == code
    # the second stream got exactly the audio after the first final's end (3 words)
    assert stub.received[1].audio_bytes == len(mini[uid]) - 3 * BLOCK


@pytest.mark.parametrize("client_limit", ["0.9", "290"])
def test_the_stream_duration_limit(stub, tmp_path, client_limit):
    """Restarted before the limit (no error, not a reconnect); or, with the limit reached,
    Google's OUT_OF_RANGE reconnected: either way the exact transcript. (4x: a restart waits
    for the first final, which must come before the stream's audio passes the stub's limit.)"""
    stub.max_stream_s = 3.5 if client_limit == "0.9" else 1.0
    values = list(range(1, 13 if client_limit == "0.9" else 7))  # 3 s, 1.5 s of audio
    prog = Program(stub, tmp_path, GOOGLE_STT_MAX_STREAM_S=client_limit)
    fed = prog.feed(synthetic(a=values), feed.Pace(RATE, chunk_ms=100, speed=4.0))
    rc, log = prog.stop()
    assert rc == 0, log
    assert fed[0].final is not None and fed[0].final.text == " ".join(f"w{v}" for v in values)
    statuses = [c.status for c in stub.received]
    if client_limit == "0.9":
        assert "restarting the stream" in log and "reconnecting" not in log
        assert stub.calls == log.count("restarting the stream") + 1 >= 2
    else:  # aborted past 1 s, 3 words final: the second stream gets the last 0.75 s
        assert "Exceeded maximum allowed stream duration" in log and "reconnecting (1/4)" in log
        assert statuses == ["OUT_OF_RANGE", "OK"]
        assert stub.received[1].audio_bytes == 3 * BLOCK


def test_resource_exhausted_backs_off_and_is_retried(stub, tmp_path):
    stub.script = [("exhausted", 0.0), ("exhausted", 0.2)]
    prog = Program(stub, tmp_path)
    fed = prog.feed(synthetic(a=[1, 2, 3, 4]))
    rc, log = prog.stop()
    assert rc == 0, log
    assert fed[0].final is not None and fed[0].final.text == "w1 w2 w3 w4"
    assert stub.calls == 3 and log.count("gRPC RESOURCE_EXHAUSTED") == 2
    waits = [float(s) for s in re.findall(r"backing off ([0-9.]+) s \(throttled\)", log)]
    assert len(waits) == 2 and waits[1] >= 0.2  # never sooner than the RetryInfo
    assert "reconnecting (2/4)" in log


def test_resource_exhausted_past_the_policy_fails_the_utterance(stub, tmp_path):
    stub.script = [("exhausted", 0.0)] * 2
    prog = Program(stub, tmp_path, ASRBENCH_API_MAX_ATTEMPTS="2")
    fed = prog.feed(synthetic(a=[1, 2], b=[3]))
    rc, log = prog.stop()
    assert rc == 1 and "a: throttled: gRPC RESOURCE_EXHAUSTED" in log
    assert "after 1 reconnects" in log
    assert fed[0].failed and fed[1].failed and "not fed" in fed[1].failed
    assert stub.calls == 2


def test_a_status_not_retried_mid_stream_keeps_the_finals_and_fails_the_rest(stub, mini, tmp_path):
    first, second, third = SHORT
    stub.script = [("ok",), ("abort", "INVALID_ARGUMENT", 4)]
    prog = Program(stub, tmp_path)
    fed = prog.feed(mini)
    rc, log = prog.stop()
    assert rc == 1
    assert fed[0].failed is None and fed[0].final is not None
    assert fed[0].final.text == text(mini[first])
    assert fed[1].failed and "stream broke on this utterance" in fed[1].failed
    assert fed[2].failed and "not fed" in fed[2].failed
    assert f"{second}: client: gRPC INVALID_ARGUMENT" in log
    assert stub.calls == 2  # not retried


@pytest.mark.parametrize("how", ["wrong key", "wrong token", "API disabled"])
def test_rejected_credentials_stop_at_once_naming_the_secrets(stub, tmp_path, monkeypatch, how):
    if how == "wrong key":
        monkeypatch.setenv("GOOGLE_API_KEY", "wrong-key-0123456789")
    elif how == "wrong token":
        monkeypatch.delenv("GOOGLE_API_KEY")
        monkeypatch.setenv("GOOGLE_ACCESS_TOKEN", "wrong-token-0123456789")
    else:
        stub.script = [("deny",)]
    prog = Program(stub, tmp_path)
    fed = prog.feed(synthetic(a=[1, 2], b=[3]))
    rc, log = prog.stop()
    code = {"wrong key": "INVALID_ARGUMENT", "wrong token": "UNAUTHENTICATED"}
    assert rc == 1 and f"a: auth: gRPC {code.get(how, 'PERMISSION_DENIED')}" in log
    assert "check GOOGLE_API_KEY, GOOGLE_ACCESS_TOKEN" in log
    assert "reconnecting" not in log and "backing off" not in log and stub.calls == 1
    assert fed[0].failed and fed[1].failed and "not fed" in fed[1].failed


def test_plaintext_only_to_a_loopback_address(stub, tmp_path):
    prog = Program(stub, tmp_path, GOOGLE_STT_GRPC_ENDPOINT="insecure://192.0.2.1:443")
    fed = prog.feed(synthetic(a=[1]))
    rc, log = prog.stop()
    assert rc == 1 and "plaintext is allowed to a loopback address only" in log
    assert fed[0].failed and stub.calls == 0
