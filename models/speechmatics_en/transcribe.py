"""speechmatics_en: Speechmatics batch transcription (ASR API v2), the documented job flow.

1. `POST {base}/v2/jobs/` multipart: `data_file` (the audio) and `config` (JSON:
   `{"type": "transcription", "transcription_config": {"language", "operating_point"}}`) ->
   201 `{"id"}`;
2. `GET {base}/v2/jobs/{id}` until `job.status` is `done` (or `rejected`, `deleted`, `expired`);
3. `GET {base}/v2/jobs/{id}/transcript?format=txt` -> the plain text;
4. `DELETE {base}/v2/jobs/{id}` so the vendor keeps no copy.
`Authorization: Bearer <SPEECHMATICS_API_KEY>`. Errors: `{"code", "error", "detail"}` (401,
429, 5xx). Each call is retried on its own (apiclient `step`).

Speakers (`SPEECHMATICS_DIARIZE: true`): `transcription_config` adds `"diarization":
"speaker"`, and the transcript is also fetched as `format=json-v2`, whose `results` are words
and punctuation with `start_time`, `end_time` and `alternatives[0]` `{content, speaker}`
(speaker `S1`, `S2`... or `UU` when it could not tell;
https://docs.speechmatics.com/speech-to-text/batch/batch-diarization): the words, punctuation
attached, go to hyp.timed.jsonl; the text is still the `txt` transcript.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from apiclient import (
    ApiError,
    RetryPolicy,
    Timed,
    diarize_setting,
    load_card,
    poll,
    request,
    run,
    settings,
    speaker_turns,
    step,
    timed_word,
)

CARD = load_card(__file__)
SETTINGS = settings(CARD)
POLICY = RetryPolicy.from_card(CARD)
DIARIZE = diarize_setting(SETTINGS, "SPEECHMATICS_DIARIZE")


def _error_message(resp: Any) -> str:
    body = resp.json()
    return " ".join(str(body.get(k, "")) for k in ("error", "detail")).strip() or str(body)


def _url(path: str) -> str:
    return SETTINGS["SPEECHMATICS_BASE_URL"].rstrip("/") + path


def _headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {os.environ.get('SPEECHMATICS_API_KEY', '')}"}


def _transcript(job_id: str, fmt: str) -> Any:
    return step(
        lambda: request(
            "GET",
            _url(f"/v2/jobs/{job_id}/transcript"),
            POLICY.timeout_s,
            _error_message,
            headers=_headers(),
            params={"format": fmt},
        )
    )


def _words(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    words: list[dict[str, Any]] = []
    for r in results:
        best = r["alternatives"][0]
        if r.get("type") == "punctuation":
            if words:  # attached to the word before it
                words[-1]["word"] += best["content"]
            continue
        words.append(
            timed_word(r["start_time"], r["end_time"], best["content"], best.get("speaker"))
        )
    return words


def transcribe_one(uid: str, path: str) -> str | Timed:
    config = {
        "type": "transcription",
        "transcription_config": {
            "language": SETTINGS["SPEECHMATICS_LANGUAGE"],
            "operating_point": SETTINGS["SPEECHMATICS_OPERATING_POINT"],
        },
    }
    if DIARIZE:
        config["transcription_config"]["diarization"] = "speaker"
    with open(path, "rb") as f:
        audio = f.read()
    job_id = step(
        lambda: request(
            "POST",
            _url("/v2/jobs/"),
            POLICY.timeout_s,
            _error_message,
            headers=_headers(),
            files={"data_file": (Path(path).name, audio, "audio/wav")},
            data={"config": json.dumps(config)},
        )
    ).json()["id"]

    def status() -> tuple[bool, str]:
        job = request(
            "GET", _url(f"/v2/jobs/{job_id}"), POLICY.timeout_s, _error_message, headers=_headers()
        ).json()["job"]
        return job["status"] != "running", job["status"]

    try:
        state = poll(
            status,
            float(SETTINGS["SPEECHMATICS_POLL_S"]),
            float(SETTINGS["SPEECHMATICS_MAX_WAIT_S"]),
            f"job {job_id}",
        )
        if state != "done":
            raise ApiError("client", f"job {job_id} ended {state}")
        text = _transcript(job_id, "txt").text
        results = _transcript(job_id, "json-v2").json()["results"] if DIARIZE else None
    finally:
        try:
            step(
                lambda: request(
                    "DELETE",
                    _url(f"/v2/jobs/{job_id}"),
                    POLICY.timeout_s,
                    _error_message,
                    headers=_headers(),
                )
            )
        except ApiError as exc:
            print(f"speechmatics_en: {uid}: could not delete job {job_id}: {exc}", file=sys.stderr)
    text = " ".join(text.split())
    if results is None:
        return text
    words = _words(results)
    return Timed(text, speaker_turns(uid, words), words)


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one, "SPEECHMATICS_API_KEY"))
