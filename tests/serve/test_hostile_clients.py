"""`ops/serve` against hostile and unlucky clients (issue 30, item 9), over raw sockets: every
malformed request gets a 4xx in OpenAI's error format or is closed by the idle timeout, never a
traceback or a hang; a chunked upload is read; an upload held open or a busy model does not
block another client; audio over the duration cap and requests over the queue bound are refused
naming the option; SIGTERM leaves no temporary folder.

The model is a small program written here (`echo_en`: answers each utterance with its duration,
through the real contract and the local runner), so each server starts in a second. With
`ECHO_GATE` set it announces each utterance on the named pipe `GATE/started` and waits for a
line on `GATE/go`: the test holds the model busy and knows it is busy without sleeping."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from asrbench.modelcard import load_model
from asrbench.runners import RunOptions
from asrbench.runners.local import LocalRunner
from asrbench.serve.warm import silence_wav
from asrbench.settings import REPO_ROOT
from tests.factories import make_model

pytestmark = pytest.mark.slow
WAIT_S = 60  # a bound on every socket wait, so a server that hangs fails the test, not the run

CARD = {
    "name": "Test fixture that answers with the duration of each utterance",
    "architecture": "none (writes the utterance's duration as its hypothesis)",
    "licence": "Apache-2.0",
    "program": "transcribe.py",
    "memory": "256m",
    "image": {"shared": ["contract.py"]},
}

PROGRAM = """\
import os
import sys
from pathlib import Path

from contract import ResultWriter, read_todo, wav_seconds

gate = os.environ.get("ECHO_GATE")
todo, _ = read_todo(sys.argv[1], sys.argv[2])
with ResultWriter(Path(sys.argv[2]), "echo_en") as out:
    for uid, path in todo:
        if gate:
            with open(Path(gate) / "started", "w") as f:
                f.write(uid + "\\n")
            with open(Path(gate) / "go") as f:
                f.readline()
        seconds = wav_seconds(path)
        out.ok(uid, f"{seconds:.1f} seconds", 0.001, seconds)
"""


@pytest.fixture(scope="module")
def echo_model(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("models")
    return make_model(root, "echo_en", PROGRAM, requirements="# standard library only\n", **CARD)


@pytest.fixture
def serve(echo_model, tmp_path) -> Iterator[Callable[..., int]]:
    """serve(**limits, env=...) -> the port of a real server (waitress, in this process) in
    front of a real warm echo_en program."""
    from asrbench.serve.server import Limits, TranscriptionService, make_server

    started = []

    def start(env: dict[str, str] | None = None, **limits) -> int:
        service = TranscriptionService(
            load_model(echo_model),
            LocalRunner(),
            RunOptions(timeout_s=WAIT_S, env=env or {}),
            tmp_path / f"serve{len(started)}",
            Limits(**limits),
        )
        service.warm.start()
        server = make_server(service)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append((server, service))
        return server.port

    yield start
    for server, service in started:
        server.close()
        service.close()


# --- raw HTTP -------------------------------------------------------------------------------


def multipart(fields: dict[str, bytes], boundary: str = "r30boundary") -> tuple[str, bytes]:
    """(Content-Type, body) of a multipart/form-data upload; `file` is sent as a.wav."""
    parts = []
    for name, value in fields.items():
        filename = '; filename="a.wav"' if name == "file" else ""
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"'
            f"{filename}\r\n\r\n".encode()
            + value
            + b"\r\n"
        )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return f"multipart/form-data; boundary={boundary}", body


def head(ctype: str, length: str | None, extra: str = "") -> bytes:
    lines = ["POST /v1/audio/transcriptions HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {ctype}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    sock.settimeout(WAIT_S)
    return sock


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes] | None:
    """(status, headers, body) of the next response, or None when the server closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            assert not data, f"closed in the middle of a response: {data!r}"
            return None
        data += chunk
    raw_head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = raw_head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed in the middle of a response body"
        body += chunk
    return int(status_line.split()[1]), headers, body


def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes] | None:
    with connect(port) as sock:
        sock.sendall(raw)
        return read_answer(sock)


def openai_error(answer) -> dict:
    """The `error` object of a JSON error answer in OpenAI's format."""
    assert answer is not None, "the server closed the connection without an answer"
    status, headers, body = answer
    assert 400 <= status < 500, (status, body)
    assert headers["content-type"].startswith("application/json"), headers
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"], error
    return error


