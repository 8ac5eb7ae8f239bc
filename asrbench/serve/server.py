"""An OpenAI-compatible `POST /v1/audio/transcriptions` endpoint in front of any zoo model.

Each request runs the model's own program through a platform runner (Docker by default), on a
one-utterance dataset holding the uploaded WAV: the same contract, image and isolation as a
benchmark, so `openai_api_en` pointed at this server is tested end to end against a real ASR
system. Requests are served one model run at a time (a lock): the contract is batch-oriented
and a model run may use every core.

Answers follow the OpenAI formats: `{"text": ...}` (response_format json, the default) or plain
text (`text`); errors `{"error": {"message", "type", "code"}}`. Only 16-bit PCM WAV is accepted:
the server does not resample or decode other formats (400 says so).
"""

from __future__ import annotations

import hmac
import io
import json
import shutil
import sys
import tempfile
import threading
import time
import wave
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from asrbench.dataset import Dataset, Utterance
from asrbench.errors import AsrbenchError
from asrbench.modelcard import Model
from asrbench.runners import Runner, RunnerError, RunOptions, read_tsv_pairs

MAX_UPLOAD_BYTES = 25 * 1024 * 1024  # the OpenAI endpoint's own limit


class ServeError(AsrbenchError):
    """A request the server answers with an error; carries the HTTP status and OpenAI type."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error"):
        self.status, self.kind = status, kind
        super().__init__(message)


def parse_multipart(content_type: str, body: bytes) -> dict[str, bytes]:
    """Form fields of a multipart/form-data body, by name."""
    if not content_type.startswith("multipart/form-data"):
        raise ServeError(400, "expected multipart/form-data with a `file` field")
    msg = BytesParser(policy=email_policy).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    fields = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields[name] = part.get_payload(decode=True) or b""
    return fields


def check_wav(data: bytes, sample_rate: int) -> float:
    """Duration of an uploaded WAV; ServeError(400) for anything the model cannot take."""
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
            seconds = w.getnframes() / float(rate)
    except (wave.Error, EOFError) as exc:
        raise ServeError(400, f"`file` must be a PCM WAV file ({exc}); convert it first, "
                              f"e.g. `sox in.mp3 -r {sample_rate} -c 1 -b 16 out.wav`") from None
    if rate != sample_rate or width != 2 or channels != 1:
        raise ServeError(400, f"`file` is {rate} Hz, {channels} channel(s), {8 * width}-bit; "
                              f"this model takes {sample_rate} Hz mono 16-bit WAV")
    return seconds


class TranscriptionService:
    """Runs one uploaded WAV through a model with a runner; thread-safe (one run at a time)."""

    def __init__(self, model: Model, runner: Runner, options: RunOptions | None = None,
                 work_root: Path | None = None):
        self.model, self.runner = model, runner
        self.options = options or RunOptions(timeout_s=600)
        self.work_root = Path(work_root or tempfile.mkdtemp(prefix="asrbench-serve-"))
        self._lock = threading.Lock()
        self._n = 0

    def prepare(self) -> str:
        """Build the image / virtualenv once, before the first request."""
        return self.runner.prepare(self.model)

    def transcribe(self, data: bytes) -> tuple[str, float]:
        """(text, processing seconds) for one WAV; ServeError when the model fails on it."""
        seconds = check_wav(data, self.model.card.sample_rate)
        with self._lock:
            self._n += 1
            req = self.work_root / f"req{self._n:06d}"
            (req / "data" / "audio").mkdir(parents=True)
            (req / "data" / "audio" / "upload.wav").write_bytes(data)
            utt = Utterance(id="upload", audio="audio/upload.wav", duration=seconds, text="")
            ds = Dataset(root=req / "data", id="serve", meta={}, columns=["ID", "AUDIO"],
                         utterances=[utt])
            start = time.monotonic()
            try:
                result = self.runner.run(self.model, ds, req / "work", [utt], self.options)
            except RunnerError as exc:
                print(f"serve: model {self.model.id} failed: {exc}", file=sys.stderr)
                raise ServeError(500, f"model {self.model.id} failed; see the server log",
                                 "server_error") from None
            elapsed = time.monotonic() - start
            hyps = read_tsv_pairs(result.hyp_path)
            failed = read_tsv_pairs(result.result_dir / "failed.tsv")
            shutil.rmtree(req, ignore_errors=True)
        if "upload" in hyps:
            return hyps["upload"], elapsed
        reason = failed.get("upload", "no hypothesis written")
        raise ServeError(500, f"model {self.model.id} could not transcribe the file: {reason}",
                         "server_error")


def make_server(service: TranscriptionService, host: str = "127.0.0.1", port: int = 0,
                api_key: str | None = None) -> ThreadingHTTPServer:
    """An HTTP server for `service`; with `api_key`, requests need `Authorization: Bearer`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:
            print(f"serve: {self.address_string()} {fmt % args}", file=sys.stderr)

        def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None,
                      raw: str | None = None) -> None:
            data = (raw if raw is not None else json.dumps(payload)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8" if raw is not None
                             else "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def error(self, exc: ServeError) -> None:
            code = {401: "invalid_api_key"}.get(exc.status)
            self.send_json(exc.status, {"error": {"message": str(exc), "type": exc.kind,
                                                  "param": None, "code": code}})

        def authorised(self) -> bool:
            if not api_key:
                return True
            given = self.headers.get("Authorization", "")
            return hmac.compare_digest(given.encode(), f"Bearer {api_key}".encode())

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/") == "/v1/models":
                return self.send_json(200, {"object": "list", "data": [
                    {"id": service.model.id, "object": "model", "owned_by": "asrbench"}]})
            self.error(ServeError(404, f"unknown path {self.path}"))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_UPLOAD_BYTES:
                self.rfile.read(length)
                return self.error(ServeError(413, "file larger than 25 MB"))
            body = self.rfile.read(length)
            try:
                if self.path.split("?")[0].rstrip("/") != "/v1/audio/transcriptions":
                    raise ServeError(404, f"unknown path {self.path}")
                if not self.authorised():
                    raise ServeError(401, "Incorrect API key provided.")
                fields = parse_multipart(self.headers.get("Content-Type", ""), body)
                if "file" not in fields:
                    raise ServeError(400, "Missing required parameter: 'file'.")
                fmt = fields.get("response_format", b"json").decode() or "json"
                if fmt not in ("json", "text"):
                    raise ServeError(400, f"response_format {fmt!r} is not supported "
                                          "(json or text)")
                text, elapsed = service.transcribe(fields["file"])
            except ServeError as exc:
                return self.error(exc)
            headers = {"X-Processing-Seconds": f"{elapsed:.3f}"}
            if fmt == "text":
                return self.send_json(200, None, headers, raw=text + "\n")
            self.send_json(200, {"text": text}, headers)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
