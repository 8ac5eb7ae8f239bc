"""aws_transcribe_en, streaming: Amazon Transcribe streaming over WebSocket.

As documented (Amazon Transcribe developer guide, "Setting up a WebSocket stream"): a SigV4
presigned URL (service `transcribe`, `X-Amz-*` query parameters, at most 300 s valid) for
`wss://transcribestreaming.{region}.amazonaws.com:8443/stream-transcription-websocket` with
`language-code`, `media-encoding=pcm` and `sample-rate`; every message, both ways, is a binary
AWS event-stream message (prelude: total and header lengths, big-endian, and their CRC32; the
headers `:message-type`, `:event-type`, `:content-type`; the payload; the message's CRC32).
The client sends `AudioEvent`s of raw PCM and an empty `AudioEvent` to end the stream. The
service sends `TranscriptEvent`s, JSON `{"Transcript": {"Results": [{"IsPartial", "EndTime",
"Alternatives": [{"Transcript"}]}]}}`: a partial result is the interim (a partial here), a
result with `IsPartial: false` a final segment; after the end it sends the last results and
closes normally: the final. `:message-type: exception` ends the session:
`LimitExceededException` is throttling and `InternalFailureException` /
`ServiceUnavailableException` server faults (both reconnect); the others are not retried. The
same event-stream framing is what the HTTP/2 API carries; that transport is not implemented.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import zlib
from typing import Any
from urllib.parse import urlencode

from apiclient import ApiError, load_card, settings
from vendor_stream import Final, Interim, Item, serve, ws_url

CARD = load_card(__file__)
EXCEPTIONS = {
    "LimitExceededException": "throttled",
    "InternalFailureException": "server",
    "ServiceUnavailableException": "server",
}
AUDIO_HEADERS = {
    ":content-type": "application/octet-stream",
    ":event-type": "AudioEvent",
    ":message-type": "event",
}


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message (string headers only, type 7)."""
    head = b""
    for name, value in headers.items():
        raw = value.encode("utf-8")
        head += bytes([len(name)]) + name.encode("ascii") + b"\x07" + struct.pack(">H", len(raw))
        head += raw
    prelude = struct.pack(">II", 16 + len(head) + len(payload), len(head))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    return body + struct.pack(">I", zlib.crc32(body))


def decode_message(data: bytes) -> tuple[dict[str, str], bytes]:
    """(string headers, payload) of one event-stream message; ValueError when it is broken."""
    total, head_len = struct.unpack(">II", data[:8])
    if total != len(data) or struct.unpack(">I", data[8:12])[0] != zlib.crc32(data[:8]):
        raise ValueError("event-stream prelude does not check")
    if struct.unpack(">I", data[-4:])[0] != zlib.crc32(data[:-4]):
        raise ValueError("event-stream message CRC does not check")
    headers, at, end = {}, 12, 12 + head_len
    while at < end:
        n = data[at]
        name = data[at + 1 : at + 1 + n].decode("ascii")
        at += 1 + n
        if data[at] != 7:
            raise ValueError(f"event-stream header {name}: type {data[at]}, not a string")
        (size,) = struct.unpack(">H", data[at + 1 : at + 3])
        headers[name] = data[at + 3 : at + 3 + size].decode("utf-8")
        at += 3 + size
    return headers, data[end:-4]


class Transcribe:
    def __init__(self) -> None:
        self.s = settings(CARD)

    def url(self) -> str:
        from botocore.auth import SigV4QueryAuth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        region = self.s["AWS_REGION"]
        base = self.s["AWS_TRANSCRIBE_STREAMING_URL"] or (
            f"https://transcribestreaming.{region}.amazonaws.com:8443"
        )
        query = urlencode(
            {
                "language-code": self.s["AWS_TRANSCRIBE_LANGUAGE"],
                "media-encoding": "pcm",
                "sample-rate": CARD["sample_rate"],
            }
        )
        creds = Credentials(
            os.environ.get("AWS_ACCESS_KEY_ID", ""),
            os.environ.get("AWS_SECRET_ACCESS_KEY", ""),
            os.environ.get("AWS_SESSION_TOKEN") or None,
        )
        req = AWSRequest("GET", base.rstrip("/") + "/stream-transcription-websocket?" + query)
        SigV4QueryAuth(creds, "transcribe", region, expires=300).add_auth(req)
        return ws_url(req.url, "")

    def headers(self) -> dict[str, str]:
        return {}  # the credentials are in the presigned URL

    def open(self, ws: Any) -> None:
        pass

    def audio(self, ws: Any, pcm: bytes) -> None:
        ws.send(encode_message(AUDIO_HEADERS, pcm))

    def finish(self, ws: Any) -> None:
        ws.send(encode_message(AUDIO_HEADERS, b""))  # an empty AudioEvent ends the stream

    def parse(self, message: str | bytes) -> list[Item]:
        if isinstance(message, str):
            raise ApiError("client", f"a text message, not an event-stream one: {message[:80]!r}")
        try:
            headers, payload = decode_message(message)
        except struct.error:
            raise ApiError("client", "a truncated event-stream message") from None
        if headers.get(":message-type") == "exception":
            name = headers.get(":exception-type", "exception")
            text = json.loads(payload or b"{}").get("Message", "")
            raise ApiError(EXCEPTIONS.get(name, "client"), f"{name}: {text}")
        if headers.get(":event-type") != "TranscriptEvent":
            return []
        items: list[Item] = []
        for result in json.loads(payload)["Transcript"]["Results"]:
            alts = result.get("Alternatives") or [{}]
            text = str(alts[0].get("Transcript") or "")
            if result.get("IsPartial"):
                items.append(Interim(text))
            else:
                end = result.get("EndTime")
                items.append(Final(text, None if end is None else float(end)))
        return items


if __name__ == "__main__":
    sys.exit(serve(__file__, Transcribe))
