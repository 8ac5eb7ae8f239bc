"""azure_speech_en: Azure AI Speech, REST API for short audio.

`POST https://{region}.stt.speech.microsoft.com/speech/recognition/conversation/cognitiveservices/v1
?language=en-US&format=simple` with the WAV as the body, `Content-Type: audio/wav; codecs=audio/pcm;
samplerate=16000` and the key in `Ocp-Apim-Subscription-Key`. Answer: `{"RecognitionStatus":
"Success", "DisplayText", "Offset", "Duration"}`; `NoMatch`/`InitialSilenceTimeout` mean no
speech (an empty hypothesis), other statuses are failures. The short-audio API takes up to 60 s.
"""

from __future__ import annotations

import os
import sys
import wave
from typing import Any

from apiclient import ApiError, RetryPolicy, load_card, request, run, settings

CARD = load_card(__file__)
SETTINGS = settings(CARD)
POLICY = RetryPolicy.from_card(CARD)
NO_SPEECH = {"NoMatch", "InitialSilenceTimeout", "BabbleTimeout"}


def _error_message(resp: Any) -> str:
    try:
        body = resp.json()
        err = body.get("error") or body
        return str(err.get("message") or err)
    except ValueError:
        return resp.text[:300]


def endpoint() -> str:
    base = SETTINGS["AZURE_SPEECH_ENDPOINT"] or (
        f"https://{SETTINGS['AZURE_SPEECH_REGION']}.stt.speech.microsoft.com"
    )
    return base.rstrip("/") + "/speech/recognition/conversation/cognitiveservices/v1"


def transcribe_one(uid: str, path: str) -> str:
    with wave.open(path, "rb") as w:
        rate = w.getframerate()
    with open(path, "rb") as f:
        audio = f.read()
    headers = {
        "Ocp-Apim-Subscription-Key": os.environ.get("AZURE_SPEECH_KEY", ""),
        "Content-Type": f"audio/wav; codecs=audio/pcm; samplerate={rate}",
        "Accept": "application/json",
    }
    params = {"language": SETTINGS["AZURE_SPEECH_LANGUAGE"], "format": "simple"}
    resp = request(
        "POST",
        endpoint(),
        POLICY.timeout_s,
        _error_message,
        params=params,
        data=audio,
        headers=headers,
    )
    try:
        body = resp.json()
        status = body["RecognitionStatus"]
    except (ValueError, KeyError, TypeError):
        raise ApiError(
            "client", f"unexpected answer: {resp.text[:200]}", resp.status_code
        ) from None
    if status == "Success":
        return str(body.get("DisplayText", ""))
    if status in NO_SPEECH:
        return ""
    raise ApiError("client", f"RecognitionStatus {status}", resp.status_code)


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "AZURE_SPEECH_KEY"))
