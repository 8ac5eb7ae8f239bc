"""google_stt_en, streaming: Google Cloud Speech-to-Text v1 `StreamingRecognize` over gRPC.

As documented (cloud.google.com/speech-to-text/docs/reference/rpc/google.cloud.speech.v1,
`Speech.StreamingRecognize`; "Transcribe audio from streaming input"): one bidirectional stream
per session on `speech.googleapis.com:443` (TLS), method
`/google.cloud.speech.v1.Speech/StreamingRecognize`. The first `StreamingRecognizeRequest`
carries `streaming_config` only (`config`: LINEAR16, `sample_rate_hertz`, `language_code`,
`model`, `enable_automatic_punctuation: false`, `max_alternatives: 1`; `interim_results:
true`), every later one `audio_content` only (100-ms pieces, Google's recommended frame); the
client ends the audio by half-closing the stream. Responses hold `results[]`, each with
`alternatives[0].transcript`, `is_final`, `stability` and `result_end_time` (from the start of
that stream's audio). The non-final results of a response together are the interim (their
transcripts concatenated: Google splits an interim into a stable piece and an unstable one that
begins with a space); a final result is a final segment. Once the half-closed audio is
transcribed the server ends the response stream with status OK: the utterance's final.

Errors are the call's gRPC status (or a response's `error`, a google.rpc.Status):
RESOURCE_EXHAUSTED is throttling (its google.rpc.RetryInfo, if any, is the least wait);
UNAVAILABLE, INTERNAL, ABORTED, UNKNOWN, DEADLINE_EXCEEDED and CANCELLED by the server are
reconnected; UNAUTHENTICATED, PERMISSION_DENIED and INVALID_ARGUMENT with reason API_KEY_INVALID
(Google's answer to a wrong key) are credentials: the program stops; the others are not retried.
Auth: `x-goog-api-key: GOOGLE_API_KEY` metadata, or when no key is set `authorization: Bearer
GOOGLE_ACCESS_TOKEN` (an OAuth access token, e.g. `gcloud auth print-access-token`).

Google ends a stream after about 305 s (OUT_OF_RANGE, "Exceeded maximum allowed stream
duration"). As its "endless streaming" sample does, a stream is restarted before that, once it
has carried `GOOGLE_STT_MAX_STREAM_S` of audio or lasted that long: the audio after the last
final's end is sent again on the new stream, the finals kept. A restart is not a failure and is
not counted against the retry policy; an OUT_OF_RANGE that still comes is reconnected.

The messages are Google's own protos (`google-cloud-speech`'s `cloud_speech` types, as their
`.pb()` protobuf classes) on a plain `grpcio` call, so retries, reconnects and the mapping onto
the streaming contract are vendor_stream.py's, as for the WebSocket vendors.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import grpc
from apiclient import ApiError, load_card, settings
from google.cloud.speech_v1.types import cloud_speech
from vendor_stream import Context, Final, Interim, Item, Utterance, serve

CARD = load_card(__file__)
METHOD = "/google.cloud.speech.v1.Speech/StreamingRecognize"
Request = cloud_speech.StreamingRecognizeRequest.pb()
Response = cloud_speech.StreamingRecognizeResponse.pb()
RecognitionConfig = cloud_speech.RecognitionConfig.pb()
StreamingRecognitionConfig = cloud_speech.StreamingRecognitionConfig.pb()
PIECE = 3200  # bytes of audio per request: 100 ms at 16 kHz, Google's recommended frame
INSECURE = "insecure://"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
KINDS = {
    "RESOURCE_EXHAUSTED": "throttled",
    "UNAVAILABLE": "network",
    "CANCELLED": "network",  # by the server or a proxy: the client's own cancels are ignored
    "INTERNAL": "server",
    "UNKNOWN": "server",
    "ABORTED": "server",
    "DEADLINE_EXCEEDED": "server",
    "UNAUTHENTICATED": "auth",
    "PERMISSION_DENIED": "auth",
}
CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}
_CHANNELS: dict[str, grpc.Channel] = {}


def channel(endpoint: str) -> grpc.Channel:
    """The program's one channel to `endpoint`: `HOST:PORT` over TLS, or `insecure://HOST:PORT`
    in plaintext, to a loopback address only (a local stub)."""
    if endpoint not in _CHANNELS:
        if not endpoint.startswith(INSECURE):
            _CHANNELS[endpoint] = grpc.secure_channel(endpoint, grpc.ssl_channel_credentials())
        else:
            target = endpoint[len(INSECURE) :]
            if target.rpartition(":")[0] not in LOOPBACK:
                raise ApiError(
                    "client",
                    f"GOOGLE_STT_GRPC_ENDPOINT={endpoint}: plaintext is allowed to a loopback "
                    "address only; give HOST:PORT for TLS",
                )
            options = [("grpc.enable_http_proxy", 0)]
            _CHANNELS[endpoint] = grpc.insecure_channel(target, options=options)
    return _CHANNELS[endpoint]


def credentials() -> list[tuple[str, str]]:
    """The call's auth metadata: the API key, else the bearer token."""
    key, token = os.environ.get("GOOGLE_API_KEY", ""), os.environ.get("GOOGLE_ACCESS_TOKEN", "")
    if key:
        return [("x-goog-api-key", key)]
    if token:
        return [("authorization", f"Bearer {token}")]
    raise ApiError("auth", "neither GOOGLE_API_KEY nor GOOGLE_ACCESS_TOKEN is set")


