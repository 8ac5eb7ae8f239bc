"""A loopback gRPC server of Google Cloud Speech-to-Text v1 `Speech/StreamingRecognize`, built
with grpcio on Google's own message classes (google-cloud-speech's `cloud_speech` protos). It
never contacts Google and listens on 127.0.0.1 only, on an ephemeral port.

It checks what Google checks of the client: the credentials (`x-goog-api-key` metadata, or
`authorization: Bearer`); the first request carries `streaming_config` and nothing else
(LINEAR16, 16 kHz, a language, `interim_results`; and here `enable_automatic_punctuation`
off, as the wrapper pins it), every later request `audio_content` only; a wrong key is answered
as Google answers it (INVALID_ARGUMENT, ErrorInfo reason API_KEY_INVALID), no credentials with
UNAUTHENTICATED. A stream that carries more than `max_stream_s` of audio (Google: about 305 s)
is ended with OUT_OF_RANGE, "Exceeded maximum allowed stream duration".

The recogniser is the WebSocket stubs' (tests/stubs/streaming_vendors.py): each complete
`BLOCK_S` of audio is the word `w<v>`, v its middle sample (so real speech gives words too, the
same for the same audio); the words since the last final are the interim, sent as Google splits
it (a stable piece, then the last word as an unstable piece beginning with a space); every
`FINAL_EVERY` words, and after the client's half-close, they are finalised with a result
`is_final` and `result_end_time` in that stream's audio time. `expected_words` is the transcript
of a whole utterance. After the half-close a last response holds `total_billed_time` only.

Tests script each call, consumed in order (`script`):
- `("ok",)`: no fault;
- `("abort", code, n)`: end the call with gRPC status `code` (e.g. "UNAVAILABLE") after its
  n-th word (n = 0: right after the configuration);
- `("exhausted", delay_s)`: RESOURCE_EXHAUSTED after the configuration, with a RetryInfo of
  that delay;
- `("deny",)`: PERMISSION_DENIED after the configuration (ErrorInfo SERVICE_DISABLED, as for a
  project without the API).

`calls` counts calls; `received` holds one `CallLog` per call. With `tls_dir`, the server
speaks TLS (a self-signed certificate for 127.0.0.1, its PEM in `ca_file`: the client trusts it
through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH) and `endpoint` is the plain HOST:PORT the card takes.
"""

from __future__ import annotations

import datetime
import ipaddress
import struct
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.cloud.speech_v1.types import cloud_speech
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from tests.stubs.streaming_vendors import BLOCK_S, FINAL_EVERY, KEY

SERVICE = "google.cloud.speech.v1.Speech"
TOKEN = "test-token-9876543210abcdef"
Request = cloud_speech.StreamingRecognizeRequest.pb()
Response = cloud_speech.StreamingRecognizeResponse.pb()
Result = cloud_speech.StreamingRecognitionResult.pb()
Alternative = cloud_speech.SpeechRecognitionAlternative.pb()
LINEAR16 = cloud_speech.RecognitionConfig.pb().LINEAR16
MALORDERED = (
    "Malordered Data Received. Expected audio but none was set. Send exactly one config, "
    "followed by audio data."
)