def post(port: int, fields: dict[str, bytes]) -> tuple[int, dict[str, str], bytes]:
    ctype, body = multipart(fields)
    answer = exchange(port, head(ctype, str(len(body))) + body)
    assert answer is not None, "the server closed the connection without an answer"
    return answer


WAV = silence_wav(16000, 1.0)


# --- malformed requests ---------------------------------------------------------------------


def test_a_well_formed_request_is_answered(serve):
    status, _, body = post(serve(), {"file": WAV, "model": b"echo_en"})
    assert status == 200 and json.loads(body) == {"text": "1.0 seconds"}


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", "12, 12"])
def test_a_content_length_that_is_not_a_count_is_a_json_400(serve, length):
    ctype, body = multipart({"file": WAV})
    error = openai_error(exchange(serve(), head(ctype, length) + body))
    assert "Content-Length" in error["message"]


def test_a_short_body_is_closed_by_the_idle_timeout(serve):
    """The client promises more bytes than it sends and then waits: the server's idle timeout
    (set to 1 s here) ends the connection; the test waits on the socket, not on a clock."""
    port = serve(idle_timeout_s=1)
    ctype, body = multipart({"file": WAV})
    with connect(port) as sock:
        sock.sendall(head(ctype, str(len(body) + 1000)) + body)
        answer = read_answer(sock)
    assert answer is None or 400 <= answer[0] < 500, answer


def test_a_chunked_upload_is_read(serve):
    ctype, body = multipart({"file": WAV, "response_format": b"text"})
    chunks = b"".join(
        f"{len(body[i : i + 5000]):x}\r\n".encode() + body[i : i + 5000] + b"\r\n"
        for i in range(0, len(body), 5000)
    )
    answer = exchange(
        serve(), head(ctype, None, "Transfer-Encoding: chunked\r\n") + chunks + b"0\r\n\r\n"
    )
    assert answer is not None and answer[0] == 200, answer
    assert answer[2] == b"1.0 seconds\n"


def test_a_non_utf8_response_format_is_a_json_400(serve):
    error = openai_error(post(serve(), {"file": WAV, "response_format": b"\xff\xfejson"}))
    assert error["param"] == "response_format" and "UTF-8" in error["message"]


def test_a_body_that_is_not_multipart_is_a_json_400(serve):
    port = serve()
    error = openai_error(exchange(port, head("text/plain", "5") + b"hello"))
    assert "multipart/form-data" in error["message"]
    ctype, body = multipart({"model": b"echo_en"})  # no `file`
    assert openai_error(exchange(port, head(ctype, str(len(body))) + body))["param"] == "file"


def test_a_garbage_request_line_is_a_json_400(serve):
    openai_error(exchange(serve(), b"\x16\x03\x01 not http at all\r\n\r\n"))


def test_a_body_over_the_upload_limit_is_refused_before_it_is_read(serve):
    from asrbench.serve.server import MAX_UPLOAD_BYTES

    ctype, _ = multipart({})
    error = openai_error(exchange(serve(), head(ctype, str(MAX_UPLOAD_BYTES * 2))))
    assert "25 MB" in error["message"]


def test_an_undecodable_upload_does_not_name_the_servers_temporary_folder(serve):
    error = openai_error(post(serve(), {"file": b"ID3not-audio-at-all"}))
    assert "could not decode `file`" in error["message"] and error["param"] == "file"
    assert "asrbench-upload-" not in error["message"] and "/tmp" not in error["message"], error


# --- independence ---------------------------------------------------------------------------