def _seconds(duration: Any) -> float:
    return float(duration.seconds) + duration.nanos / 1e9


def status_details(trailers: Iterable[tuple[str, Any]] | None) -> list[Any]:
    """The google.rpc.Status details (`Any`s) a failed call carried in its trailers."""
    from google.rpc import status_pb2

    return [
        detail
        for key, value in trailers or ()
        if key == "grpc-status-details-bin"
        for detail in status_pb2.Status.FromString(value).details
    ]


def classify(code: str, message: str, details: Iterable[Any] = ()) -> ApiError:
    """A gRPC status as the retry policy's ApiError (kinds: apiclient.ApiError)."""
    from google.rpc import error_details_pb2

    reasons, delay = set(), None
    for detail in details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
            delay = _seconds(retry.retry_delay)
        elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reasons.add(info.reason)
    kind = KINDS.get(code, "client")
    if code == "INVALID_ARGUMENT" and (
        "API_KEY_INVALID" in reasons or "API key not valid" in message
    ):
        kind = "auth"
    elif code == "OUT_OF_RANGE" and "stream duration" in message:
        kind = "server"  # the stream outlived Google's limit: a new one continues it
    return ApiError(kind, f"gRPC {code}: {message or '(no message)'}", retry_after=delay)


class Call:
    """One StreamingRecognize call: requests go through a queue, responses are iterated."""

    def __init__(self, chan: grpc.Channel, config: Any, metadata: list[tuple[str, str]]):
        self.requests: queue.Queue[Any] = queue.Queue()
        self.requests.put(Request(streaming_config=config))
        self.started = time.monotonic()
        self.audio_bytes = 0
        self.answered = False  # a response has come
        self.closed = False  # abandoned by the client: its reader records nothing more
        rpc = chan.stream_stream(
            METHOD,
            request_serializer=Request.SerializeToString,
            response_deserializer=Response.FromString,
        )
        self.responses = rpc(self._requests(), metadata=metadata)

    def _requests(self) -> Iterator[Any]:
        while (request := self.requests.get()) is not None:
            yield request

    def send(self, pcm: bytes) -> None:
        for at in range(0, len(pcm), PIECE):
            self.requests.put(Request(audio_content=pcm[at : at + PIECE]))
        self.audio_bytes += len(pcm)

    def finish(self) -> None:
        self.requests.put(None)  # half-close: the audio is complete

    def close(self) -> None:
        self.closed = True
        self.requests.put(None)
        self.responses.cancel()


class Google:
    """The protocol: the call with its configuration and credentials, the responses' items."""

    def __init__(self) -> None:
        self.s = settings(CARD)

    def start(self) -> Call:
        return Call(channel(self.s["GOOGLE_STT_GRPC_ENDPOINT"]), self.config(), credentials())

    def config(self) -> Any:
        return StreamingRecognitionConfig(
            config=RecognitionConfig(
                encoding=RecognitionConfig.LINEAR16,
                sample_rate_hertz=int(CARD["sample_rate"]),
                language_code=self.s["GOOGLE_STT_LANGUAGE"],
                model=self.s["GOOGLE_STT_MODEL"],
                enable_automatic_punctuation=False,
                max_alternatives=1,
            ),
            interim_results=True,
        )

    def parse(self, response: Any) -> list[Item]:
        if response.HasField("error") and response.error.code:
            err = response.error
            raise classify(CODE_NAMES.get(err.code, str(err.code)), err.message, err.details)
        items: list[Item] = []
        interim, pending = "", False
        for result in response.results:
            text = result.alternatives[0].transcript if result.alternatives else ""
            if result.is_final:
                end = (
                    _seconds(result.result_end_time) if result.HasField("result_end_time") else None
                )
                items.append(Final(text, end))
            else:
                interim, pending = interim + text, True
        if pending:
            items.append(Interim(" ".join(interim.split())))
        return items


