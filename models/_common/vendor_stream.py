"""What every vendor streaming program shares: one WebSocket session per utterance, retried,
reconnected, mapped onto the streaming contract (docs/STREAMING.md, "Vendor streaming APIs").

A vendor program supplies a `Vendor` (its URL, headers, opening handshake, how audio and the
end of stream are sent, and `parse`, which turns one server message into `Interim`, `Final`
and `Done` items) and calls `serve`. Per utterance:

- **connect** with the card's retry policy (`apiclient.call_with_retry`): a 429 or 5xx at the
  handshake is retried with backoff, never sooner than its `Retry-After`; 401/403 is not;
- **send** each PCM frame from stdin as it arrives; a reader thread turns the vendor's
  messages into events: a `partial` whenever the text (finals so far + the current interim)
  changes, the `final` (the finals joined) once the vendor says it is done;
- **reconnect** when the connection drops (abnormal closure, 1001, 1011-1014, a retryable
  vendor error) up to `max_attempts - 1` times per utterance: the audio after the last final's
  end (the vendor's own timestamps) is sent again on the new connection, the finals kept;
- **give up** on a close that is not retryable (1008 policy, a vendor's fatal code), or when
  the reconnects are spent: the reason goes to stderr and the program exits 1, so the platform
  records this utterance and the rest as failed and keeps the finals written before.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from apiclient import ApiError, RetryPolicy, call_with_retry, http_error, load_card
from stream_contract import ContractError, emit, frames, headers

RECONNECT_CODES = {1001, 1006, 1011, 1012, 1013, 1014}  # going away, dropped, server trouble
RESEND_CHUNK = 3200  # bytes (100 ms at 16 kHz) per message when audio is sent again


@dataclass(frozen=True)
class Interim:
    """The vendor's current, still revisable text after the last final."""

    text: str


@dataclass(frozen=True)
class Final:
    """A finalised segment; `end_s`: where it ends in this connection's audio (None: unknown)."""

    text: str
    end_s: float | None = None


@dataclass(frozen=True)
class Done:
    """The vendor has sent everything for the stream that was ended."""


Item = Interim | Final | Done


class Vendor(Protocol):
    """One connection's protocol; a fresh one per connection (`make`)."""

    def url(self) -> str: ...
    def headers(self) -> dict[str, str]: ...
    def open(self, ws: Any) -> None: ...  # after connecting: the configuration message(s)
    def audio(self, ws: Any, pcm: bytes) -> None: ...
    def finish(self, ws: Any) -> None: ...  # the end-of-stream message(s)
    def parse(self, message: str | bytes) -> list[Item]: ...  # ApiError for an error message


def ws_url(base: str, path: str) -> str:
    """The WebSocket URL of `path` under an http(s) or ws(s) base URL."""
    for http, ws in (("https://", "wss://"), ("http://", "ws://")):
        if base.startswith(http):
            base = ws + base[len(http) :]
    return base.rstrip("/") + path if path.startswith("/") else base + path


def connect(vendor: Vendor, timeout_s: float) -> Any:
    """Open the WebSocket and run the vendor's opening; classified ApiError on failure."""
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
    from websockets.sync.client import connect as ws_connect

    try:
        ws = ws_connect(
            vendor.url(),
            additional_headers=vendor.headers(),
            open_timeout=timeout_s,
            close_timeout=2,
            max_size=None,
        )
    except InvalidStatus as exc:
        resp = exc.response
        body = resp.body.decode("utf-8", "replace") if resp.body else resp.reason_phrase
        raise http_error(resp.status_code, body, resp.headers) from None
    except InvalidURI as exc:
        raise ApiError("client", f"{exc}: check the card's URL setting") from None
    except TimeoutError:
        raise ApiError("timeout", f"no handshake within {timeout_s:g} s") from None
    except (OSError, InvalidHandshake) as exc:
        raise ApiError("network", f"connection failed: {type(exc).__name__}") from None
    try:
        vendor.open(ws)
    except (ConnectionClosed, TimeoutError) as exc:
        ws.close()
        raise ApiError("network", f"the session did not start ({type(exc).__name__})") from None
    except Exception:
        ws.close()
        raise
    return ws