def test_an_upload_held_open_does_not_block_another_client(serve):
    """Client A sends its headers and half its body, then holds; client B is answered in full
    while A's connection is still open; A then finishes and is answered too."""
    port = serve(idle_timeout_s=WAIT_S)
    ctype, body = multipart({"file": WAV})
    with connect(port) as first:
        first.sendall(head(ctype, str(len(body))) + body[: len(body) // 2])
        status, _, answer = post(port, {"file": silence_wav(16000, 2.0)})
        assert status == 200 and json.loads(answer) == {"text": "2.0 seconds"}
        first.sendall(body[len(body) // 2 :])
        status, _, answer = read_answer(first)
    assert status == 200 and json.loads(answer) == {"text": "1.0 seconds"}


@pytest.fixture
def gate(tmp_path) -> Path:
    folder = tmp_path / "gate"
    folder.mkdir()
    os.mkfifo(folder / "started")
    os.mkfifo(folder / "go")
    return folder


def test_a_busy_model_refuses_requests_over_the_queue_bound_and_still_answers_others(serve, gate):
    port = serve(env={"ECHO_GATE": str(gate)}, queue=0)
    held: list = []
    first = threading.Thread(target=lambda: held.append(post(port, {"file": WAV})), daemon=True)
    first.start()
    with open(gate / "started") as f:  # the model has the first request
        assert f.readline().startswith("req")
    try:
        status, headers, body = post(port, {"file": WAV})
        assert status == 503 and "retry-after" in headers, (status, body)
        error = json.loads(body)["error"]
        assert "--queue" in error["message"], error
        status, _, body = exchange(port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 200 and json.loads(body)["data"][0]["id"] == "echo_en"
    finally:
        # Read-write: opening the pipe does not wait for the program, and the line stays in it
        # until the program reads it (or this test gives up on the first request).
        go = os.open(gate / "go", os.O_RDWR)
        os.write(go, b"go\n")
    try:
        first.join(WAIT_S)
    finally:
        os.close(go)
    assert held and held[0][0] == 200, held


def test_audio_over_the_duration_cap_is_refused_naming_the_cap_and_the_option(serve):
    port = serve(max_audio_s=2)
    status, _, body = post(port, {"file": silence_wav(16000, 3.0)})
    assert status == 413, body
    error = json.loads(body)["error"]
    assert "2 s" in error["message"] and "--max-audio-s" in error["message"], error
    assert error["param"] == "file"
    assert post(port, {"file": silence_wav(16000, 2.0)})[0] == 200


def test_a_long_upload_in_another_format_is_refused_without_converting_it_all(serve, tmp_path):
    """An hour of mp3 (small on the wire) is refused by the duration cap, not decoded to an
    hour of WAV first."""
    src = tmp_path / "long.mp3"
    subprocess.run(
        [
            "ffmpeg",
            "-nostdin",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            "anullsrc=r=8000:cl=mono",
            "-t",
            "3600",
            "-c:a",
            "libmp3lame",
            "-b:a",
            "8k",
            str(src),
        ],
        check=True,
    )
    status, _, body = post(serve(max_audio_s=5), {"file": src.read_bytes()})
    assert status == 413 and "--max-audio-s" in json.loads(body)["error"]["message"], body


# --- SIGTERM --------------------------------------------------------------------------------


def test_sigterm_stops_ops_serve_cleanly_and_leaves_no_temporary_folder(echo_model, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [
            str(REPO_ROOT / "ops" / "serve"),
            "-m",
            str(echo_model),
            "--runner",
            "local",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    try:
        url = proc.stdout.readline().strip()  # printed once the model is warm
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read()
        assert [p.name[:14] for p in tmp.iterdir()] == ["asrbench-serve"]
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert post(port, {"file": WAV})[0] == 200
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read()
    assert rc in (0, 143), (rc, err)
    assert "Traceback" not in err, err
    assert list(tmp.iterdir()) == [], err


def test_stopping_the_service_answers_a_request_in_the_model_at_once(echo_model, gate, tmp_path):
    """What SIGTERM does while the model is busy: the request in it answers 503 instead of
    keeping the server up until the model finishes, and the server's folder is removed."""
    from asrbench.serve.server import Limits, TranscriptionService, make_server

    service = TranscriptionService(
        load_model(echo_model),
        LocalRunner(),
        RunOptions(timeout_s=WAIT_S, env={"ECHO_GATE": str(gate)}),
        tmp_path / "own",
        Limits(),
    )
    service.warm.start()
    server = make_server(service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    held: list = []
    first = threading.Thread(
        target=lambda: held.append(post(server.port, {"file": WAV})), daemon=True
    )
    first.start()
    try:
        with open(gate / "started") as f:
            assert f.readline().startswith("req")
        service.close()
        first.join(WAIT_S)
    finally:
        server.close()
        service.close()
    assert held and held[0][0] == 503, held
    assert "stopping" in json.loads(held[0][2])["error"]["message"]
    assert not (tmp_path / "own").exists()


@pytest.mark.parametrize(
    "option",
    [
        ["--queue", "-1"],
        ["--max-audio-s", "nan"],
        ["--max-audio-s", "0"],
        ["--idle-timeout", "0"],
        ["--timeout", "-5"],
    ],
)
def test_a_bad_limit_is_a_one_line_error_naming_the_option(cli, option):
    code, _, err = cli("serve", "-m", "pocketsphinx_en", *option)
    assert code == 2 and option[0] in err and "Traceback" not in err, err
