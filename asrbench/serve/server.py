"""An OpenAI-compatible `POST /v1/audio/transcriptions` endpoint in front of any zoo model.

The model runs through a platform runner (Docker by default) exactly as in a benchmark, same
image, isolation and secrets, but kept warm: one program per served model, model loaded once,
fed one request at a time (`warm.WarmModel`), so a request costs its inference, not a container
start and a model load. Uploads in any format OpenAI clients send are converted on the way in
to what the card takes (`audio.to_model_wav`). Answers follow the OpenAI API: `response_format`
json (default), text, verbose_json, srt or vtt (`formats`); errors `{"error": {"message",
"type", "param", "code"}}`. Every declared secret of the model is redacted from error answers
and from the server's log.

HTTP is waitress's (docs/DEPENDENCIES.md): it reads each request body in full before a worker
thread sees it (a client that uploads slowly holds a socket, not the model or a thread),
validates `Content-Length`, decodes chunked bodies, caps the body size and closes a connection
idle for `Limits.idle_timeout_s`. Its own refusals are answered in OpenAI's error format too
(`_JsonErrorTask`). Requests are independent: audio longer than `Limits.max_audio_s` is
refused (413) before it reaches the model, and at most `Limits.queue` requests wait for the
model while it transcribes another; more are answered 503 with `Retry-After`. The streaming
program (`stream=true`, and the WebSocket of `ws.py`) has a queue of its own of that bound.
"""

from __future__ import annotations

import hmac
import json
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import default as email_policy
from http import HTTPStatus
from pathlib import Path
from typing import Any

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.server import create_server
from waitress.task import ErrorTask

from asrbench.errors import AsrbenchError, InputError
from asrbench.modelcard import Model
from asrbench.runners import Runner, RunOptions
from asrbench.secrets import for_models
from asrbench.serve.admission import Admission, QueueFull
from asrbench.serve.audio import AudioError, to_model_wav
from asrbench.serve.formats import FORMATS, render
from asrbench.serve.live import LiveModel, TextDeltas
from asrbench.serve.warm import WarmError, WarmModel, silence_wav
from asrbench.streaming.feed import StreamError

MAX_UPLOAD_BYTES = 25 * 1024 * 1024  # the OpenAI endpoint's own limit
_FORM_SLACK = 64 * 1024  # multipart boundaries and the small fields beside `file`
RETRY_AFTER_S = 2


@dataclass(frozen=True)
class Limits:
    """What keeps one client from holding up the others (`ops/serve` options of these names)."""

    max_audio_s: float = 600.0  # --max-audio-s: longer uploads are refused (413)
    queue: int = 4  # --queue: requests that may wait while the model is busy; more get 503
    idle_timeout_s: int = 60  # --idle-timeout: a connection silent this long is closed
    # --write-timeout: a WebSocket client that leaves what it is sent unread this long is dropped
    write_timeout_s: float = 20.0

    def __post_init__(self) -> None:
        checks = (
            ("--max-audio-s", self.max_audio_s, self.max_audio_s > 0, "more than 0"),
            ("--queue", self.queue, self.queue >= 0, "0 or more"),
            (
                "--idle-timeout",
                self.idle_timeout_s,
                self.idle_timeout_s >= 1,
                "a whole number of seconds, 1 or more",
            ),
            ("--write-timeout", self.write_timeout_s, self.write_timeout_s > 0, "more than 0"),
        )
        for option, value, ok, want in checks:  # `ok` is False for NaN too
            if not ok:
                raise InputError(f"{option} {value}: must be {want}")


class ServeError(AsrbenchError):
    """A request the server answers with an error; carries the HTTP status and OpenAI type."""

    def __init__(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ):
        self.status, self.kind, self.param = status, kind, param
        self.headers = headers or {}
        super().__init__(message)


