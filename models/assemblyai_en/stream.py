"""assemblyai_en, streaming: AssemblyAI Universal Streaming v3, `wss://streaming.assemblyai.com/v3/ws`.

As documented (assemblyai.com/docs, "Universal Streaming", "Message Sequence"): connect with
the options in the query (`sample_rate`, `encoding=pcm_s16le`, `speech_model` (required),
`format_turns=true`) and the key in the `Authorization` header; the server greets with
`{"type": "Begin", "id", "expires_at"}`; the client sends raw PCM as binary messages (50 to
1000 ms each) and ends with `{"type": "Terminate"}`. The server sends `{"type": "Turn",
"turn_order", "end_of_turn", "turn_is_formatted", "transcript", "words": [{"text", "start",
"end", "word_is_final"}]}`: while `end_of_turn` is false, the turn's words (final and not yet
final) are the interim (a partial here); with `format_turns`, the turn is final once it comes
back with `end_of_turn` and `turn_is_formatted` both true (its `transcript` is appended to
the finals; the unformatted end-of-turn message before it is still an interim). After
`Terminate` the in-flight turns follow, then `{"type": "Termination"}` and a 1000 close: the
final. Errors: HTTP at the handshake (401, 429), close codes mid-stream (1008 unauthorized,
3xxx/4xxx session errors: not retried; 1011: reconnect), or `{"error": "..."}` before a close.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any
from urllib.parse import urlencode

from apiclient import ApiError, load_card, settings
from vendor_stream import Done, Final, Interim, Item, serve, ws_url

CARD = load_card(__file__)


class AssemblyAI:
    def __init__(self) -> None:
        self.s = settings(CARD)

    def url(self) -> str:
        query = {
            "sample_rate": CARD["sample_rate"],
            "encoding": "pcm_s16le",
            "speech_model": self.s["ASSEMBLYAI_STREAMING_MODEL"],
            "format_turns": "true",
        }
        return ws_url(self.s["ASSEMBLYAI_STREAMING_URL"], "?" + urlencode(query))

    def headers(self) -> dict[str, str]:
        return {"Authorization": os.environ.get("ASSEMBLYAI_API_KEY", "")}

    def open(self, ws: Any) -> None:
        pass  # the options travel in the query; `Begin` needs no answer

    def audio(self, ws: Any, pcm: bytes) -> None:
        ws.send(pcm)

    def finish(self, ws: Any) -> None:
        ws.send(json.dumps({"type": "Terminate"}))

    def parse(self, message: str | bytes) -> list[Item]:
        msg = json.loads(message)
        if "error" in msg:
            raise ApiError("client", f"the server said: {msg['error']}")
        kind = msg.get("type")
        if kind == "Termination":
            return [Done()]
        if kind != "Turn":
            return []  # Begin, SpeechStarted
        words = msg.get("words") or []
        if msg.get("end_of_turn") and msg.get("turn_is_formatted"):
            end = max((float(w.get("end") or 0) for w in words), default=None)
            return [Final(str(msg.get("transcript") or ""), None if end is None else end / 1000)]
        return [Interim(" ".join(str(w.get("text") or "") for w in words))]


if __name__ == "__main__":
    sys.exit(serve(__file__, AssemblyAI))