def close_error(code: int | None, reason: str) -> ApiError:
    """A close the client did not ask for: retryable when the server dropped or restarted."""
    code = 1006 if code is None else code
    kind = "network" if code in RECONNECT_CODES else "client"
    return ApiError(kind, f"the server closed the stream ({code}{': ' + reason if reason else ''})")


class Utterance:
    """One utterance's session: the transcript so far, the audio not yet covered by a final."""

    def __init__(self, uid: str, make: Callable[[], Vendor], ctx: Context):
        self.uid, self.make, self.ctx = uid, make, ctx
        self.finals: list[str] = []
        self.interim = ""
        self.written = ""
        self.received = 0  # samples of this utterance read from stdin
        self.pending = bytearray()  # audio from sample `pending_start` on, not yet final
        self.pending_start = 0
        self.conn_start = 0  # sample of the utterance where the current connection's audio starts
        self.lock = threading.Lock()
        self.finishing = False
        self.reconnects = 0
        self.vendor: Vendor | None = None
        self.ws: Any = None
        self.reader: threading.Thread | None = None
        self.done = threading.Event()
        self.error: ApiError | None = None

    # -- the connection ------------------------------------------------------------------

    def open(self) -> None:
        def attempt() -> tuple[Vendor, Any]:
            vendor = self.make()
            return vendor, self._connect(vendor)

        self.vendor, self.ws = call_with_retry(
            attempt, self.ctx.policy, self.uid, self.ctx.name, self.ctx.stop
        )  # type: ignore[arg-type]
        self.error = None
        with self.lock:  # this connection's audio starts with the audio not yet final
            self.conn_start, again = self.pending_start, bytes(self.pending)
        self.reader = threading.Thread(target=self._read, args=(self.vendor, self.ws), daemon=True)
        self.reader.start()
        for at in range(0, len(again), RESEND_CHUNK):
            self._send(again[at : at + RESEND_CHUNK])

    def _connect(self, vendor: Vendor) -> Any:
        """One connection; a subclass over another transport overrides this, `_send`,
        `_finish` and `_read` (gRPC: models/google_stt_en/stream.py)."""
        return connect(vendor, self.ctx.policy.timeout_s)

    def _send(self, pcm: bytes) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            self.vendor.audio(self.ws, pcm)  # type: ignore[union-attr]
        except ConnectionClosed:
            pass  # the reader sees the close and records why

    def _finish(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            self.vendor.finish(self.ws)  # type: ignore[union-attr]
        except ConnectionClosed:
            pass  # the reader sees the close and records why

    def _read(self, vendor: Vendor, ws: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            while not self.done.is_set():
                for item in vendor.parse(ws.recv()):
                    self._take(item)
        except ConnectionClosed as exc:
            if self.done.is_set():
                return
            code, reason = (exc.rcvd.code, exc.rcvd.reason) if exc.rcvd else (None, "")
            if code == 1000 and self.finishing:
                self.done.set()  # closed normally after the end of stream: all was sent
            else:
                self.error = close_error(code, reason or "before the end of the stream")
        except ApiError as exc:
            self.error = exc
            ws.close()
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # not the documented form
            self.error = ApiError("client", f"unexpected message from the server ({exc!r})")
            ws.close()

    def _take(self, item: Item) -> None:
        with self.lock:
            if isinstance(item, Done):
                self.done.set()
                return
            if isinstance(item, Final):
                if item.text.strip():
                    self.finals.append(item.text.strip())
                self.interim = ""
                if item.end_s is not None:
                    self._trim(self.conn_start + round(item.end_s * self.ctx.rate))
            else:
                self.interim = item.text.strip()
            self._partial()

    def _trim(self, sample: int) -> None:
        cut = max(0, min(sample - self.pending_start, len(self.pending) // 2))
        del self.pending[: cut * 2]
        self.pending_start += cut

    def _partial(self) -> None:
        text = " ".join(x for x in [*self.finals, self.interim] if x)
        if text != self.written:
            self.written = text
            emit(self.ctx.out, id=self.uid, type="partial", text=text, audio_s=self.audio_s())

    def audio_s(self) -> float:
        return self.received / self.ctx.rate

    def _recover(self) -> None:
        """The connection dropped: reconnect if the drop is retryable and attempts remain."""
        assert self.error is not None
        if self.reader is not None:
            self.reader.join(timeout=self.ctx.policy.timeout_s)
        error = self.error
        if not error.retryable or self.reconnects + 1 >= self.ctx.policy.max_attempts:
            raise ApiError(error.kind, f"{error.args[0]} (after {self.reconnects} reconnects)")
        self.reconnects += 1
        print(
            f"{self.ctx.name}: {self.uid}: {error}; reconnecting "
            f"({self.reconnects}/{self.ctx.policy.max_attempts - 1}), sending "
            f"{len(self.pending) / 2 / self.ctx.rate:.2f} s of audio again",
            file=sys.stderr,
            flush=True,
        )
        self.open()
        if self.finishing:
            self._finish()

    # -- the utterance -------------------------------------------------------------------

    def feed(self, chunks: Iterator[bytes]) -> str:
        """Stream every frame, end the stream, wait for the vendor; the final text."""
        self.open()
        for pcm in chunks:
            with self.lock:
                self.pending += pcm
                self.received += len(pcm) // 2
            if self.error is not None:
                self._recover()  # sends the pending audio, this frame included
            else:
                self._send(pcm)
        self.finishing = True
        if self.error is None:
            self._finish()
        deadline = time.monotonic() + self.ctx.policy.timeout_s
        while not self.done.wait(0.05):
            if self.error is not None:
                self._recover()
                deadline = time.monotonic() + self.ctx.policy.timeout_s
            elif time.monotonic() > deadline:
                raise ApiError(
                    "timeout",
                    f"no end of transcript within {self.ctx.policy.timeout_s:g} s of the end "
                    "of the stream",
                )
        self.ws.close()
        return " ".join(self.finals)


@dataclass(frozen=True)
class Context:
    name: str
    policy: RetryPolicy
    rate: int
    out: Any
    stop: threading.Event


def serve(
    program_file: str, make: Callable[[], Vendor], session: type[Utterance] = Utterance
) -> int:
    """The whole streaming program: `ready`, then one `session` per utterance until stdin
    ends. Exit status: 0 at the end of stdin, 1 when the vendor or stdin failed (stderr says
    why)."""
    card = load_card(program_file)
    ctx = Context(
        card["id"], RetryPolicy.from_card(card), int(card["sample_rate"]), sys.stdout.buffer,
        threading.Event(),
    )  # fmt: skip
    print(f"{ctx.name}: streaming; {ctx.policy}", file=sys.stderr, flush=True)
    emit(ctx.out, type="ready")
    inp = sys.stdin.buffer
    uid = "(before the first utterance)"
    try:
        for uid, _head in headers(inp, ctx.rate):
            utt = session(uid, make, ctx)
            text = utt.feed(frames(inp))
            emit(ctx.out, id=uid, type="final", text=text, audio_s=utt.audio_s())
    except (ApiError, ContractError) as exc:
        print(f"{ctx.name}: {uid}: {exc}", file=sys.stderr, flush=True)
        if isinstance(exc, ApiError) and exc.kind == "auth":
            secrets = ", ".join(card.get("secrets") or [])
            print(
                f"{ctx.name}: the API rejected the credentials; check {secrets} in the host "
                "environment",
                file=sys.stderr,
                flush=True,
            )
        return 1
    return 0