def error_body(
    status: int, message: str, kind: str = "invalid_request_error", param: str | None = None
) -> bytes:
    """An error answer in OpenAI's format."""
    code = {401: "invalid_api_key"}.get(status)
    return json.dumps(
        {"error": {"message": message, "type": kind, "param": param, "code": code}}
    ).encode()


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[bytes, str]]:
    """Form fields of a multipart/form-data body: name -> (bytes, filename or '')."""
    if not content_type.startswith("multipart/form-data"):
        raise ServeError(400, "expected multipart/form-data with a `file` field")
    msg = BytesParser(policy=email_policy).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    if not msg.is_multipart():
        raise ServeError(
            400,
            "the multipart/form-data body has no parts (is its boundary "
            "right?); send a `file` field",
        )
    fields: dict[str, tuple[bytes, str]] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        # an RFC 2231 name comes as a (charset, language, text) tuple: no field we read has one
        if isinstance(name, str) and name:
            payload = part.get_payload(decode=True)  # bytes; None for a nested multipart
            fields[name] = (
                payload if isinstance(payload, bytes) else b"",
                part.get_filename() or "",
            )
    return fields


def text_field(fields: dict[str, tuple[bytes, str]], name: str, default: str) -> str:
    """A form field as text; a 400 naming it when it is not UTF-8."""
    raw = fields.get(name, (b"", ""))[0]
    try:
        return raw.decode("utf-8").strip() or default
    except UnicodeDecodeError:
        raise ServeError(400, f"`{name}` is not UTF-8 text", param=name) from None


class TranscriptionService:
    """A warm model behind the API: converts uploads, transcribes, renders the answer."""

    def __init__(
        self,
        model: Model,
        runner: Runner,
        options: RunOptions | None = None,
        work_root: Path | None = None,
        limits: Limits | None = None,
    ):
        self.model, self.runner = model, runner
        self.limits = limits or Limits()
        self.warm = WarmModel(model, runner, options or RunOptions(timeout_s=600), work_root)
        self.redactor = for_models([model])
        self.admission = Admission(self.limits.queue)  # the batch model's requests
        self.live: LiveModel | None = None  # the streaming program, started on first use
        if model.card.streaming:
            self.live = LiveModel(
                model,
                runner.name,
                options or RunOptions(timeout_s=600),
                lambda: Path(self.warm.work_root or ".") / "stream.log",
                Admission(self.limits.queue),
            )

    def prepare(self) -> str:
        """Build the image / virtualenv, start the program and warm it up (open models)."""
        identity = self.runner.prepare(self.model)
        warmup = (
            None
            if self.model.card.type == "commercial-api"
            else silence_wav(self.model.card.sample_rate)
        )
        self.warm.start(warmup)
        return identity

    def close(self) -> None:
        self.warm.close()
        if self.live is not None:
            self.live.close()

    @staticmethod
    def _admit(admission: Admission) -> None:
        """A place in `admission`'s queue, or a 503 with Retry-After naming `--queue`."""
        try:
            admission.enter()
        except QueueFull as exc:
            raise ServeError(
                503, str(exc), "server_error", headers={"Retry-After": str(RETRY_AFTER_S)}
            ) from None

    def _model_wav(self, data: bytes, filename: str) -> tuple[bytes, float]:
        """(WAV bytes at the card's rate, seconds) of an upload; a bad one is a ServeError."""
        try:
            return to_model_wav(
                data,
                self.model.card.sample_rate,
                filename,
                self.limits.max_audio_s,
                self.warm.work_root,
            )
        except AudioError as exc:
            raise ServeError(exc.status, str(exc), param="file") from None

    def transcribe(self, data: bytes, filename: str = "upload") -> tuple[str, float, float]:
        """(text, audio seconds, processing seconds) of one upload; ServeError otherwise."""
        wav, seconds = self._model_wav(data, filename)
        self._admit(self.admission)
        try:
            result = self.warm.transcribe(wav)
        except WarmError as exc:
            raise ServeError(exc.status, self.redactor.redact(str(exc)), "server_error") from None
        finally:
            self.admission.leave()
        return result.text, seconds, result.processing_s

    def stream(self, data: bytes, filename: str = "upload") -> Iterable[bytes]:
        """OpenAI's streamed transcription: server-sent `transcript.text.delta` events, then
        `transcript.text.done` (`live.TextDeltas`). The upload is checked (and the request
        admitted) before the first byte, so a bad one is an ordinary error answer. It waits in
        the queue of the program it will use: the streaming one, or the batch one."""
        wav, _ = self._model_wav(data, filename)
        admission = self.live.admission if self.live is not None else self.admission
        self._admit(admission)
        return _Stream(self._sse(wav), admission.leave)

    def _sse(self, wav: bytes) -> Iterator[bytes]:
        deltas, text = TextDeltas(), ""
        try:
            for kind, hyp in self._hypotheses(wav):
                if kind == "final":
                    text = hyp
                delta = deltas.final(hyp) if kind == "final" else deltas.partial(hyp)
                if delta:
                    yield sse({"type": "transcript.text.delta", "delta": delta})
            yield sse({"type": "transcript.text.done", "text": text})
        except (WarmError, StreamError, OSError) as exc:
            message = self.redactor.redact(f"the model failed mid-stream: {exc}")
            print(f"serve: {message}", file=sys.stderr)
            yield sse({"type": "error", "error": {"message": message, "type": "server_error"}})

    def _hypotheses(self, wav: bytes) -> Iterator[tuple[str, str]]:
        """(partial|final, text) as the model gives them; a batch-only card: one final."""
        if self.live is None:
            yield "final", self.warm.transcribe(wav).text
            return
        for event in self.live.events(wav):
            yield event.type, event.text


