"""An OpenAI-compatible `POST /v1/audio/transcriptions` endpoint in front of any zoo model.

The model runs through a platform runner (Docker by default) exactly as in a benchmark, same
image, isolation and secrets, but kept warm: one program per served model, model loaded once,
fed one request at a time (`warm.WarmModel`), so a request costs its inference, not a container
start and a model load. Uploads in any format OpenAI clients send are converted on the way in
to what the card takes (`audio.to_model_wav`). Answers follow the OpenAI API: `response_format`
json (default), text, verbose_json, srt or vtt (`formats`); errors `{"error": {"message",
"type", "param", "code"}}`. Every declared secret of the model is redacted from error answers
and from the server's log.
"""

from __future__ import annotations

import hmac
import json
import sys
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from asrbench.errors import AsrbenchError
from asrbench.modelcard import Model
from asrbench.runners import Runner, RunOptions
from asrbench.secrets import for_models
from asrbench.serve.audio import AudioError, to_model_wav
from asrbench.serve.formats import FORMATS, render
from asrbench.serve.warm import WarmError, WarmModel, silence_wav

MAX_UPLOAD_BYTES = 25 * 1024 * 1024  # the OpenAI endpoint's own limit


class ServeError(AsrbenchError):
    """A request the server answers with an error; carries the HTTP status and OpenAI type."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error",
                 param: str | None = None):
        self.status, self.kind, self.param = status, kind, param
        super().__init__(message)


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[bytes, str]]:
    """Form fields of a multipart/form-data body: name -> (bytes, filename or '')."""
    if not content_type.startswith("multipart/form-data"):
        raise ServeError(400, "expected multipart/form-data with a `file` field")
    msg = BytesParser(policy=email_policy).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    fields = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields[name] = (part.get_payload(decode=True) or b"", part.get_filename() or "")
    return fields


class TranscriptionService:
    """A warm model behind the API: converts uploads, transcribes, renders the answer."""

    def __init__(self, model: Model, runner: Runner, options: RunOptions | None = None,
                 work_root: Path | None = None):
        self.model, self.runner = model, runner
        self.warm = WarmModel(model, runner, options or RunOptions(timeout_s=600), work_root)
        self.redactor = for_models([model])

    def prepare(self) -> str:
        """Build the image / virtualenv, start the program and warm it up (open models)."""
        identity = self.runner.prepare(self.model)
        warmup = None if self.model.card.type == "commercial-api" else \
            silence_wav(self.model.card.sample_rate)
        self.warm.start(warmup)
        return identity

    def close(self) -> None:
        self.warm.close()

    def transcribe(self, data: bytes, filename: str = "upload") -> tuple[str, float, float]:
        """(text, audio seconds, processing seconds) of one upload; ServeError otherwise."""
        try:
            wav, seconds = to_model_wav(data, self.model.card.sample_rate, filename)
            result = self.warm.transcribe(wav)
        except AudioError as exc:
            raise ServeError(exc.status, str(exc), param="file") from None
        except WarmError as exc:
            raise ServeError(exc.status, self.redactor.redact(str(exc)), "server_error") from None
        return result.text, seconds, result.processing_s


def make_server(service: TranscriptionService, host: str = "127.0.0.1", port: int = 0,
                api_key: str | None = None) -> ThreadingHTTPServer:
    """An HTTP server for `service`; with `api_key`, requests need `Authorization: Bearer`."""
    redact = service.redactor.redact
    language = service.model.card.languages[0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:
            print(redact(f"serve: {self.address_string()} {fmt % args}"), file=sys.stderr)

        def send(self, status: int, ctype: str, body: str,
                 headers: dict[str, str] | None = None) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def error(self, exc: ServeError) -> None:
            code = {401: "invalid_api_key"}.get(exc.status)
            message = redact(str(exc))
            if exc.status >= 500:
                print(f"serve: {exc.status}: {message}", file=sys.stderr)
            self.send(exc.status, "application/json", json.dumps(
                {"error": {"message": message, "type": exc.kind, "param": exc.param,
                           "code": code}}))

        def authorised(self) -> bool:
            if not api_key:
                return True
            given = self.headers.get("Authorization", "")
            return hmac.compare_digest(given.encode(), f"Bearer {api_key}".encode())

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/") == "/v1/models":
                return self.send(200, "application/json", json.dumps({"object": "list", "data": [
                    {"id": service.model.id, "object": "model", "owned_by": "asrbench"}]}))
            self.error(ServeError(404, f"unknown path {self.path}"))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_UPLOAD_BYTES:
                self.rfile.read(length)
                return self.error(ServeError(413, "file larger than 25 MB", param="file"))
            body = self.rfile.read(length)
            try:
                if self.path.split("?")[0].rstrip("/") != "/v1/audio/transcriptions":
                    raise ServeError(404, f"unknown path {self.path}")
                if not self.authorised():
                    raise ServeError(401, "Incorrect API key provided.")
                fields = parse_multipart(self.headers.get("Content-Type", ""), body)
                if "file" not in fields:
                    raise ServeError(400, "Missing required parameter: 'file'.", param="file")
                fmt = fields.get("response_format", (b"json", ""))[0].decode() or "json"
                if fmt not in FORMATS:
                    raise ServeError(400, f"response_format {fmt!r} is not one of "
                                          f"{', '.join(FORMATS)}", param="response_format")
                data, filename = fields["file"]
                text, seconds, processing = service.transcribe(data, filename or "upload")
            except ServeError as exc:
                return self.error(exc)
            ctype, answer = render(fmt, text, seconds, language)
            self.send(200, ctype, answer, {"X-Processing-Seconds": f"{processing:.3f}"})

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
