"""`ops/serve`'s streaming program against clients that hold it (issue 38, item 2): an idle
WebSocket client, one that never reads, one over the audio cap and requests over the queue
bound are closed or refused naming the option, and the next client is served; a session left
early (a `stream=true` client gone mid-stream) leaves none of its events to the next session.

The model is a small streaming program written here (`echo_stream`: a partial per 100-ms frame,
"N frames", then the final "S.S seconds"; with `ECHO_PAD=N` each partial carries N more bytes,
so a client that does not read fills the sockets' buffers in a few frames), run through the
real local runner and the real servers (waitress and websockets, in this process), with small
timeouts so that each test takes seconds. Every wait is on a socket, bounded by WAIT_S: a
server that still lets one client hold the model fails the test instead of hanging it."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from asrbench.modelcard import load_model
from asrbench.runners import RunOptions
from asrbench.runners.local import LocalRunner
from asrbench.serve.warm import silence_wav
from tests.factories import make_model
from tests.streaming.fake_program import HEAD

pytestmark = pytest.mark.slow
pytest.importorskip("websockets")
WAIT_S = 60  # a bound on every wait
FRAME = b"\x01\x00" * 1600  # 100 ms of 16-kHz PCM
END = json.dumps({"type": "end"})

CARD = {
    "name": "Test fixture that streams a partial per frame and its duration as the final",
    "licence": "Apache-2.0",
    "program": "stream.py",
    "streaming": "stream.py",
}

PROGRAM = (
    HEAD
    + """\
pad = " " + "x" * int(os.environ.get("ECHO_PAD", "0"))
while line := inp.readline():
    head = json.loads(line)
    uid, rate, samples, frames = head["id"], head["sample_rate"], 0, 0
    while (n := struct.unpack("<I", inp.read(4))[0]) != 0:
        samples += len(inp.read(n)) // 2
        frames += 1
        emit(id=uid, type="partial", text=f"{frames} frames{pad}".strip(), audio_s=samples / rate)
    emit(id=uid, type="final", text=f"{samples / rate:.1f} seconds", audio_s=samples / rate)
"""
)


@pytest.fixture(scope="module")
def echo_stream(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("models")
    return make_model(
        root, "echo_stream", PROGRAM, requirements="# standard library only\n", **CARD
    )


@pytest.fixture
def serve(echo_stream, tmp_path) -> Iterator[Callable[..., SimpleNamespace]]:
    """serve(env=..., **limits) -> (service, http base URL, ws URL) of real servers in front of
    a real echo_stream program."""
    from asrbench.serve.server import Limits, TranscriptionService, make_server
    from asrbench.serve.ws import WsServer

    started: list = []

    def start(env: dict[str, str] | None = None, **limits) -> SimpleNamespace:
        service = TranscriptionService(
            load_model(echo_stream),
            LocalRunner(),
            RunOptions(timeout_s=WAIT_S, env=env or {}),
            tmp_path / f"serve{len(started)}",
            Limits(**limits),
        )
        server = make_server(service)
        ws = WsServer(service, "127.0.0.1", 0)
        for loop in (server.serve_forever, ws.serve_forever):
            threading.Thread(target=loop, daemon=True).start()
        started.append((ws, server, service))
        return SimpleNamespace(
            service=service,
            http=f"http://127.0.0.1:{server.port}/v1/audio/transcriptions",
            ws=f"ws://127.0.0.1:{ws.port}/v1/stream",
        )

    yield start
    for ws, server, service in started:
        ws.close()
        server.close()
        service.close()


def connect(url: str, **kwargs):
    from websockets.sync.client import connect as ws_connect

    return ws_connect(url, open_timeout=WAIT_S, max_size=None, **kwargs)


def utterance(url: str, frames: int) -> list[dict]:
    """A whole utterance from a well-behaved client: its events up to the final."""
    with connect(url) as conn:
        for _ in range(frames):
            conn.send(FRAME)
        conn.send(END)
        events = [json.loads(conn.recv(timeout=WAIT_S))]
        while events[-1]["type"] not in ("final", "error"):
            events.append(json.loads(conn.recv(timeout=WAIT_S)))
    return events


def holds_the_model(conn) -> None:
    """Send a frame and wait for its partial: `conn`'s utterance is in the model."""
    conn.send(FRAME)
    assert json.loads(conn.recv(timeout=WAIT_S))["type"] == "partial"


def closed_with(conn):
    """Read `conn` to its end; the close frame the server sent (None: dropped without one)."""
    from websockets.exceptions import ConnectionClosed

    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(10_000):
            conn.recv(timeout=WAIT_S)
    return closed.value.rcvd


# --- clients that hold the model ------------------------------------------------------------


def test_an_idle_websocket_client_is_closed_and_the_next_one_is_served(serve):
    """A client sends 100 ms and then nothing: `--idle-timeout` (1 s here) closes it with 1008
    naming the option, and a client that came after it is answered in full."""
    srv = serve(idle_timeout_s=1)
    with connect(srv.ws) as idle:
        holds_the_model(idle)
        events = utterance(srv.ws, 10)
        assert events[-1]["type"] == "final" and events[-1]["text"] == "1.0 seconds", events
        rcvd = closed_with(idle)
    assert rcvd is not None and rcvd.code == 1008 and "--idle-timeout 1" in rcvd.reason, rcvd