class GrpcUtterance(Utterance):
    """vendor_stream's session (retries, reconnects, partials, finals) over a gRPC `Call`."""

    def __init__(self, uid: str, make: Callable[[], Any], ctx: Context):
        super().__init__(uid, make, ctx)
        self.lock = threading.RLock()  # the reader checks its call and takes items under it
        self.max_stream_s = float(settings(CARD)["GOOGLE_STT_MAX_STREAM_S"])

    def _connect(self, vendor: Any) -> Call:
        return vendor.start()

    def _send(self, pcm: bytes) -> None:
        if self._too_long(self.ws, len(pcm)):
            self._restart(self.ws)  # sends the pending audio again, this piece included
        else:
            self.ws.send(pcm)

    def _finish(self) -> None:
        self.ws.finish()

    def _too_long(self, call: Call, extra: int) -> bool:
        """Whether `call` would pass the stream limit, and a new stream would not start at it."""
        rate, limit = self.ctx.rate, self.max_stream_s
        audio_s = (call.audio_bytes + extra) / 2 / rate
        over = audio_s > limit or time.monotonic() - call.started > limit
        return over and call.audio_bytes > 0 and len(self.pending) / 2 / rate < limit

    def _restart(self, call: Call) -> None:
        with self.lock:
            call.closed = True  # its reader drops whatever still comes
        call.close()
        print(
            f"{self.ctx.name}: {self.uid}: restarting the stream after "
            f"{call.audio_bytes / 2 / self.ctx.rate:.2f} s of audio (GOOGLE_STT_MAX_STREAM_S="
            f"{self.max_stream_s:g}), sending {len(self.pending) / 2 / self.ctx.rate:.2f} s "
            "of audio again",
            file=sys.stderr,
            flush=True,
        )
        self.open()

    def _read(self, vendor: Any, call: Call) -> None:
        try:
            for response in call.responses:
                call.answered = True
                items = vendor.parse(response)
                with self.lock:
                    if call.closed:
                        return
                    for item in items:
                        self._take(item)
            self._ended(call)
        except grpc.RpcError as exc:
            call.requests.put(None)  # ends grpc's thread that waits for the next request
            if not (call.closed or self.done.is_set()):
                details = status_details(exc.trailing_metadata())
                self.error = classify(exc.code().name, exc.details() or "", details)
        except ApiError as exc:
            if not call.closed:
                self.error = exc
                call.close()
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # not the documented form
            if not call.closed:
                self.error = ApiError("client", f"unexpected message from the server ({exc!r})")
                call.close()

    def _ended(self, call: Call) -> None:
        """The server ended the response stream with status OK."""
        with self.lock:
            if call.closed:
                return
        if self.finishing:
            self.done.set()  # everything after the half-close has been answered
        else:
            self.error = ApiError("network", "the server ended the stream before the audio did")

    def _recover(self) -> None:
        """As vendor_stream's, with a backoff first where a WebSocket would have been refused
        at its handshake: throttled, or a call that failed before any answer."""
        error, policy = self.error, self.ctx.policy
        assert error is not None
        retrying = error.retryable and self.reconnects + 1 < policy.max_attempts
        if retrying and (error.kind == "throttled" or not self.ws.answered):
            ceiling = min(policy.max_backoff_s, policy.backoff_s * 2**self.reconnects)
            floor = min(error.retry_after or 0.0, policy.max_backoff_s)
            delay = max(random.uniform(0, ceiling), floor)
            print(
                f"{self.ctx.name}: {self.uid}: backing off {delay:.2f} s ({error.kind})",
                file=sys.stderr,
                flush=True,
            )
            self.ctx.stop.wait(delay)
        super()._recover()


if __name__ == "__main__":
    sys.exit(serve(__file__, Google, GrpcUtterance))
