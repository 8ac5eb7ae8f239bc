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
utterance at a time: a second client waits for the first utterance to end. WebSocket is
`websockets`' synchronous server (docs/DEPENDENCIES.md), in its own thread.
"""

from __future__ import annotations

import hmac
import json
import sys
import threading
from typing import Any
from urllib.parse import parse_qs, urlsplit

from asrbench.serve.live import LiveModel, Session
from asrbench.streaming.feed import StreamError

PATH = "/v1/stream"


class WsServer:
    """The WebSocket server of one warm streaming model; `serve_forever` in a thread."""

    def __init__(
        self, live: LiveModel, rate: int, host: str, port: int, api_key: str | None = None
    ):
        from websockets.sync.server import serve

        self.live, self.rate, self.api_key = live, rate, api_key
        self._server = serve(
            self._handle, host, port, process_request=self._check, compression=None
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
        query = parse_qs(urlsplit(conn.request.path).query)
        try:
            rate = int(query.get("sample_rate", [str(self.rate)])[0])
        except ValueError:
            rate = -1
        if rate != self.rate:
            _error(conn, 1008, f"sample_rate must be the model's, {self.rate} Hz")
            return
        try:
            while self._utterance(conn, rate):
                pass
        except (StreamError, OSError) as exc:
            print(f"serve: websocket: the model failed: {exc}", file=sys.stderr)
            _error(conn, 1011, f"the model failed: {exc}")

    def _utterance(self, conn: Any, rate: int) -> bool:
        """One utterance: audio in until `end`, events out as they come. False when the
        client has gone (or closed before sending audio)."""
        from websockets.exceptions import ConnectionClosed

        try:
            first = conn.recv()
        except ConnectionClosed:
            return False
        with self.live.session(rate) as live:
            out = threading.Thread(target=_forward, args=(conn, live), daemon=True)
            out.start()
            message: Any = first
            try:
                while not _is_end(message):
                    if isinstance(message, bytes):
                        live.send(message)
                    message = conn.recv()
            except ConnectionClosed:
                live.end()
                out.join()
                return False
            live.end()
            out.join()
        return True

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def close(self) -> None:
        self._server.shutdown()


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
