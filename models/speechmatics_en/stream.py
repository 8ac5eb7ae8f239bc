"""speechmatics_en, streaming: Speechmatics real-time API (RT v2), `wss://eu2.rt.speechmatics.com/v2`.

As documented (docs.speechmatics.com, "Real-time API"): connect with the key as
`Authorization: Bearer`; send `{"message": "StartRecognition", "audio_format": {"type": "raw",
"encoding": "pcm_s16le", "sample_rate"}, "transcription_config": {"language",
"operating_point", "enable_partials": true, "max_delay"}}` and wait for `RecognitionStarted`;
then the audio as binary `AddAudio` messages (the server acknowledges each with `AudioAdded`
and its `seq_no`), and at the end `{"message": "EndOfStream", "last_seq_no": <audio messages
sent>}`. The server sends `AddPartialTranscript` (the revisable text of the audio after the
last final: the interim, a partial here) and `AddTranscript` (final text, appended to the
finals; `metadata.end_time` ends it), then `EndOfTranscript` once all audio is transcribed:
the final. `{"message": "Error", "type", "reason"}` ends the session: `quota_exceeded` is
throttling and `job_error`/`unknown_error` a server fault (both reconnect), any other type is
not retried; `Warning` and `Info` are logged nowhere and change nothing.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from apiclient import ApiError, load_card, settings
from vendor_stream import Done, Final, Interim, Item, serve, ws_url

CARD = load_card(__file__)
ERROR_KINDS = {"quota_exceeded": "throttled", "job_error": "server", "unknown_error": "server"}


class Speechmatics:
    def __init__(self) -> None:
        self.s = settings(CARD)
        self.seq = 0  # audio messages sent on this connection

    def url(self) -> str:
        return ws_url(self.s["SPEECHMATICS_RT_URL"], "")

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {os.environ.get('SPEECHMATICS_API_KEY', '')}"}

    def open(self, ws: Any) -> None:
        start = {
            "message": "StartRecognition",
            "audio_format": {
                "type": "raw",
                "encoding": "pcm_s16le",
                "sample_rate": CARD["sample_rate"],
            },
            "transcription_config": {
                "language": self.s["SPEECHMATICS_LANGUAGE"],
                "operating_point": self.s["SPEECHMATICS_OPERATING_POINT"],
                "enable_partials": True,
                "max_delay": float(self.s["SPEECHMATICS_MAX_DELAY_S"]),
            },
        }
        ws.send(json.dumps(start))
        while True:  # audio may only follow RecognitionStarted
            msg = json.loads(ws.recv(timeout=60))
            if msg.get("message") == "RecognitionStarted":
                return
            self._check(msg)

    def audio(self, ws: Any, pcm: bytes) -> None:
        ws.send(pcm)
        self.seq += 1

    def finish(self, ws: Any) -> None:
        ws.send(json.dumps({"message": "EndOfStream", "last_seq_no": self.seq}))

    def _check(self, msg: dict[str, Any]) -> None:
        if msg.get("message") == "Error":
            kind = ERROR_KINDS.get(str(msg.get("type")), "client")
            raise ApiError(kind, f"{msg.get('type')}: {msg.get('reason')}")

    def parse(self, message: str | bytes) -> list[Item]:
        msg = json.loads(message)
        self._check(msg)
        kind = msg.get("message")
        meta = msg.get("metadata") or {}
        if kind == "AddPartialTranscript":
            return [Interim(str(meta.get("transcript") or ""))]
        if kind == "AddTranscript":
            end = meta.get("end_time")
            return [Final(str(meta.get("transcript") or ""), None if end is None else float(end))]
        if kind == "EndOfTranscript":
            return [Done()]
        return []  # AudioAdded, Warning, Info


if __name__ == "__main__":
    sys.exit(serve(__file__, Speechmatics))