def test_a_websocket_client_that_sends_nothing_is_closed(serve):
    srv = serve(idle_timeout_s=1)
    with connect(srv.ws) as silent:
        rcvd = closed_with(silent)
    assert rcvd is not None and rcvd.code == 1008 and "--idle-timeout" in rcvd.reason, rcvd


def test_a_websocket_client_that_does_not_read_is_dropped_and_the_next_one_is_served(serve):
    """The client reads one event, then never again (its library stops reading the socket
    once one message waits), while the model answers each of its frames with a 1-MB partial:
    the server's sends stop going out, `--write-timeout` (3 s here) drops it, and a client
    that came after it is answered. Its idle timeout is far off: it is the write timeout."""
    srv = serve(env={"ECHO_PAD": str(1 << 20)}, write_timeout_s=3, idle_timeout_s=10 * WAIT_S)
    with connect(srv.ws, max_queue=1) as hostage:
        holds_the_model(hostage)
        for _ in range(40):  # ~40 MB of partials: more than both sockets' buffers hold
            hostage.send(FRAME)
        events = utterance(srv.ws, 2)
        assert events[-1]["type"] == "final" and events[-1]["text"] == "0.2 seconds"
        closed_with(hostage)  # what was in its buffers, then the end of the connection


def test_a_client_waiting_for_the_model_is_not_dropped_as_not_reading(serve):
    """A client sends its whole utterance (40 messages) while another holds the model: the
    server reads it ahead as it waits, so it sees the client's answers to its pings (every
    0.5 s here) and does not drop it; it is answered once the idle holder is closed (3 s)."""
    srv = serve(idle_timeout_s=3, write_timeout_s=1.5)
    with connect(srv.ws) as idle:
        holds_the_model(idle)
        events = utterance(srv.ws, 40)
        assert events[-1]["type"] == "final" and events[-1]["text"] == "4.0 seconds", events
        assert closed_with(idle).code == 1008


def test_over_the_queue_bound_stream_true_gets_503_and_a_websocket_1013(serve):
    """`--queue 0`: while a WebSocket client's utterance is in the streaming program, a
    `stream=true` request is answered 503 with Retry-After and another WebSocket client is
    closed with 1013 (try again later), both naming the option; then both are served."""
    import requests

    srv = serve(queue=0)
    upload = {"file": ("a.wav", silence_wav(16000, 1.0))}
    with connect(srv.ws) as holder:
        holds_the_model(holder)
        busy = requests.post(srv.http, files=upload, data={"stream": "true"}, timeout=WAIT_S)
        assert busy.status_code == 503 and "Retry-After" in busy.headers, busy.text
        assert "--queue 0" in busy.json()["error"]["message"]
        with connect(srv.ws) as late:
            late.send(FRAME)
            error = json.loads(late.recv(timeout=WAIT_S))
            assert error["type"] == "error" and "--queue 0" in error["message"], error
            rcvd = closed_with(late)
        assert rcvd is not None and rcvd.code == 1013 and "--queue 0" in rcvd.reason, rcvd
        holder.send(END)
        while json.loads(holder.recv(timeout=WAIT_S))["type"] != "final":
            pass
    done = requests.post(srv.http, files=upload, data={"stream": "true"}, timeout=WAIT_S)
    assert done.status_code == 200 and '"text": "1.0 seconds"' in done.text, done.text
    assert utterance(srv.ws, 3)[-1]["text"] == "0.3 seconds"


def test_a_websocket_utterance_over_the_audio_cap_is_closed_naming_the_option(serve):
    srv = serve(max_audio_s=0.5)
    with connect(srv.ws) as long:
        for _ in range(10):
            long.send(FRAME)
        rcvd = closed_with(long)
    assert rcvd is not None and rcvd.code == 1009 and "--max-audio-s" in rcvd.reason, rcvd
    assert utterance(srv.ws, 3)[-1]["text"] == "0.3 seconds"


# --- sessions never see each other's events -------------------------------------------------


def test_a_session_left_early_leaves_none_of_its_events_to_the_next(serve):
    """A `stream=true` answer whose client left is closed by waitress before its final:
    the next session gets its own events only (it got the previous one's and a StreamError)."""
    live = serve().service.live
    first = live.events(silence_wav(16000, 1.0))
    assert next(first).type == "partial"
    first.close()  # what waitress does with the answer of a client that has gone
    events = list(live.events(silence_wav(16000, 0.5)))
    assert len({e.uid for e in events}) == 1, [(e.uid, e.type) for e in events]
    assert events[-1].type == "final" and events[-1].text == "0.5 seconds"


def test_write_timeout_must_be_positive(cli):
    code, _, err = cli("serve", "-m", "pocketsphinx_en", "--write-timeout", "0")
    assert code == 2 and "--write-timeout 0" in err and "Traceback" not in err, err
