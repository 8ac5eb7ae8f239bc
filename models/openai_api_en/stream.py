"""openai_api_en, streaming: OpenAI Realtime transcription, `{base}/realtime?intent=transcription`.

As documented (platform.openai.com, "Realtime transcription"; beta protocol, header
`OpenAI-Beta: realtime=v1`, key as `Authorization: Bearer`): after the server's
`transcription_session.created`, the client sends `transcription_session.update` (`pcm16`
input, which is 24 kHz mono: the 16 kHz feed is resampled here by linear interpolation; the
transcription model and language; server VAD turn detection), then the audio as
`input_audio_buffer.append` events (base64 PCM), and at the end `input_audio_buffer.commit`.
The server VAD commits each stretch of speech on its own (`input_audio_buffer.speech_stopped`
with `audio_end_ms`, then `input_audio_buffer.committed` with the item's ID); each committed
item is transcribed as `conversation.item.input_audio_transcription.delta` events (text to
append: the item's interim, a partial here) and one `...completed` with its `transcript`
(appended to the finals, in commit order). The stream is done when the final commit has been
answered (a `committed` with no `speech_stopped` before it for its item, or the error
`input_audio_buffer_commit_empty` when the VAD had already committed everything) and every
committed item is completed; the client then closes. An `error` event of type `server_error`
reconnects; any other error is not retried.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from array import array
from typing import Any

from apiclient import ApiError, load_card, settings
from vendor_stream import Done, Final, Interim, Item, serve, ws_url

CARD = load_card(__file__)
API_RATE = 24000  # the Realtime API's pcm16 rate


def resample_24k(pcm: bytes) -> bytes:
    """16 kHz 16-bit PCM to 24 kHz by linear interpolation (output sample j sits at 2j/3)."""
    x = array("h", pcm)
    if sys.byteorder != "little":
        x.byteswap()
    n = len(x)
    out = array("h", bytes(2 * (n * 3 // 2)))
    for j in range(len(out)):
        i, r = divmod(2 * j, 3)
        nxt = x[i + 1] if i + 1 < n else x[i]
        out[j] = x[i] + (nxt - x[i]) * r // 3
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


class OpenAIRealtime:
    def __init__(self) -> None:
        self.s = settings(CARD)
        self.order: list[str] = []  # committed items, in commit order
        self.text: dict[str, str] = {}  # item -> the deltas so far
        self.done: dict[str, str] = {}  # item -> its completed transcript, not yet released
        self.end_ms: dict[str, float] = {}  # item -> audio_end_ms of its speech
        self.finishing = False
        self.end_answered = False

    def url(self) -> str:
        return ws_url(self.s["OPENAI_BASE_URL"], "/realtime?intent=transcription")

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}",
            "OpenAI-Beta": "realtime=v1",
        }

    def open(self, ws: Any) -> None:
        session = {
            "input_audio_format": "pcm16",
            "input_audio_transcription": {
                "model": self.s["OPENAI_REALTIME_MODEL"],
                "language": self.s["OPENAI_LANGUAGE"],
            },
            "turn_detection": {"type": "server_vad"},
        }
        ws.send(json.dumps({"type": "transcription_session.update", "session": session}))

    def audio(self, ws: Any, pcm: bytes) -> None:
        data = base64.b64encode(resample_24k(pcm)).decode("ascii")
        ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": data}))

    def finish(self, ws: Any) -> None:
        self.finishing = True
        ws.send(json.dumps({"type": "input_audio_buffer.commit"}))

    def parse(self, message: str | bytes) -> list[Item]:
        msg = json.loads(message)
        kind = str(msg.get("type"))
        item = str(msg.get("item_id"))
        if kind == "error":
            self._error(msg.get("error") or {})
        elif kind == "input_audio_buffer.speech_stopped":
            self.end_ms[item] = float(msg.get("audio_end_ms") or 0)
        elif kind == "input_audio_buffer.committed":
            self.order.append(item)
            # the VAD's commits follow a speech_stopped naming the item; ours does not
            self.end_answered = self.end_answered or item not in self.end_ms
        elif kind.endswith("input_audio_transcription.delta"):
            self.text[item] = self.text.get(item, "") + str(msg.get("delta") or "")
            return [self._interim()]
        elif kind.endswith("input_audio_transcription.completed"):
            self.done[item] = str(msg.get("transcript") or "")
            return self._release()
        elif kind.endswith("input_audio_transcription.failed"):
            raise ApiError("client", f"transcription failed: {msg.get('error')}")
        return self._finished()

    def _error(self, err: dict[str, Any]) -> None:
        if err.get("code") == "input_audio_buffer_commit_empty" and self.finishing:
            self.end_answered = True  # the VAD had committed all the audio already
            return
        kind = "server" if err.get("type") == "server_error" else "client"
        raise ApiError(kind, f"{err.get('code') or err.get('type')}: {err.get('message')}")

    def _interim(self) -> Interim:
        return Interim(" ".join(self.text.get(i, "").strip() for i in self.order).strip())

    def _release(self) -> list[Item]:
        """Finals for the completed items at the head of the commit order, in that order."""
        out: list[Item] = []
        while self.order and self.order[0] in self.done:
            item = self.order.pop(0)
            end = self.end_ms.get(item)
            out.append(Final(self.done.pop(item), None if end is None else end / 1000))
            self.text.pop(item, None)
        return [*out, self._interim(), *self._finished()]

    def _finished(self) -> list[Item]:
        return [Done()] if self.end_answered and not self.order else []


if __name__ == "__main__":
    sys.exit(serve(__file__, OpenAIRealtime))
