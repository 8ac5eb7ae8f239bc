"""`ops/serve` streamed transcriptions (issue 27, item 4): the official `openai` client with
`stream=True` against a real model's streaming program (PocketSphinx's incremental decoder,
local runner), and against a batch-only card (the same model without `streaming:`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest

from asrbench.serve.live import TextDeltas
from asrbench.settings import REPO_ROOT
from tests.factories import edit_card

pytestmark = pytest.mark.slow


def _serve(model: str, *extra: str) -> Iterator[list[str]]:
    """Start ops/serve; yield its URL lines (HTTP, then WebSocket with --ws-port)."""
    pytest.importorskip("pocketsphinx")
    cmd = [str(REPO_ROOT / "ops" / "serve"), "-m", model, "--runner", "local", "--port", "0"]
    proc = subprocess.Popen(
        [*cmd, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    want = 2 if extra else 1

    def read() -> None:
        while len(lines) < want and (line := proc.stdout.readline()):
            lines.append(line.strip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=600)
    if len(lines) < want or not lines[0].startswith("http://127.0.0.1:"):
        proc.kill()
        pytest.fail(f"ops/serve did not start: {lines} {proc.stderr.read()[-2000:]}")
    try:
        yield lines
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@pytest.fixture(scope="module")
def urls() -> Iterator[list[str]]:
    yield from _serve("pocketsphinx_en", "--ws-port", "0")


@pytest.fixture(scope="module")
def streaming_server(urls: list[str]) -> str:
    return urls[0]


@pytest.fixture(scope="module")
def batch_card(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PocketSphinx's card without its `streaming:` program: a batch-only model."""
    card = tmp_path_factory.mktemp("cards") / "pocketsphinx_batch_only"
    shutil.copytree(REPO_ROOT / "models" / "pocketsphinx_en", card)

    def batch_only(fields: dict) -> None:
        del fields["streaming"]
        fields["id"] = card.name

    return edit_card(card, batch_only)


@pytest.fixture(scope="module")
def batch_server(batch_card: Path) -> Iterator[str]:
    for found in _serve(str(batch_card)):
        yield found[0]


def _speech(mini) -> Path:
    utt = next(u for u in sorted(mini.utterances, key=lambda u: u.duration) if u.duration > 5)
    return mini.audio_path(utt)


def _events(base_url: str, wav: Path) -> list:
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=120)
    with open(wav, "rb") as f:
        stream = client.audio.transcriptions.create(model="any", file=f, stream=True)
        return list(stream)


def test_openai_client_streams_deltas_then_done(streaming_server: str, mini) -> None:
    wav = _speech(mini)
    events = _events(streaming_server, wav)
    kinds = [e.type for e in events]
    assert kinds[-1] == "transcript.text.done" and set(kinds[:-1]) == {"transcript.text.delta"}
    assert len(kinds) >= 3  # words arrived before the end, not only with the final
    done = events[-1].text.split()
    joined = "".join(e.delta for e in events[:-1]).split()
    # the deltas are the words two successive partials agreed on: they start as the final
    # does (PocketSphinx may still revise a stable word later: `done` is the transcript)
    assert len(joined) >= 2 and joined[:2] == done[:2]
    # the same audio again: the warm program gives the same final and the same deltas
    again = _events(streaming_server, wav)
    assert again[-1].text.split() == done
    assert [e.delta for e in again[:-1]] == [e.delta for e in events[:-1]]


def test_plain_request_still_answers_json(streaming_server: str, mini) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=streaming_server, api_key="unused", max_retries=0, timeout=120)
    with open(_speech(mini), "rb") as f:
        out = client.audio.transcriptions.create(model="any", file=f)
    assert out.text.split()


def test_batch_only_card_streams_one_delta(batch_server: str, mini) -> None:
    events = _events(batch_server, _speech(mini))
    assert [e.type for e in events] == ["transcript.text.delta", "transcript.text.done"]
    assert events[0].delta == events[1].text and events[1].text.split()


def test_text_deltas_send_only_what_two_hypotheses_agree_on() -> None:
    d = TextDeltas()
    assert d.partial("the") is None  # one hypothesis: nothing agreed yet
    assert d.partial("the cat") == "the"
    assert d.partial("the cap sat") is None and d.sent == ["the"]
    assert d.partial("the cat sat") is None  # "cap" vs "cat": nothing new agreed
    assert d.partial("the cat sat on") == " cat sat"
    assert d.final("the cat sat on the mat") == " on the mat"
    revised = TextDeltas()
    revised.partial("a b")
    revised.partial("a b")
    assert revised.sent == ["a", "b"]
    assert revised.final("a c") is None  # a revision of sent words: `done` carries it


def _ws_utterance(conn, pcm: bytes) -> list[dict]:
    step = 3200  # 100 ms of 16-kHz 16-bit audio, as the HTTP stream cuts it
    for i in range(0, len(pcm), step):
        conn.send(pcm[i : i + step])
    conn.send(json.dumps({"type": "end"}))
    events = []
    while not events or events[-1]["type"] != "final":
        events.append(json.loads(conn.recv(timeout=120)))
    return events


def test_websocket_raw_pcm_two_utterances_on_one_connection(urls: list[str], mini) -> None:
    from websockets.sync.client import connect

    wav = _speech(mini)
    with wave.open(str(wav), "rb") as w:
        pcm = w.readframes(w.getnframes())
    with connect(urls[1]) as conn:
        first = _ws_utterance(conn, pcm)
        second = _ws_utterance(conn, pcm[: len(pcm) // 2])
    for events in (first, second):
        assert {e["type"] for e in events[:-1]} == {"partial"} and len(events) >= 3
        times = [e["audio_s"] for e in events]
        assert times == sorted(times)  # stamped with the audio consumed, never backwards
    # the same program and the same 100-ms frames as stream=true: the same final
    assert first[-1]["text"].split() == _events(urls[0], wav)[-1].text.split()
    assert first[-1]["audio_s"] == pytest.approx(len(pcm) / 2 / 16000, abs=0.11)


def test_websocket_refuses_another_rate_and_path(urls: list[str]) -> None:
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    with connect(urls[1] + "?sample_rate=8000") as conn:
        msg = json.loads(conn.recv(timeout=30))
        assert msg["type"] == "error" and "16000" in msg["message"]
        with pytest.raises(ConnectionClosed) as closed:
            conn.recv(timeout=30)
    assert closed.value.rcvd.code == 1008
    with pytest.raises(InvalidStatus) as refused:
        connect(urls[1].replace("/v1/stream", "/elsewhere"))
    assert refused.value.response.status_code == 404


def test_ws_port_needs_a_streaming_program(batch_card: Path) -> None:
    done = subprocess.run(
        [str(REPO_ROOT / "ops" / "serve"), "-m", str(batch_card), "--ws-port", "0"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "streaming" in done.stderr and "Traceback" not in done.stderr
