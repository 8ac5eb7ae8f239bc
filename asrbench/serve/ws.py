"""`ops/serve --ws-port`: a WebSocket endpoint for raw PCM, beside the OpenAI-compatible HTTP one.

`ws://HOST:PORT/v1/stream[?sample_rate=R]`: the client sends binary messages of 16-bit
little-endian mono PCM at the card's sample rate (any length; `sample_rate` defaults to it and
another rate is refused), then the text message `{"type": "end"}` when its utterance is over;
the server sends each event of the model's streaming program as it comes, as JSON text:
`{"type": "partial"|"final", "text": ..., "audio_s": ...}` (`audio_s`: audio the program had
consumed). After the final the client may start the next utterance on the same connection.
Errors are a JSON `{"type": "error", "message": ...}` and a close with code 1008 (bad request)
or 1011 (the model failed). With `--api-key-env`, the handshake needs `Authorization: Bearer`.

The model is the same warm streaming program `stream=true` uses (`live.LiveModel`), one
utterance at a time, and no client can hold it for long (`server.Limits`, options of
`ops/serve`): at most `--queue` utterances (WebSocket or `stream=true`) wait for it, more are
closed with 1013 (try again later); a client that sends nothing for `--idle-timeout` seconds is
closed with 1008, mid-utterance or between utterances; one that leaves what it is sent unread
(a keepalive ping unanswered, or a send that cannot go out) for `--write-timeout` seconds is
dropped; an utterance longer than `--max-audio-s` is closed with 1009. Each reason names the
option. The utterance such a client leaves is ended and its events drained before the next
session starts. WebSocket is `websockets`' synchronous server (docs/DEPENDENCIES.md), in its
own thread, one thread per connection.
"""

from __future__ import annotations

import hmac
import json
import socket
import struct
import sys
import threading
from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from asrbench.errors import AsrbenchError
from asrbench.serve.admission import QueueFull
from asrbench.serve.live import Session
from asrbench.streaming.feed import StreamError

if TYPE_CHECKING:
    from asrbench.serve.server import TranscriptionService

PATH = "/v1/stream"
IDLE, BUSY, TOO_LONG = 1008, 1013, 1009  # close codes: policy, try again later, too big


class WsServer:
    """The WebSocket server of one service's warm streaming model; `serve_forever` in a thread."""

    def __init__(
        self, service: TranscriptionService, host: str, port: int, api_key: str | None = None
    ):
        from websockets.sync.server import serve

        assert service.live is not None  # the card has a streaming program
        self.live, self.limits, self.api_key = service.live, service.limits, api_key
        self.rate = service.model.card.sample_rate
        # A client that stops reading stops answering pings: a ping at most a third of
        # --write-timeout after it stopped, a third to answer it, a third for the closing
        # handshake, so it is dropped within --write-timeout.
        wait = self.limits.write_timeout_s / 3
        self._server = serve(
            self._handle,
            host,
            port,
            process_request=self._check,
            compression=None,
            ping_interval=wait,
            ping_timeout=wait,
            close_timeout=wait,
        )
        self.host, self.port = self._server.socket.getsockname()[:2]

    def _check(self, conn: Any, request: Any) -> Any:
        """Refuse a wrong path or key at the handshake (HTTP 404 / 401)."""
        if urlsplit(request.path).path.rstrip("/") != PATH:
            return conn.respond(404, f"unknown path; the stream is at {PATH}\n")
        if self.api_key:
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.api_key}".encode()):
                return conn.respond(401, "Incorrect API key provided.\n")
        return None

    def _handle(self, conn: Any) -> None:
        _send_timeout(conn.socket, self.limits.write_timeout_s)
        query = parse_qs(urlsplit(conn.request.path).query)
        try:
            rate = int(query.get("sample_rate", [str(self.rate)])[0])
        except ValueError:
            rate = -1
        if rate != self.rate:
            _error(conn, 1008, f"sample_rate must be the model's, {self.rate} Hz")
            return
        inbox = _Inbox(conn, self.limits.idle_timeout_s, int(self.limits.max_audio_s * rate * 2))
        try:
            while self._utterance(conn, inbox, rate):
                pass
        except (StreamError, OSError) as exc:
            print(f"serve: websocket: the model failed: {exc}", file=sys.stderr)
            _error(conn, 1011, f"the model failed: {exc}")

    def _utterance(self, conn: Any, inbox: _Inbox, rate: int) -> bool:
        """One utterance: a place in the model's queue, then audio in until `end` and events
        out as they come. False when the client has gone or was closed."""
        from websockets.exceptions import ConnectionClosed

        try:
            first = inbox.next()
        except TimeoutError:
            _error(conn, IDLE, self._idle())
            return False
        except ConnectionClosed:
            return False
        try:
            with (
                self.live.admission.place(),
                self.live.session(rate, inbox.read_ahead) as live,
            ):
                return self._feed(conn, inbox, live, first)
        except QueueFull as exc:
            _error(conn, BUSY, str(exc))
        except _TooLong:  # sent while it waited for the model
            _error(conn, TOO_LONG, self._too_long())
        except ConnectionClosed:  # gone while it waited for the model
            pass
        return False

    def _feed(self, conn: Any, inbox: _Inbox, live: Session, message: Any) -> bool:
        """Feed the client's audio to `live` until `end` while a thread sends its events.
        Whatever ends it, the utterance is ended and every event read before this returns."""
        from websockets.exceptions import ConnectionClosed

        out = threading.Thread(target=_forward, args=(conn, live), daemon=True)
        out.start()
        try:
            while not _is_end(message):
                if isinstance(message, bytes):
                    live.send(message)
                    if live.audio_s > self.limits.max_audio_s:
                        _error(conn, TOO_LONG, self._too_long())
                        return False
                message = inbox.next()
        except TimeoutError:
            _error(conn, IDLE, self._idle())
            return False
        except ConnectionClosed:
            return False
        finally:
            live.end()
            out.join()
        return True

    def _idle(self) -> str:
        idle = self.limits.idle_timeout_s
        return f"nothing received for {idle} s (ops/serve --idle-timeout {idle})"

    def _too_long(self) -> str:
        return f"utterance over {self.limits.max_audio_s:g} s (ops/serve --max-audio-s)"

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def close(self) -> None:
        self._server.shutdown()


