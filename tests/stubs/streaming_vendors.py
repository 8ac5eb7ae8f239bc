"""Loopback WebSocket servers that speak the documented real-time protocols of vendor speech
APIs (Deepgram live, AssemblyAI Universal Streaming v3, OpenAI Realtime transcription,
Speechmatics RT, Azure Speech, AWS Transcribe over WebSocket). They never contact a vendor
and listen on 127.0.0.1 only.

The "recogniser" is deterministic, so a test knows the exact transcript: audio is read in
blocks of `BLOCK_S` seconds and a block whose samples hold the value v is the word `w<v>`
(its middle sample decides, so a resampled block reads the same). Words since the last final
are sent as the vendor's interim; every `FINAL_EVERY` words, and at the end of the stream,
they are finalised with the vendor's final message (with its timestamps, in the connection's
own audio time, as a vendor's restart from 0 on each connection).

Tests script faults per connection, consumed in order (`script`):
- `("429", retry_after)`: the next handshake is refused with HTTP 429 and that `Retry-After`;
- `("drop", n)`: the next accepted connection is dropped after its n-th word (1011 close);
- `("close", n, code, reason)`: ... closed with that code (e.g. 1008: not retryable);
- `("ok",)`: the next accepted connection runs without a fault.

`connections` counts accepted connections; `received` records each connection's messages
(text messages parsed, binary ones as their length) for asserting what the client sent.
"""

from __future__ import annotations

import base64
import json
import struct
import threading
import uuid
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

BLOCK_S = 0.25  # seconds of audio per recognised word
FINAL_EVERY = 3  # words per final segment
KEY = "test-key-0123456789"


def words_audio(values: list[int], rate: int = 16000) -> bytes:
    """PCM whose blocks the stubs recognise as `w<v>` for each v (1..32767)."""
    n = int(BLOCK_S * rate)
    return b"".join(struct.pack("<h", v) * n for v in values)


class Fault(Exception):
    """The script says: end this connection now (code, reason)."""

    def __init__(self, code: int, reason: str):
        self.code, self.reason = code, reason


