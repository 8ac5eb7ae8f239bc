"""Each vendor streaming program (models/<vendor>_en/stream.py) against a loopback stub of the
vendor's documented real-time protocol (tests/stubs/streaming_vendors.py), driven by the
platform's own paced feed (asrbench.streaming.feed), as `ops/stream --runner local` drives it.

For every vendor: partials then the final; a 429 at the handshake retried per the card's api
policy; a dropped connection reconnected with the unfinalised audio sent again (nothing lost,
nothing doubled); a close that is not retryable fails that utterance and the rest, the finals
before it kept. Everything here was checked against stubs only, never a vendor.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from asrbench.resolve import resolve_model
from asrbench.runners import RunOptions
from asrbench.streaming import feed, program
from tests.stubs.streaming_vendors import KEY, STUBS, StreamStub, words_audio

RATE = 16000
PACE = feed.Pace(RATE, chunk_ms=100, speed=10.0)
ENV = {  # the card's settings and secret, pointed at the stub
    "deepgram_en": ("DEEPGRAM_BASE_URL", "DEEPGRAM_API_KEY"),
    "assemblyai_en": ("ASSEMBLYAI_STREAMING_URL", "ASSEMBLYAI_API_KEY"),
    "openai_api_en": ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "speechmatics_en": ("SPEECHMATICS_RT_URL", "SPEECHMATICS_API_KEY"),
    "azure_speech_en": ("AZURE_SPEECH_ENDPOINT", "AZURE_SPEECH_KEY"),
    "aws_transcribe_en": ("AWS_TRANSCRIBE_STREAMING_URL", "AWS_ACCESS_KEY_ID"),
}


@pytest.fixture(params=sorted(STUBS))
def stub(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, StreamStub]]:
    monkeypatch.setenv(ENV[request.param][1], KEY)
    if request.param == "aws_transcribe_en":  # SigV4 signs with the secret key too
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "stub-secret")
        monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    server = STUBS[request.param]()
    yield request.param, server
    server.close()


class Program:
    """The vendor's streaming program started as `ops/stream --runner local` starts it (its
    virtualenv, its assembled source), with the platform's reader on its stdout."""

    def __init__(self, model: str, server: StreamStub, tmp: Path, **env: str):
        url_var, key_var = ENV[model]
        self.log = tmp / "stream.log"
        options = RunOptions(
            env={
                url_var: server.base_url + server.url_suffix,
                "ASRBENCH_API_BACKOFF_S": "0.01",
                **env,
            }
        )
        with self.log.open("wb") as log:
            self.started = program.start(resolve_model(model), "local", log, options)
        self.proc = self.started.proc
        self.reader = feed.Reader(self.proc.stdout).start()  # type: ignore[arg-type]
        feed.wait_ready(self.reader, timeout=120)

    def feed(self, utterances: dict[str, list[int]]) -> list[feed.FedUtterance]:
        audio = [(uid, words_audio(values)) for uid, values in utterances.items()]
        return feed.feed_all(self.proc.stdin, self.reader, audio, PACE)  # type: ignore[arg-type]

    def stop(self) -> tuple[int, str]:
        self.started.stop()
        return self.proc.returncode, self.log.read_text()


def words(values: list[int]) -> str:
    return " ".join(f"w{v}" for v in values)


UTTS = {"a": [1, 2, 3, 4, 5, 6, 7], "b": [8, 9, 10, 11]}


def test_partials_then_final(stub, tmp_path):
    model, server = stub
    prog = Program(model, server, tmp_path)
    fed = prog.feed(UTTS)
    rc, log = prog.stop()
    assert rc == 0, log
    for f, values in zip(fed, UTTS.values(), strict=True):
        assert f.failed is None
        assert f.final is not None and f.final.text == words(values)
        partials = [e for e in f.events if e.type == "partial"]
        assert partials and partials[0].mono_recv < f.final.mono_recv
        # each partial holds the finals so far and the current interim: word prefixes that grow
        assert all(words(values).startswith(p.text) for p in partials)
        assert [e.audio_s for e in f.events] == sorted(e.audio_s for e in f.events)
    assert server.connections == 2  # one session per utterance
    assert all(server.ended_by_client(log) for log in server.received)


def test_429_at_the_handshake_is_retried(stub, tmp_path):
    model, server = stub
    server.script = [("429", 0), ("429", 0)]
    prog = Program(model, server, tmp_path)
    fed = prog.feed({"a": [1, 2, 3, 4]})
    rc, log = prog.stop()
    assert rc == 0, log
    assert fed[0].final is not None and fed[0].final.text == words([1, 2, 3, 4])
    assert (server.handshakes, server.connections) == (3, 1)
    assert log.count("HTTP 429") == 2 and "retry 2/4" in log


def test_429_past_the_policy_fails_the_utterance(stub, tmp_path):
    model, server = stub
    server.script = [("429", 0)] * 2
    prog = Program(model, server, tmp_path, ASRBENCH_API_MAX_ATTEMPTS="2")
    fed = prog.feed({"a": [1, 2], "b": [3]})
    rc, log = prog.stop()
    assert rc == 1 and "a: HTTP 429" in log and "after 2 attempts" in log
    assert fed[0].failed and fed[1].failed and "not fed" in fed[1].failed
    assert server.connections == 0


def test_a_dropped_connection_is_reconnected_and_nothing_is_lost(stub, tmp_path):
    model, server = stub
    server.script = [("drop", 5)]  # after 5 words: the first 3 final, 2 only interim
    values = list(range(1, 11))
    prog = Program(model, server, tmp_path)
    fed = prog.feed({"a": values})
    rc, log = prog.stop()
    assert rc == 0, log
    assert fed[0].final is not None and fed[0].final.text == words(values)
    assert server.connections == 2 and "reconnecting (1/4)" in log


def test_close_mid_stream_keeps_the_finals_and_fails_the_rest(stub, tmp_path):
    model, server = stub
    server.script = [("ok",), ("close", 4, 1008, "stub: bad data")]
    prog = Program(model, server, tmp_path)
    fed = prog.feed({"a": [1, 2, 3], "b": [4, 5, 6, 7, 8, 9], "c": [10]})
    rc, log = prog.stop()
    assert rc == 1
    assert (
        fed[0].failed is None and fed[0].final is not None and fed[0].final.text == words([1, 2, 3])
    )
    assert fed[1].failed and "stream broke on this utterance" in fed[1].failed
    assert fed[2].failed and "not fed" in fed[2].failed
    assert "b: " in log and "1008" in log and "stub: bad data" in log
    assert server.connections == 2  # a 1008 close is not retried


def test_rejected_credentials_stop_at_once_naming_the_secret(stub, tmp_path, monkeypatch):
    model, server = stub
    monkeypatch.setenv(ENV[model][1], "wrong-key")
    prog = Program(model, server, tmp_path)
    fed = prog.feed({"a": [1, 2], "b": [3]})
    rc, log = prog.stop()
    assert rc == 1 and ("HTTP 401" in log or "HTTP 403" in log) and ENV[model][1] in log
    assert "retry" not in log and server.handshakes == 1  # a 401 is not retried
    assert fed[0].failed and fed[1].failed and "not fed" in fed[1].failed
