"""azure_speech_en: Azure AI Speech, REST API for short audio.

`POST https://{region}.stt.speech.microsoft.com/speech/recognition/conversation/cognitiveservices/v1
?language=en-US&format=simple` with the WAV as the body, `Content-Type: audio/wav; codecs=audio/pcm;
samplerate=16000` and the key in `Ocp-Apim-Subscription-Key`. Answer: `{"RecognitionStatus":
"Success", "DisplayText", "Offset", "Duration"}`; `NoMatch`/`InitialSilenceTimeout` mean no
speech (an empty hypothesis), other statuses are failures. The short-audio API takes up to 60 s.

Speakers (`AZURE_SPEECH_DIARIZE: true`): the short-audio API has no diarization, so the
utterance goes to fast transcription instead, `POST {endpoint}/speechtotext/transcriptions:
transcribe?api-version=2024-11-15` (endpoint `https://{region}.api.cognitive.microsoft.com`),
multipart `audio` and `definition` `{"locales": [...], "diarization": {"enabled": true,
"maxSpeakers": AZURE_SPEECH_MAX_SPEAKERS}}`; its answer's `phrases` each name a `speaker` (an
integer) with `offsetMilliseconds`, `durationMilliseconds`, `text` and timed `words`, and
`combinedPhrases[0].text` is the text
(https://learn.microsoft.com/azure/ai-services/speech-service/fast-transcription-create).
"""

from __future__ import annotations

import json
import os
import sys
import wave
from pathlib import Path
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
DIARIZE = diarize_setting(SETTINGS, "AZURE_SPEECH_DIARIZE")
FAST_API_VERSION = "2024-11-15"
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


def _phrase_words(phrase: dict[str, Any]) -> list[dict[str, Any]]:
    """A phrase's timed words, each with the phrase's speaker (the whole phrase as one word
    where it lists none)."""
    spk = phrase.get("speaker")
    return [
        timed_word(
            w["offsetMilliseconds"] / 1000,
            (w["offsetMilliseconds"] + w["durationMilliseconds"]) / 1000,
            w["text"],
            spk,
        )
        for w in phrase.get("words") or [phrase]
    ]


def transcribe_fast(uid: str, path: str) -> Timed:
    """One utterance through fast transcription with diarization (module docstring)."""
    base = SETTINGS["AZURE_SPEECH_ENDPOINT"] or (
        f"https://{SETTINGS['AZURE_SPEECH_REGION']}.api.cognitive.microsoft.com"
    )
    definition = {
        "locales": [SETTINGS["AZURE_SPEECH_LANGUAGE"]],
        "diarization": {"enabled": True, "maxSpeakers": int(SETTINGS["AZURE_SPEECH_MAX_SPEAKERS"])},
    }
    with open(path, "rb") as f:
        audio = f.read()
    resp = request(
        "POST",
        base.rstrip("/") + "/speechtotext/transcriptions:transcribe",
        POLICY.timeout_s,
        _error_message,
        params={"api-version": FAST_API_VERSION},
        headers={"Ocp-Apim-Subscription-Key": os.environ.get("AZURE_SPEECH_KEY", "")},
        files={
            "audio": (Path(path).name, audio, "audio/wav"),
            "definition": (None, json.dumps(definition), "application/json"),
        },
    )
    try:
        body = resp.json()
        text = " ".join(p["text"] for p in body.get("combinedPhrases") or [])
        words = [w for phrase in body.get("phrases") or [] for w in _phrase_words(phrase)]
    except (ValueError, KeyError, TypeError):
        raise ApiError(
            "client", f"unexpected answer: {resp.text[:200]}", resp.status_code
        ) from None
    return Timed(text, speaker_turns(uid, words), words)


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
    sys.exit(
        run(
            __file__,
            sys.argv[1:],
            transcribe_fast if DIARIZE else transcribe_one,
            "AZURE_SPEECH_KEY",
        )
    )