def block_word(block: bytes) -> str:
    """The word of one BLOCK_S of 16-bit PCM: `w<v>`, v its middle sample."""
    (v,) = struct.unpack_from("<h", block, len(block) // 2 - len(block) // 2 % 2)
    return f"w{v}"


def expected_words(pcm: bytes, rate: int = 16000) -> list[str]:
    """What the stub transcribes of `pcm` fed in one stream (a tail shorter than a block: no
    word)."""
    block = int(BLOCK_S * rate) * 2
    return [block_word(pcm[at : at + block]) for at in range(0, len(pcm) - block + 1, block)]


@dataclass
class CallLog:
    """What the client sent on one call."""

    metadata: dict[str, str]
    config: Any = None
    audio_bytes: int = 0
    audio_requests: int = 0
    half_closed: bool = False  # the client ended its requests (the audio was complete)
    status: str = "OK"


def self_signed(folder: Path) -> tuple[bytes, bytes]:
    """(key PEM, certificate PEM) for 127.0.0.1, valid for a day; the certificate is also
    written to `folder`/ca.pem."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    (folder / "ca.pem").write_bytes(cert_pem)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return key_pem, cert_pem


def _duration(seconds: float) -> duration_pb2.Duration:
    d = duration_pb2.Duration()
    d.FromNanoseconds(round(seconds * 1e9))
    return d


def _any(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def _abort(context: grpc.ServicerContext, code: str, message: str, *details: Any) -> None:
    status = status_pb2.Status(
        code=getattr(code_pb2, code), message=message, details=[_any(d) for d in details]
    )
    context.abort_with_status(rpc_status.to_status(status))


class _Recogniser:
    """One call's words: PCM in, (word, start_s, end_s) out."""

    def __init__(self, rate: int):
        self.block = int(BLOCK_S * rate) * 2
        self.buf = bytearray()
        self.n_words = 0
        self.words: list[tuple[str, float, float]] = []  # recognised, not yet final

    def add(self, pcm: bytes) -> Iterator[tuple[str, float, float]]:
        self.buf += pcm
        while len(self.buf) >= self.block:
            word = block_word(bytes(self.buf[: self.block]))
            del self.buf[: self.block]
            start = self.n_words * BLOCK_S
            self.n_words += 1
            yield word, start, start + BLOCK_S


@dataclass
class GoogleSpeechStub:
    """The server; `endpoint` is what GOOGLE_STT_GRPC_ENDPOINT must hold to reach it."""

    rate: int = 16000
    max_stream_s: float = 305.0
    script: list[tuple[Any, ...]] = field(default_factory=list)
    received: list[CallLog] = field(default_factory=list)
    calls: int = 0
    tls_dir: Path | None = None

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        handler = grpc.stream_stream_rpc_method_handler(
            self._streaming_recognize,
            request_deserializer=Request.FromString,
            response_serializer=Response.SerializeToString,
        )
        self.server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler(SERVICE, {"StreamingRecognize": handler})]
        )
        if self.tls_dir is None:
            self.port = self.server.add_insecure_port("127.0.0.1:0")
        else:
            creds = grpc.ssl_server_credentials([self_signed(self.tls_dir)])
            self.port = self.server.add_secure_port("127.0.0.1:0", creds)
        self.server.start()

    @property
    def endpoint(self) -> str:
        where = f"127.0.0.1:{self.port}"
        return where if self.tls_dir is not None else f"insecure://{where}"

    @property
    def ca_file(self) -> Path | None:
        return None if self.tls_dir is None else self.tls_dir / "ca.pem"

    def close(self) -> None:
        self.server.stop(grace=None)

    # -- one call --------------------------------------------------------------------------

    def _streaming_recognize(
        self, requests: Iterator[Any], context: grpc.ServicerContext
    ) -> Iterator[Any]:
        with self.lock:
            self.calls += 1
            fault = self.script.pop(0) if self.script else ("ok",)
            log = CallLog({k: str(v) for k, v in context.invocation_metadata()})
            self.received.append(log)
        try:
            self._check_auth(context, log.metadata)
            self._check_config(context, next(requests, None), log)
            self._start_fault(context, fault)
            yield from self._recognise(requests, context, log, fault)
        except Exception:
            log.status = context.code().name if context.code() else "error"
            raise

    def _check_auth(self, context: grpc.ServicerContext, metadata: dict[str, str]) -> None:
        if "x-goog-api-key" in metadata:
            if metadata["x-goog-api-key"] != KEY:
                info = error_details_pb2.ErrorInfo(
                    reason="API_KEY_INVALID", domain="googleapis.com"
                )
                _abort(
                    context,
                    "INVALID_ARGUMENT",
                    "API key not valid. Please pass a valid API key.",
                    info,
                )
        elif metadata.get("authorization") != f"Bearer {TOKEN}":
            _abort(context, "UNAUTHENTICATED", "Request had invalid authentication credentials.")

    def _check_config(self, context: grpc.ServicerContext, first: Any, log: CallLog) -> None:
        if first is None or first.WhichOneof("streaming_request") != "streaming_config":
            _abort(context, "INVALID_ARGUMENT", MALORDERED)
        cfg = first.streaming_config
        log.config = cfg
        problems = [
            what
            for what, bad in (
                ("encoding must be LINEAR16", cfg.config.encoding != LINEAR16),
                (
                    f"sample_rate_hertz must be {self.rate}",
                    cfg.config.sample_rate_hertz != self.rate,
                ),
                ("language_code is required", not cfg.config.language_code),
                ("interim_results must be true", not cfg.interim_results),
                ("automatic punctuation must be off", cfg.config.enable_automatic_punctuation),
            )
            if bad
        ]
        if problems:
            _abort(context, "INVALID_ARGUMENT", "; ".join(problems))

    def _start_fault(self, context: grpc.ServicerContext, fault: tuple[Any, ...]) -> None:
        if fault[0] == "exhausted":
            retry = error_details_pb2.RetryInfo(retry_delay=_duration(fault[1]))
            _abort(context, "RESOURCE_EXHAUSTED", "Quota exceeded (stub).", retry)
        if fault[0] == "deny":
            info = error_details_pb2.ErrorInfo(reason="SERVICE_DISABLED", domain="googleapis.com")
            _abort(
                context,
                "PERMISSION_DENIED",
                "Cloud Speech-to-Text API has not been used in project 0 (stub).",
                info,
            )
        if fault[0] == "abort" and fault[2] == 0:
            _abort(context, fault[1], f"stub {fault[1]} at the start")

    def _recognise(
        self,
        requests: Iterator[Any],
        context: grpc.ServicerContext,
        log: CallLog,
        fault: tuple[Any, ...],
    ) -> Iterator[Any]:
        rec = _Recogniser(self.rate)
        for request in requests:
            if request.WhichOneof("streaming_request") != "audio_content":
                _abort(context, "INVALID_ARGUMENT", MALORDERED)
            log.audio_bytes += len(request.audio_content)
            log.audio_requests += 1
            if log.audio_bytes / 2 / self.rate > self.max_stream_s:
                _abort(
                    context,
                    "OUT_OF_RANGE",
                    f"Exceeded maximum allowed stream duration of {self.max_stream_s:g} seconds.",
                )
            for word in rec.add(request.audio_content):
                rec.words.append(word)
                yield self._interim(rec.words)
                if len(rec.words) >= FINAL_EVERY:
                    yield self._final(rec)
                if fault[0] == "abort" and rec.n_words >= fault[2]:
                    _abort(context, fault[1], f"stub {fault[1]} after {rec.n_words} words")
        log.half_closed = True
        if rec.words:
            yield self._final(rec)
        yield Response(total_billed_time=_duration(log.audio_bytes / 2 / self.rate))

    @staticmethod
    def _interim(words: list[tuple[str, float, float]]) -> Any:
        *stable, last = [w for w, _, _ in words]
        results = [Result(alternatives=[Alternative(transcript=" ".join(stable))], stability=0.9)]
        results.append(Result(alternatives=[Alternative(transcript=" " + last)], stability=0.01))
        if not stable:
            results = results[1:]
        return Response(results=results)

    @staticmethod
    def _final(rec: _Recogniser) -> Any:
        text = " ".join(w for w, _, _ in rec.words)
        result = Result(
            alternatives=[Alternative(transcript=text, confidence=0.9)],
            is_final=True,
            result_end_time=_duration(rec.words[-1][2]),
        )
        rec.words = []
        return Response(results=[result])