class _Stream:
    """A streamed body whose `close` (called by the WSGI server whether or not the body was
    read: the client may leave first) ends the events and frees the request's place once."""

    def __init__(self, events: Iterator[bytes], done: Callable[[], None]):
        self._events, self._done = events, done

    def __iter__(self) -> Iterator[bytes]:
        return self._events

    def close(self) -> None:
        try:
            self._events.close()  # type: ignore[attr-defined]
        finally:
            done, self._done = self._done, lambda: None
            done()


def sse(event: dict) -> bytes:
    """One server-sent event carrying `event` as its JSON data."""
    return b"data: " + json.dumps(event).encode() + b"\n\n"


class _JsonErrorTask(ErrorTask):
    """waitress's own refusals (bad Content-Length, bad chunking, a body over the limit, a
    request line that is not HTTP) in OpenAI's error format instead of text/plain."""

    def execute(self) -> None:
        error = self.request.error
        message = f"{error.reason}: {error.body}"
        if error.code == 413:
            message = (
                f"request body larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB "
                "(OpenAI's limit on `file`)"
            )
        body = error_body(error.code, message, param="file" if error.code == 413 else None)
        print(f"serve: {self.channel.addr[0]} refused: {error.code} {message}", file=sys.stderr)
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _Channel(HTTPChannel):
    error_task_class = _JsonErrorTask


def _transcription(
    service: TranscriptionService, fields: dict[str, tuple[bytes, str]], language: str
) -> tuple[int, str, str | Iterable[bytes], dict[str, str]]:
    """The answer to a transcription form: rendered text, or a stream of events."""
    if "file" not in fields:
        raise ServeError(400, "Missing required parameter: 'file'.", param="file")
    fmt = text_field(fields, "response_format", "json")
    if fmt not in FORMATS:
        raise ServeError(
            400,
            f"response_format {fmt!r} is not one of {', '.join(FORMATS)}",
            param="response_format",
        )
    data, filename = fields["file"]
    if len(data) > MAX_UPLOAD_BYTES:
        raise ServeError(413, "file larger than 25 MB", param="file")
    if text_field(fields, "stream", "false").lower() == "true":
        return 200, "text/event-stream", service.stream(data, filename or "upload"), {}
    text, seconds, processing = service.transcribe(data, filename or "upload")
    ctype, answer = render(fmt, text, seconds, language)
    return 200, ctype, answer, {"X-Processing-Seconds": f"{processing:.3f}"}


