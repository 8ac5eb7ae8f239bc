"""deepgram_en, streaming: Deepgram's live transcription WebSocket, `{base}/v1/listen`.

As documented (developers.deepgram.com, "Live audio" / Streaming API): connect to
`wss://api.deepgram.com/v1/listen` with the options in the query (`model`, `language`,
`encoding=linear16`, `sample_rate`, `channels=1`, `interim_results=true`, `punctuate`,
`smart_format`) and `Authorization: Token <DEEPGRAM_API_KEY>`; send the audio as binary
messages; end with the text message `{"type": "CloseStream"}`. The server answers
`{"type": "Results", "is_final", "speech_final", "start", "duration", "channel":
{"alternatives": [{"transcript"}]}}`: `is_final: false` is an interim of the audio since the
last final (a partial here), `is_final: true` finalises that span (appended to the finals;
`speech_final` only marks an endpoint and changes nothing here). After `CloseStream` it
flushes the last results, sends `{"type": "Metadata"}` and closes with 1000: the final.
Handshake errors are HTTP (401, 429 with `dg-error`); errors mid-stream are close frames
(1008 bad data: not retried; 1011 server error: reconnect).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any
from urllib.parse import urlencode

from apiclient import load_card, settings
from vendor_stream import Done, Final, Interim, Item, serve, ws_url

CARD = load_card(__file__)


class Deepgram:
    def __init__(self) -> None:
        self.s = settings(CARD)

    def url(self) -> str:
        query = {
            "model": self.s["DEEPGRAM_MODEL"],
            "language": self.s["DEEPGRAM_LANGUAGE"],
            "encoding": "linear16",
            "sample_rate": CARD["sample_rate"],
            "channels": 1,
            "interim_results": "true",
            "punctuate": "true",
            "smart_format": "true",
        }
        return ws_url(self.s["DEEPGRAM_BASE_URL"], "/v1/listen?" + urlencode(query))

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Token {os.environ.get('DEEPGRAM_API_KEY', '')}"}

    def open(self, ws: Any) -> None:
        pass  # the options travel in the query

    def audio(self, ws: Any, pcm: bytes) -> None:
        ws.send(pcm)

    def finish(self, ws: Any) -> None:
        ws.send(json.dumps({"type": "CloseStream"}))

    def parse(self, message: str | bytes) -> list[Item]:
        msg = json.loads(message)
        kind = msg.get("type")
        if kind == "Metadata":
            return [Done()]
        if kind != "Results":
            return []  # SpeechStarted, UtteranceEnd: nothing to transcribe
        alts = (msg.get("channel") or {}).get("alternatives") or [{}]
        text = str(alts[0].get("transcript") or "")
        if msg.get("is_final"):
            end = float(msg.get("start") or 0.0) + float(msg.get("duration") or 0.0)
            return [Final(text, end)]
        return [Interim(text)]


if __name__ == "__main__":
    sys.exit(serve(__file__, Deepgram))