class Session:
    """One connection's recogniser: PCM in, (words, start_s, end_s) segments out."""

    def __init__(self, rate: int, fault: tuple[Any, ...] | None):
        self.rate, self.fault = rate, fault
        self.buf = bytearray()
        self.words: list[tuple[str, float, float]] = []  # recognised, not yet final
        self.n_words = 0

    def add(self, pcm: bytes) -> list[tuple[str, float, float]]:
        """The words completed by this audio."""
        self.buf += pcm
        block = int(BLOCK_S * self.rate) * 2
        new = []
        while len(self.buf) >= block:
            (v,) = struct.unpack_from("<h", self.buf, block // 2 - block // 2 % 2)
            del self.buf[:block]
            start = self.n_words * BLOCK_S
            self.n_words += 1
            new.append((f"w{v}", start, start + BLOCK_S))
            if self.fault and self.fault[0] in ("drop", "close") and self.n_words >= self.fault[1]:
                code, reason = (1011, "stub drop") if self.fault[0] == "drop" else self.fault[2:4]
                raise Fault(code, reason)
        return new


class StreamStub:
    """Base: a WebSocket server on 127.0.0.1 with a scripted recogniser; a subclass speaks one
    vendor's messages (`check`, `opened`, `audio`, `control`, `interim`, `final`, `ended`)."""

    path = "/"
    rate = 16000
    url_suffix = ""  # what the card's URL setting holds beyond `base_url`
    end_message = ""  # the client's end-of-stream message type

    def __init__(self) -> None:
        from websockets.sync.server import serve

        self.script: list[tuple[Any, ...]] = []
        self.connections = 0
        self.handshakes = 0
        self.received: list[list[Any]] = []
        self.lock = threading.Lock()
        self.server = serve(
            self._handle,
            "127.0.0.1",
            0,
            process_request=self._process_request,
            compression=None,
            close_timeout=2,
        )
        self.port = self.server.socket.getsockname()[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()

    def ended_by_client(self, log: list[Any]) -> bool:
        """Whether the client sent the vendor's end-of-stream message on that connection."""
        return any(
            isinstance(m, dict) and self.end_message in (m.get("type"), m.get("message"))
            for m in log
        )

    # -- the handshake -------------------------------------------------------------------

    def _process_request(self, connection: Any, request: Any) -> Any:
        with self.lock:
            self.handshakes += 1
            if self.script and self.script[0][0] == "429":
                _, retry_after = self.script.pop(0)
                resp = connection.respond(HTTPStatus.TOO_MANY_REQUESTS, "Too Many Requests\n")
                resp.headers["Retry-After"] = str(retry_after)
                return resp
        problem = self.check(request)
        if problem is not None:
            return connection.respond(problem[0], problem[1] + "\n")
        return None

    def check(self, request: Any) -> tuple[int, str] | None:
        """(status, body) to refuse the handshake, or None: the path and the auth header."""
        raise NotImplementedError

    # -- a connection --------------------------------------------------------------------

    def _handle(self, ws: Any) -> None:
        with self.lock:
            self.connections += 1
            fault = None
            if self.script and self.script[0][0] in ("ok", "drop", "close"):
                fault = self.script.pop(0)
            log: list[Any] = []
            self.received.append(log)
        session = Session(self.rate, fault)
        try:
            self.opened(ws)
            self._loop(ws, session, log)
        except Fault as f:
            ws.close(f.code, f.reason)

    def _loop(self, ws: Any, session: Session, log: list[Any]) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            for message in ws:
                if isinstance(message, bytes):
                    log.append(len(message))
                    self.audio_added(ws, sum(isinstance(m, int) for m in log))
                    pcm = self.binary(message)
                    if pcm is not None:
                        self._words(ws, session, session.add(pcm))
                        continue
                    msg: dict[str, Any] = {"type": "end-of-audio"}
                    log.append(msg)
                else:
                    msg = self.decode(message)
                    log.append(msg)
                    pcm = self.audio(msg)
                    if pcm is not None:
                        self._words(ws, session, session.add(pcm))
                        continue
                if self.control(ws, msg, session):
                    self._finalise(ws, session)
                    self.ended(ws, session)
                    ws.close(1000)
                    return
        except ConnectionClosed:
            return

    def _words(self, ws: Any, session: Session, new: list[tuple[str, float, float]]) -> None:
        for word in new:
            session.words.append(word)
            self.interim(ws, session.words)
            if len(session.words) >= FINAL_EVERY:
                self._finalise(ws, session)

    def _finalise(self, ws: Any, session: Session) -> None:
        if session.words:
            self.final(ws, session.words)
        session.words = []

    # -- what a vendor subclass says ---------------------------------------------------------

    def opened(self, ws: Any) -> None:
        """After the handshake, before audio (a greeting, or waiting for the configuration)."""

    def decode(self, message: str) -> dict[str, Any]:
        """A text message as a dict (JSON for every vendor but Azure)."""
        return json.loads(message)

    def binary(self, data: bytes) -> bytes | None:
        """The PCM of a binary message; None: it ends the stream (Azure's empty audio)."""
        return data

    def audio(self, msg: dict[str, Any]) -> bytes | None:
        """PCM carried by a text message (OpenAI's base64 append); None: not audio."""
        return None

    def audio_added(self, ws: Any, seq_no: int) -> None:
        """After the `seq_no`-th binary audio message of the connection."""

    def control(self, ws: Any, msg: dict[str, Any], session: Session) -> bool:
        """A text message; True when it ends the stream."""
        raise NotImplementedError

    def interim(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        raise NotImplementedError

    def final(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        raise NotImplementedError

    def ended(self, ws: Any, session: Session) -> None:
        """The last message(s) after the end of the stream, before the 1000 close."""


def _auth(request: Any, name: str, want: str) -> tuple[int, str] | None:
    if request.headers.get(name) != want:
        return HTTPStatus.UNAUTHORIZED, json.dumps({"err_code": "INVALID_AUTH"})
    return None


class DeepgramStub(StreamStub):
    """`/v1/listen`: binary audio, `Results` (is_final, speech_final), `CloseStream`, then
    `Metadata` and a 1000 close; `Authorization: Token KEY`; the query must say linear16."""

    path = "/v1/listen"
    end_message = "CloseStream"

    def check(self, request: Any) -> tuple[int, str] | None:
        from urllib.parse import parse_qs, urlparse

        url = urlparse(request.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path != self.path:
            return HTTPStatus.NOT_FOUND, "not found"
        if query.get("encoding") != "linear16" or query.get("sample_rate") != str(self.rate):
            return HTTPStatus.BAD_REQUEST, json.dumps({"err_code": "Bad Request"})
        return _auth(request, "Authorization", f"Token {KEY}")

    def control(self, ws: Any, msg: dict[str, Any], session: Session) -> bool:
        return msg.get("type") == "CloseStream"

    def _results(self, ws: Any, words: list[tuple[str, float, float]], final: bool) -> None:
        start, end = words[0][1], words[-1][2]
        ws.send(
            json.dumps(
                {
                    "type": "Results",
                    "channel_index": [0, 1],
                    "start": start,
                    "duration": end - start,
                    "is_final": final,
                    "speech_final": final,
                    "channel": {"alternatives": [{"transcript": " ".join(w for w, _, _ in words)}]},
                }
            )
        )

    def interim(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self._results(ws, words, False)

    def final(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self._results(ws, words, True)

    def ended(self, ws: Any, session: Session) -> None:
        ws.send(json.dumps({"type": "Metadata", "request_id": str(uuid.uuid4()), "channels": 1}))


class AssemblyAIStub(StreamStub):
    """`/v3/ws`: `Begin`, binary audio, `Turn` (end_of_turn; with format_turns a second,
    formatted end-of-turn message), `Terminate`, then `Termination` and a 1000 close;
    `Authorization: KEY`; the query must carry sample_rate, pcm_s16le and a speech_model."""

    path = "/v3/ws"
    url_suffix = "/v3/ws"
    end_message = "Terminate"

    def __init__(self) -> None:
        super().__init__()
        self.turn = 0

    def check(self, request: Any) -> tuple[int, str] | None:
        from urllib.parse import parse_qs, urlparse

        url = urlparse(request.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path != self.path:
            return HTTPStatus.NOT_FOUND, "not found"
        if (
            query.get("sample_rate") != str(self.rate)
            or query.get("encoding") != "pcm_s16le"
            or not query.get("speech_model")
        ):
            return HTTPStatus.BAD_REQUEST, json.dumps({"error": "bad connection parameters"})
        if request.headers.get("Authorization") != KEY:
            return HTTPStatus.UNAUTHORIZED, json.dumps({"error": "Invalid API key"})
        return None

    def opened(self, ws: Any) -> None:
        ws.send(json.dumps({"type": "Begin", "id": str(uuid.uuid4()), "expires_at": 0}))

    def control(self, ws: Any, msg: dict[str, Any], session: Session) -> bool:
        return msg.get("type") == "Terminate"

    def _turn(self, ws: Any, words: list[tuple[str, float, float]], end: bool, fmt: bool) -> None:
        ws.send(
            json.dumps(
                {
                    "type": "Turn",
                    "turn_order": self.turn,
                    "turn_is_formatted": fmt,
                    "end_of_turn": end,
                    "transcript": " ".join(w for w, _, _ in (words if end else words[:-1])),
                    "end_of_turn_confidence": 0.9 if end else 0.1,
                    "words": [
                        {
                            "text": w,
                            "start": round(a * 1000),
                            "end": round(b * 1000),
                            "confidence": 0.9,
                            "word_is_final": end or i < len(words) - 1,
                        }
                        for i, (w, a, b) in enumerate(words)
                    ],
                    "utterance": "",
                }
            )
        )

    def interim(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self._turn(ws, words, False, False)

    def final(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self._turn(ws, words, True, False)
        self._turn(ws, words, True, True)  # format_turns: the formatted copy ends the turn
        self.turn += 1

    def ended(self, ws: Any, session: Session) -> None:
        seconds = session.n_words * BLOCK_S
        ws.send(
            json.dumps(
                {
                    "type": "Termination",
                    "audio_duration_seconds": seconds,
                    "session_duration_seconds": seconds,
                }
            )
        )


class OpenAIRealtimeStub(StreamStub):
    """`/v1/realtime?intent=transcription` (beta): `transcription_session.created`, then
    `transcription_session.update` (pcm16, i.e. 24 kHz), base64 `input_audio_buffer.append`,
    and a server VAD that commits every FINAL_EVERY words (`speech_stopped` with its
    `audio_end_ms`, `committed`, a `...transcription.delta` per word, `...completed`); the
    client's `input_audio_buffer.commit` commits the rest, or answers the error
    `input_audio_buffer_commit_empty` when nothing is left. `Authorization: Bearer KEY` and
    `OpenAI-Beta: realtime=v1`. (The real service never closes first; the stub closes with
    1000 after the last answer, which the client must not mistake for a drop.)"""

    path = "/v1/realtime"
    url_suffix = "/v1"
    end_message = "input_audio_buffer.commit"
    rate = 24000

    def __init__(self) -> None:
        super().__init__()
        self.items = 0

    def check(self, request: Any) -> tuple[int, str] | None:
        from urllib.parse import parse_qs, urlparse

        url = urlparse(request.path)
        if url.path != self.path or parse_qs(url.query).get("intent") != ["transcription"]:
            return HTTPStatus.NOT_FOUND, "not found"
        if request.headers.get("OpenAI-Beta") != "realtime=v1":
            return HTTPStatus.BAD_REQUEST, json.dumps({"error": {"code": "beta_required"}})
        return _auth(request, "Authorization", f"Bearer {KEY}")

    def opened(self, ws: Any) -> None:
        ws.send(json.dumps({"type": "transcription_session.created", "session": {}}))

    def audio(self, msg: dict[str, Any]) -> bytes | None:
        if msg.get("type") != "input_audio_buffer.append":
            return None
        return base64.b64decode(msg["audio"])

    def control(self, ws: Any, msg: dict[str, Any], session: Session) -> bool:
        kind = msg.get("type")
        if kind == "transcription_session.update":
            conf = msg.get("session") or {}
            if conf.get("input_audio_format") != "pcm16":
                self._error(ws, "invalid_request_error", "invalid_value")
            ws.send(json.dumps({"type": "transcription_session.updated", "session": conf}))
            return False
        if kind != "input_audio_buffer.commit":
            return False
        if not session.words:
            self._error(ws, "invalid_request_error", "input_audio_buffer_commit_empty")
        return True

    def _error(self, ws: Any, kind: str, code: str) -> None:
        ws.send(
            json.dumps({"type": "error", "error": {"type": kind, "code": code, "message": code}})
        )

    def interim(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        pass  # Realtime transcribes an item once it is committed: no text before that

    def final(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self.items += 1
        item = f"item_{self.items}"
        end_ms = round(words[-1][2] * 1000)
        ws.send(
            json.dumps(
                {
                    "type": "input_audio_buffer.speech_stopped",
                    "audio_end_ms": end_ms,
                    "item_id": item,
                }
            )
        )
        ws.send(
            json.dumps(
                {"type": "input_audio_buffer.committed", "item_id": item, "previous_item_id": None}
            )
        )
        for i, (w, _, _) in enumerate(words):
            delta = w if i == 0 else " " + w
            ws.send(
                json.dumps(
                    {
                        "type": "conversation.item.input_audio_transcription.delta",
                        "item_id": item,
                        "content_index": 0,
                        "delta": delta,
                    }
                )
            )
        transcript = " ".join(w for w, _, _ in words)
        ws.send(
            json.dumps(
                {
                    "type": "conversation.item.input_audio_transcription.completed",
                    "item_id": item,
                    "content_index": 0,
                    "transcript": transcript,
                }
            )
        )


class SpeechmaticsStub(StreamStub):
    """RT `/v2`: `StartRecognition` (raw pcm_s16le at 16 kHz) answered by `RecognitionStarted`,
    binary `AddAudio` each answered by `AudioAdded`, `AddPartialTranscript` / `AddTranscript`
    (metadata transcript, start_time, end_time), `EndOfStream` (its `last_seq_no` must count the
    audio messages), then `EndOfTranscript` and a 1000 close; `Authorization: Bearer KEY`."""

    path = "/v2"
    url_suffix = "/v2"
    end_message = "EndOfStream"

    def check(self, request: Any) -> tuple[int, str] | None:
        if request.path != self.path:
            return HTTPStatus.NOT_FOUND, "not found"
        return _auth(request, "Authorization", f"Bearer {KEY}")

    def control(self, ws: Any, msg: dict[str, Any], session: Session) -> bool:
        kind = msg.get("message")
        if kind == "StartRecognition":
            fmt = msg.get("audio_format") or {}
            if fmt != {"type": "raw", "encoding": "pcm_s16le", "sample_rate": self.rate}:
                ws.send(
                    json.dumps(
                        {"message": "Error", "type": "invalid_audio_type", "reason": str(fmt)}
                    )
                )
            ws.send(json.dumps({"message": "RecognitionStarted", "id": str(uuid.uuid4())}))
            return False
        if kind == "EndOfStream":
            sent = sum(isinstance(m, int) for m in self.received[-1])
            if msg.get("last_seq_no") != sent:
                reason = f"last_seq_no {msg.get('last_seq_no')} != {sent}"
                ws.send(
                    json.dumps({"message": "Error", "type": "protocol_error", "reason": reason})
                )
            return True
        return False

    def audio_added(self, ws: Any, seq_no: int) -> None:
        ws.send(json.dumps({"message": "AudioAdded", "seq_no": seq_no}))

    def _transcript(self, ws: Any, kind: str, words: list[tuple[str, float, float]]) -> None:
        meta = {
            "transcript": " ".join(w for w, _, _ in words),
            "start_time": words[0][1],
            "end_time": words[-1][2],
        }
        results = [
            {
                "type": "word",
                "start_time": a,
                "end_time": b,
                "alternatives": [{"content": w, "confidence": 0.9}],
            }
            for w, a, b in words
        ]
        ws.send(json.dumps({"message": kind, "metadata": meta, "results": results}))

    def interim(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self._transcript(ws, "AddPartialTranscript", words)

    def final(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self._transcript(ws, "AddTranscript", words)

    def ended(self, ws: Any, session: Session) -> None:
        ws.send(json.dumps({"message": "EndOfTranscript"}))


class AzureStub(StreamStub):
    """`/speech/recognition/conversation/cognitiveservices/v1`: header-framed messages
    (`Path`, `X-RequestId`, ...; binary ones with a 2-byte big-endian header length),
    `speech.config`, `audio` (the first one with a RIFF header, an empty one ends the stream),
    answered by `turn.start`, `speech.hypothesis`, `speech.phrase` (ticks of 100 ns),
    `speech.endDetected`, `turn.end`; `Ocp-Apim-Subscription-Key: KEY` and an X-ConnectionId."""

    path = "/speech/recognition/conversation/cognitiveservices/v1"
    end_message = "end-of-audio"

    def __init__(self) -> None:
        super().__init__()
        self.request = ""

    def check(self, request: Any) -> tuple[int, str] | None:
        from urllib.parse import parse_qs, urlparse

        url = urlparse(request.path)
        if url.path != self.path or not parse_qs(url.query).get("language"):
            return HTTPStatus.NOT_FOUND, "not found"
        if not request.headers.get("X-ConnectionId"):
            return HTTPStatus.BAD_REQUEST, "X-ConnectionId missing"
        if request.headers.get("Ocp-Apim-Subscription-Key") != KEY:
            return HTTPStatus.UNAUTHORIZED, "invalid subscription key"
        return None

    @staticmethod
    def _headers(head: str) -> dict[str, str]:
        pairs = (line.partition(":") for line in head.split("\r\n") if line)
        return {k.strip().lower(): v.strip() for k, _, v in pairs}

    def decode(self, message: str) -> dict[str, Any]:
        head, _, body = message.partition("\r\n\r\n")
        headers = self._headers(head)
        self.request = headers.get("x-requestid", "")
        return {"type": headers.get("path"), "body": json.loads(body or "{}")}

    def binary(self, data: bytes) -> bytes | None:
        (n,) = struct.unpack(">H", data[:2])
        headers = self._headers(data[2 : 2 + n].decode("ascii"))
        assert headers.get("path") == "audio" and headers.get("x-requestid") == self.request
        pcm = data[2 + n :]
        if pcm[:4] == b"RIFF":
            pcm = pcm[44:]  # the stream's WAV header
            self._send(self.ws, "turn.start", {"context": {"serviceTag": "stub"}})
        return pcm if data[2 + n :] else None

    def opened(self, ws: Any) -> None:
        self.ws = ws

    def control(self, ws: Any, msg: dict[str, Any], session: Session) -> bool:
        return msg.get("type") == "end-of-audio"

    def _send(self, ws: Any, path: str, body: dict[str, Any]) -> None:
        head = f"X-RequestId:{self.request}\r\nContent-Type:application/json; charset=utf-8\r\n"
        ws.send(f"{head}Path:{path}\r\n\r\n{json.dumps(body)}")

    def interim(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        start, end = words[0][1], words[-1][2]
        text = " ".join(w for w, _, _ in words)
        ticks = {"Offset": round(start * 1e7), "Duration": round((end - start) * 1e7)}
        self._send(ws, "speech.hypothesis", {"Text": text, **ticks})

    def final(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        start, end = words[0][1], words[-1][2]
        text = " ".join(w for w, _, _ in words)
        ticks = {"Offset": round(start * 1e7), "Duration": round((end - start) * 1e7)}
        self._send(
            ws, "speech.phrase", {"RecognitionStatus": "Success", "DisplayText": text, **ticks}
        )

    def ended(self, ws: Any, session: Session) -> None:
        self._send(ws, "speech.endDetected", {"Offset": round(session.n_words * BLOCK_S * 1e7)})
        self._send(ws, "turn.end", {})


def _event_stream(headers: dict[str, str], payload: bytes) -> bytes:
    """The stub's own encoder of an AWS event-stream message (string headers)."""
    import zlib

    head = b"".join(
        bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v.encode())) + v.encode()
        for k, v in headers.items()
    )
    prelude = struct.pack(">II", 16 + len(head) + len(payload), len(head))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    return body + struct.pack(">I", zlib.crc32(body))


def _event_stream_read(data: bytes) -> tuple[dict[str, str], bytes]:
    import zlib

    total, head_len = struct.unpack(">II", data[:8])
    assert total == len(data) and struct.unpack(">I", data[8:12])[0] == zlib.crc32(data[:8])
    assert struct.unpack(">I", data[-4:])[0] == zlib.crc32(data[:-4])
    headers, at = {}, 12
    while at < 12 + head_len:
        n = data[at]
        name = data[at + 1 : at + 1 + n].decode()
        (size,) = struct.unpack(">H", data[at + 2 + n : at + 4 + n])
        headers[name] = data[at + 4 + n : at + 4 + n + size].decode()
        at += 4 + n + size
    return headers, data[12 + head_len : -4]


class AwsTranscribeStub(StreamStub):
    """`/stream-transcription-websocket` with a SigV4 presigned query (`X-Amz-Algorithm`,
    `X-Amz-Credential` of KEY, `X-Amz-Signature`, ...; the signature's presence is checked, not
    its value), `language-code`, `media-encoding=pcm`, `sample-rate`; binary event-stream
    `AudioEvent`s (CRCs checked; an empty one ends the stream) answered by `TranscriptEvent`s
    (`IsPartial`, `StartTime`, `EndTime`), then a 1000 close."""

    path = "/stream-transcription-websocket"
    end_message = "end-of-audio"

    def check(self, request: Any) -> tuple[int, str] | None:
        from urllib.parse import parse_qs, urlparse

        url = urlparse(request.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path != self.path:
            return HTTPStatus.NOT_FOUND, "not found"
        if query.get("media-encoding") != "pcm" or query.get("sample-rate") != str(self.rate):
            return HTTPStatus.BAD_REQUEST, json.dumps({"Message": "bad media parameters"})
        signed = (
            query.get("X-Amz-Algorithm") == "AWS4-HMAC-SHA256"
            and query.get("X-Amz-Credential", "").startswith(KEY + "/")
            and "/transcribe/aws4_request" in query.get("X-Amz-Credential", "")
            and len(query.get("X-Amz-Signature", "")) == 64
        )
        if not signed:
            return HTTPStatus.FORBIDDEN, json.dumps({"Message": "signature does not match"})
        return None

    def binary(self, data: bytes) -> bytes | None:
        headers, payload = _event_stream_read(data)
        assert headers.get(":event-type") == "AudioEvent", headers
        return payload if payload else None

    def control(self, ws: Any, msg: dict[str, Any], session: Session) -> bool:
        return msg.get("type") == "end-of-audio"

    def _results(self, ws: Any, words: list[tuple[str, float, float]], partial: bool) -> None:
        result = {
            "ResultId": "r",
            "StartTime": words[0][1],
            "EndTime": words[-1][2],
            "IsPartial": partial,
            "Alternatives": [{"Transcript": " ".join(w for w, _, _ in words), "Items": []}],
            "ChannelId": "ch_0",
        }
        headers = {
            ":message-type": "event",
            ":event-type": "TranscriptEvent",
            ":content-type": "application/json",
        }
        payload = json.dumps({"Transcript": {"Results": [result]}}).encode()
        ws.send(_event_stream(headers, payload))

    def interim(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self._results(ws, words, True)

    def final(self, ws: Any, words: list[tuple[str, float, float]]) -> None:
        self._results(ws, words, False)


STUBS: dict[str, Callable[[], StreamStub]] = {
    "deepgram_en": DeepgramStub,
    "assemblyai_en": AssemblyAIStub,
    "openai_api_en": OpenAIRealtimeStub,
    "speechmatics_en": SpeechmaticsStub,
    "azure_speech_en": AzureStub,
    "aws_transcribe_en": AwsTranscribeStub,
}