def make_app(service: TranscriptionService, api_key: str | None = None) -> Callable:
    """The WSGI application: `/v1/models` and `/v1/audio/transcriptions`."""
    redact = service.redactor.redact
    language = service.model.card.languages[0]

    def authorised(environ: dict) -> bool:
        if not api_key:
            return True
        given = environ.get("HTTP_AUTHORIZATION", "")
        return hmac.compare_digest(given.encode("latin-1", "replace"), f"Bearer {api_key}".encode())

    def handle(environ: dict) -> tuple[int, str, str | Iterable[bytes], dict[str, str]]:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "").rstrip("/")
        if path == "/v1/models" and method == "GET":
            return (
                200,
                "application/json",
                json.dumps(
                    {
                        "object": "list",
                        "data": [
                            {"id": service.model.id, "object": "model", "owned_by": "asrbench"}
                        ],
                    }
                ),
                {},
            )
        if path != "/v1/audio/transcriptions":
            raise ServeError(404, f"unknown path {environ.get('PATH_INFO', '')!r}")
        if method != "POST":
            raise ServeError(405, f"{method} {path}: only POST is served here")
        length = int(environ.get("CONTENT_LENGTH") or 0)  # waitress checked it is a count
        body = environ["wsgi.input"].read(length)
        if not authorised(environ):
            raise ServeError(401, "Incorrect API key provided.")
        fields = parse_multipart(environ.get("CONTENT_TYPE", ""), body)
        return _transcription(service, fields, language)

    def app(environ: dict, start_response: Callable) -> Iterable[bytes]:
        try:
            status, ctype, text, headers = handle(environ)
            if not isinstance(text, str):  # a stream: sent as it comes (chunked)
                start_response("200 OK", [("Content-Type", ctype), ("Cache-Control", "no-cache")])
                return text
            data = text.encode()
        except ServeError as exc:
            status, ctype, headers = exc.status, "application/json", exc.headers
            message = redact(str(exc))
            if exc.status >= 500:
                print(f"serve: {exc.status}: {message}", file=sys.stderr)
            data = error_body(exc.status, message, exc.kind, exc.param)
        except Exception:
            print(redact(f"serve: internal error:\n{traceback.format_exc()}"), file=sys.stderr)
            status, ctype, headers = 500, "application/json", {}
            data = error_body(
                500, "internal server error; the server's log has the details", "server_error"
            )
        print(
            redact(
                f"serve: {environ.get('REMOTE_ADDR', '-')} {environ['REQUEST_METHOD']} "
                f"{environ.get('PATH_INFO', '')} {status}"
            ),
            file=sys.stderr,
        )
        start_response(
            f"{status} {HTTPStatus(status).phrase}",
            [("Content-Type", ctype), ("Content-Length", str(len(data))), *headers.items()],
        )
        return [data]

    return app


class Server:
    """The HTTP server (waitress) for one service: `serve_forever()` in one thread, `close()`
    from any. `port` is the bound port (useful with port 0)."""

    def __init__(self, app: Callable, host: str, port: int, limits: Limits):
        self._map: dict[Any, Any] = {}
        self._inner = create_server(
            app,
            map=self._map,
            host=host,
            port=port,
            ident="asrbench-serve",
            # one in the model, `queue` waiting for it, and threads left for conversions,
            # `/v1/models` and quick refusals
            threads=limits.queue + 4,
            channel_timeout=limits.idle_timeout_s,
            cleanup_interval=max(1, min(30, limits.idle_timeout_s // 2)),
            max_request_body_size=MAX_UPLOAD_BYTES + _FORM_SLACK,
            expose_tracebacks=False,
        )
        self._inner.channel_class = _Channel
        self.host, self.port = self._inner.effective_host, self._inner.effective_port
        self.server_address = (self.host, self.port)
        self._stop = threading.Event()
        self._running = threading.Lock()

    def serve_forever(self) -> None:
        """Serve until `close()` (or KeyboardInterrupt: Ctrl-C, or SIGTERM in `ops/serve`)."""
        with self._running:
            while not self._stop.is_set():
                wasyncore.loop(timeout=1.0, map=self._map, use_poll=True, count=1)

    def close(self) -> None:
        """Stop serving, end the worker threads and close every connection."""
        self._stop.set()
        self._inner.pull_trigger()
        if self._running.acquire(timeout=10):  # serve_forever has returned
            self._running.release()
        self._inner.task_dispatcher.shutdown(timeout=5)
        for channel in list(self._map.values()):
            if channel is not self._inner and channel is not self._inner.trigger:
                channel.close()
        self._inner.close()  # the listening socket and the trigger


def make_server(
    service: TranscriptionService,
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str | None = None,
) -> Server:
    """An HTTP server for `service`; with `api_key`, requests need `Authorization: Bearer`."""
    return Server(make_app(service, api_key), host, port, service.limits)
