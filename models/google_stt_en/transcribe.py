"""google_stt_en: Google Cloud Speech-to-Text v1 REST, `POST {base}/v1/speech:recognize`.

Request, as documented: JSON `{"config": {"encoding": "LINEAR16", "sampleRateHertz",
"languageCode", "model", ...}, "audio": {"content": <base64>}}`, authenticated with an API key
in the `X-goog-api-key` header. Answer: `{"results": [{"alternatives": [{"transcript",
"confidence"}]}]}` (no `results` when nothing was heard); errors: `{"error": {"code", "message",
"status"}}` (429 RESOURCE_EXHAUSTED, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED...).
Synchronous recognition takes up to 60 s of audio; longer utterances are recorded as failed.

Speakers (`GOOGLE_STT_DIARIZE: true`): the config adds `"diarizationConfig":
{"enableSpeakerDiarization": true, "maxSpeakerCount": GOOGLE_STT_MAX_SPEAKERS}`, and the last
result's top alternative then lists every word of the audio (`startTime`, `endTime` as
"1.500s"), each with its `speakerLabel` (or the older integer `speakerTag`, 0 meaning none)
(https://cloud.google.com/speech-to-text/docs/multiple-voices): those words go to
hyp.timed.jsonl; the text is the other results' transcripts, as without diarization.
"""

from __future__ import annotations

import base64
import os
import sys
import wave
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
DIARIZE = diarize_setting(SETTINGS, "GOOGLE_STT_DIARIZE")
MAX_SYNC_SECONDS = 60.0


def _error_message(resp: Any) -> str:
    err = resp.json().get("error") or {}
    return f"{err.get('status', '')} {err.get('message', '')}".strip() or str(err)


def _seconds(duration: str) -> float:
    """A protobuf Duration in JSON ("1.500s") as seconds."""
    return float(str(duration).rstrip("s") or 0)


def _diarized(uid: str, results: list[dict[str, Any]]) -> Timed:
    # the last result repeats every word with its speaker: the text is the others'
    said = results[:-1] if len(results) > 1 else results
    text = " ".join(
        r["alternatives"][0].get("transcript", "").strip() for r in said if r.get("alternatives")
    )
    last = (results[-1].get("alternatives") or [{}])[0] if results else {}
    words = [
        timed_word(
            _seconds(w.get("startTime", "0s")),
            _seconds(w.get("endTime", "0s")),
            w["word"],
            w.get("speakerLabel") or w.get("speakerTag") or None,
        )
        for w in last.get("words") or []
    ]
    return Timed(text, speaker_turns(uid, words), words)


def transcribe_one(uid: str, path: str) -> str | Timed:
    with wave.open(path, "rb") as w:
        rate, seconds = w.getframerate(), w.getnframes() / w.getframerate()
        if w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise ApiError("client", "LINEAR16 needs 16-bit mono WAV")
    if seconds > MAX_SYNC_SECONDS:
        raise ApiError(
            "client",
            f"{seconds:.1f} s exceeds the 60 s limit of synchronous "
            "recognition (speech:longrunningrecognize is not wrapped yet)",
        )
    with open(path, "rb") as f:
        content = base64.b64encode(f.read()).decode("ascii")  # WAV header is accepted
    body = {
        "config": {
            "encoding": "LINEAR16",
            "sampleRateHertz": rate,
            "languageCode": SETTINGS["GOOGLE_STT_LANGUAGE"],
            "model": SETTINGS["GOOGLE_STT_MODEL"],
            "enableAutomaticPunctuation": True,
            "maxAlternatives": 1,
        },
        "audio": {"content": content},
    }
    if DIARIZE:
        body["config"]["diarizationConfig"] = {
            "enableSpeakerDiarization": True,
            "maxSpeakerCount": int(SETTINGS["GOOGLE_STT_MAX_SPEAKERS"]),
        }
    url = SETTINGS["GOOGLE_STT_BASE_URL"].rstrip("/") + "/v1/speech:recognize"
    headers = {"X-goog-api-key": os.environ.get("GOOGLE_API_KEY", "")}
    try:
        resp = request("POST", url, POLICY.timeout_s, _error_message, json=body, headers=headers)
    except ApiError as exc:
        # Google answers a wrong API key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID):
        # it is a credentials problem, so stop the run rather than fail every utterance.
        if exc.status == 400 and "API key not valid" in str(exc):
            raise ApiError("auth", exc.args[0], 400) from None
        raise
    try:
        results = resp.json().get("results") or []
        if DIARIZE:
            return _diarized(uid, results)
        return " ".join(
            r["alternatives"][0]["transcript"].strip() for r in results if r.get("alternatives")
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ApiError(
            "client", f"unexpected answer: {resp.text[:200]}", resp.status_code
        ) from None


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "GOOGLE_API_KEY"))