class _TooLong(AsrbenchError):
    """More audio than --max-audio-s, in one utterance or waiting in a client's inbox (caught
    here and answered with close 1009; an AsrbenchError so that, escaped, it still exits 1)."""


class _Inbox:
    """A client's messages, read ahead while its utterance waits for the model: websockets
    stops reading a socket once 16 messages wait unread, and would then miss the client's
    answers to its keepalive pings and drop a client that did nothing wrong. What waits is
    bounded by --max-audio-s of audio (`_TooLong` past it)."""

    def __init__(self, conn: Any, idle_s: float, max_bytes: int):
        self.conn, self.idle_s, self.max_bytes = conn, idle_s, max_bytes
        self._waiting: deque[Any] = deque()
        self._bytes = 0

    def next(self) -> Any:
        """The next message; TimeoutError after `idle_s` of nothing, ConnectionClosed."""
        if self._waiting:
            message = self._waiting.popleft()
            self._bytes -= len(message) if isinstance(message, bytes) else 0
            return message
        return self.conn.recv(timeout=self.idle_s)

    def read_ahead(self) -> None:
        """Take every message already received (without waiting)."""
        while True:
            try:
                message = self.conn.recv(timeout=0)
            except TimeoutError:
                return
            self._waiting.append(message)
            self._bytes += len(message) if isinstance(message, bytes) else 0
            if self._bytes > self.max_bytes:
                raise _TooLong


def _send_timeout(sock: socket.socket, seconds: float) -> None:
    """A send to `sock` that cannot go out for `seconds` fails (SO_SNDTIMEO) instead of
    blocking: websockets sends under a lock that its keepalive pings need too, so a client
    whose buffers are full would otherwise hold the connection, and the model, forever."""
    whole = int(seconds)
    micro = int((seconds - whole) * 1_000_000)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", whole, micro))


def _is_end(message: Any) -> bool:
    if not isinstance(message, str):
        return False
    try:
        return json.loads(message).get("type") == "end"
    except (json.JSONDecodeError, AttributeError):
        return False


def _forward(conn: Any, live: Session) -> None:
    """Send the session's events to the client as they arrive (the client may have gone)."""
    from websockets.exceptions import ConnectionClosed

    try:
        for event in live.events():
            body = {"type": event.type, "text": event.text, "audio_s": event.audio_s}
            try:
                conn.send(json.dumps(body))
            except ConnectionClosed:
                pass  # keep reading to the final: the program's queue must be drained
    except (StreamError, OSError) as exc:
        print(f"serve: websocket: the model failed: {exc}", file=sys.stderr)
        _error(conn, 1011, f"the model failed: {exc}")


def _error(conn: Any, code: int, message: str) -> None:
    from websockets.exceptions import ConnectionClosed

    try:
        conn.send(json.dumps({"type": "error", "message": message}))
        conn.close(code, message[:120])
    except ConnectionClosed:
        pass
