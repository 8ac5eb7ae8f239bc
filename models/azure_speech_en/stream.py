"""azure_speech_en, streaming: Azure AI Speech real-time recognition over its WebSocket protocol.

The protocol the Speech SDK speaks, as Microsoft documented it for the service ("Bing Speech
WebSocket protocol", carried over to `{region}.stt.speech.microsoft.com`): connect to
`/speech/recognition/conversation/cognitiveservices/v1?language=...&format=simple` with
`Ocp-Apim-Subscription-Key` and an `X-ConnectionId`. Every message carries HTTP-style headers
(`Path`, `X-RequestId`, `X-Timestamp`, `Content-Type`): text messages as `headers CRLF CRLF
body`, binary ones as a 2-byte big-endian header length, the headers, then the payload. The
client sends `speech.config` (JSON), then `audio` messages (the first one starts with a WAV
header, then 16-bit PCM) and an empty `audio` message to end the stream. The service answers
`turn.start`, `speech.startDetected`, `speech.hypothesis` (`Text`: the interim of the phrase
being heard, a partial here), `speech.phrase` (`RecognitionStatus`, `DisplayText`, `Offset`
and `Duration` in 100-ns ticks: a final segment when `Success`; `NoMatch` and the timeouts
finalise silence), `speech.endDetected` and `turn.end` once all audio is recognised: the
final. A phrase with status `Error` is a server fault (reconnect); close codes as elsewhere.
Checked against a stub of this protocol only.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from apiclient import ApiError, load_card, settings
from vendor_stream import Done, Final, Interim, Item, serve, ws_url

CARD = load_card(__file__)
TICKS = 10_000_000  # 100-ns ticks per second
SILENCE = {"NoMatch", "InitialSilenceTimeout", "BabbleTimeout"}


def wav_header(rate: int) -> bytes:
    """A RIFF header for 16-bit mono PCM of unknown length (the stream's first audio bytes)."""
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    return b"RIFF\x00\x00\x00\x00WAVEfmt " + struct.pack("<I", 16) + fmt + b"data\x00\x00\x00\x00"


def split_text(message: str) -> tuple[dict[str, str], str]:
    """(headers with lower-case names, body) of a text message."""
    head, _, body = message.partition("\r\n\r\n")
    headers = {}
    for line in head.split("\r\n"):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return headers, body


class Azure:
    def __init__(self) -> None:
        self.s = settings(CARD)
        self.request = uuid.uuid4().hex
        self.first = True

    def url(self) -> str:
        base = self.s["AZURE_SPEECH_ENDPOINT"] or (
            f"https://{self.s['AZURE_SPEECH_REGION']}.stt.speech.microsoft.com"
        )
        query = urlencode({"language": self.s["AZURE_SPEECH_LANGUAGE"], "format": "simple"})
        path = "/speech/recognition/conversation/cognitiveservices/v1?" + query
        return ws_url(base, path)

    def headers(self) -> dict[str, str]:
        return {
            "Ocp-Apim-Subscription-Key": os.environ.get("AZURE_SPEECH_KEY", ""),
            "X-ConnectionId": uuid.uuid4().hex,
        }

    def _head(self, path: str, content_type: str) -> str:
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        return (
            f"Path: {path}\r\nX-RequestId: {self.request}\r\nX-Timestamp: {stamp}\r\n"
            f"Content-Type: {content_type}\r\n"
        )

    def open(self, ws: Any) -> None:
        context = {"context": {"system": {"name": "asrbench", "version": "1"}}}
        head = self._head("speech.config", "application/json; charset=utf-8")
        ws.send(head + "\r\n" + json.dumps(context))

    def audio(self, ws: Any, pcm: bytes) -> None:
        head = self._head("audio", "audio/x-wav").encode("ascii")
        if self.first and pcm:
            pcm, self.first = wav_header(CARD["sample_rate"]) + pcm, False
        ws.send(struct.pack(">H", len(head)) + head + pcm)

    def finish(self, ws: Any) -> None:
        self.audio(ws, b"")  # an empty audio message ends the stream

    def parse(self, message: str | bytes) -> list[Item]:
        if isinstance(message, bytes):
            return []
        headers, body = split_text(message)
        path = headers.get("path", "")
        if path == "turn.end":
            return [Done()]
        if path == "speech.hypothesis":
            return [Interim(str(json.loads(body).get("Text") or ""))]
        if path != "speech.phrase":
            return []  # turn.start, speech.startDetected, speech.endDetected
        phrase = json.loads(body)
        status = phrase.get("RecognitionStatus")
        end = (int(phrase.get("Offset") or 0) + int(phrase.get("Duration") or 0)) / TICKS
        if status == "Success":
            return [Final(str(phrase.get("DisplayText") or ""), end)]
        if status in SILENCE:
            return [Final("", end)]
        if status == "EndOfDictation":
            return []
        raise ApiError("server" if status == "Error" else "client", f"speech.phrase: {status}")


if __name__ == "__main__":
    sys.exit(serve(__file__, Azure))
