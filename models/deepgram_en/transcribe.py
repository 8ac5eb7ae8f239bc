"""deepgram_en: Deepgram pre-recorded audio, `POST {base}/v1/listen`.

Request, as documented: the WAV as the body (`Content-Type: audio/wav`), options in the query
(`model`, `language`, `smart_format`), the key as `Authorization: Token <DEEPGRAM_API_KEY>`.
Answer: `{"metadata": {"request_id", "duration", ...}, "results": {"channels": [{"alternatives":
[{"transcript", "confidence", "words"}]}]}}`; errors `{"err_code", "err_msg", "request_id"}`
(401 INVALID_AUTH, 429 TOO_MANY_REQUESTS, 400 Bad Request). One call per utterance.

Speakers (`DEEPGRAM_DIARIZE: true`): the query adds `diarize=true`, and each word of the answer
carries `speaker` (an integer) beside `start`, `end` and `punctuated_word`
(https://developers.deepgram.com/docs/diarization); the words, grouped into one segment per
change of speaker, go to hyp.timed.jsonl, the text stays the transcript.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from apiclient import (
    ApiError,
    RetryPolicy,
    Timed,
    diarize_setting,
    load_card,
    request,
    run,
    settings,
    speaker_turns,
    timed_word,
)

CARD = load_card(__file__)
SETTINGS = settings(CARD)
POLICY = RetryPolicy.from_card(CARD)
DIARIZE = diarize_setting(SETTINGS, "DEEPGRAM_DIARIZE")


def _error_message(resp: Any) -> str:
    body = resp.json()
    return f"{body.get('err_code', '')}: {body.get('err_msg', '')}".strip(": ")


def _diarized(uid: str, text: str, channels: list[dict]) -> Timed:
    words = [
        timed_word(w["start"], w["end"], w.get("punctuated_word") or w["word"], w.get("speaker"))
        for ch in channels
        for w in (ch.get("alternatives") or [{}])[0].get("words") or []
    ]
    return Timed(text, speaker_turns(uid, words), words)


def transcribe_one(uid: str, path: str) -> str | Timed:
    url = SETTINGS["DEEPGRAM_BASE_URL"].rstrip("/") + "/v1/listen"
    params = {
        "model": SETTINGS["DEEPGRAM_MODEL"],
        "language": SETTINGS["DEEPGRAM_LANGUAGE"],
        "smart_format": "true",
        "punctuate": "true",
    }
    if DIARIZE:
        params["diarize"] = "true"
    headers = {
        "Authorization": f"Token {os.environ.get('DEEPGRAM_API_KEY', '')}",
        "Content-Type": "audio/wav",
    }
    with open(path, "rb") as audio:
        resp = request(
            "POST",
            url,
            POLICY.timeout_s,
            _error_message,
            params=params,
            data=audio.read(),
            headers=headers,
        )
    try:
        channels = resp.json()["results"]["channels"]
        text = " ".join(
            ch["alternatives"][0]["transcript"].strip() for ch in channels if ch.get("alternatives")
        ).strip()
        return _diarized(uid, text, channels) if DIARIZE else text
    except (ValueError, KeyError, TypeError, IndexError):
        raise ApiError(
            "client", f"unexpected answer: {resp.text[:200]}", resp.status_code
        ) from None


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "DEEPGRAM_API_KEY"))
