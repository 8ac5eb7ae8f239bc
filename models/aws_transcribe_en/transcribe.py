"""aws_transcribe_en: Amazon Transcribe batch jobs through boto3, as the service works.

Per utterance: upload the WAV to S3 (`s3://$AWS_TRANSCRIBE_BUCKET/<prefix><job>.wav`),
`StartTranscriptionJob` (LanguageCode, MediaFormat wav, MediaSampleRateHertz, Media.MediaFileUri),
poll `GetTranscriptionJob` until COMPLETED or FAILED, fetch the transcript JSON from
`Transcript.TranscriptFileUri` (`results.transcripts[0].transcript`), then delete the job and
the uploaded object. Job names are derived from the utterance ID and audio hash, so a retried
utterance finds its own job again (ConflictException) instead of paying twice.

Each AWS call is retried by botocore's standard retry mode (AWS's own list of throttling and
transient errors, its backoff with jitter), up to the card's `api.max_attempts`; apiclient.py
then records what still failed without retrying it again (`ApiError(retried=True)`), keeps the
concurrency limit and fails fast on rejected credentials, as for every API model. A call that
times out is not retried: the contract's per-request timeout marks the utterance failed.
Endpoints are settings, so tests use loopback S3 and Transcribe servers.

Speakers (`AWS_TRANSCRIBE_DIARIZE: true`): the job is started with `Settings:
{"ShowSpeakerLabels": true, "MaxSpeakerLabels": AWS_TRANSCRIBE_MAX_SPEAKERS}`, and the
transcript's `results.items` (`pronunciation` and `punctuation`, times as strings) each name a
`speaker_label` (`spk_0`...), also listed by time in `results.speaker_labels.segments[].items`
(https://docs.aws.amazon.com/transcribe/latest/dg/diarization-output-batch.html): the words,
punctuation attached, go to hyp.timed.jsonl.
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
import time
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
DIARIZE = diarize_setting(SETTINGS, "AWS_TRANSCRIBE_DIARIZE")
# Rejected credentials stop the run (apiclient); AWS answers some of them with HTTP 400.
AUTH = {
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "AccessDenied",
    "AccessDeniedException",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "ExpiredTokenException",
    "InvalidClientTokenId",
    "MissingAuthenticationToken",
}
_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()
_attempts = threading.local()  # attempts botocore made for this thread's last call


def client(service: str) -> Any:
    """One boto3 client per service (shared by the threads), with botocore's standard retries
    bounded by the card's max_attempts and the card's per-request timeout."""
    with _clients_lock:
        if service not in _clients:
            import boto3
            from botocore.config import Config

            endpoint = (
                SETTINGS[
                    "AWS_S3_ENDPOINT_URL" if service == "s3" else "AWS_TRANSCRIBE_ENDPOINT_URL"
                ]
                or None
            )
            config = Config(
                retries={"mode": "standard", "total_max_attempts": POLICY.max_attempts},
                connect_timeout=POLICY.timeout_s,
                read_timeout=POLICY.timeout_s,
                max_pool_connections=max(10, POLICY.concurrency),
                s3={"addressing_style": "path"},
            )
            made = boto3.client(
                service, region_name=SETTINGS["AWS_REGION"], endpoint_url=endpoint, config=config
            )
            # First in line on the event botocore's retry handler uses, so a timed-out call
            # ends before a retry is scheduled.
            event = f"needs-retry.{made.meta.service_model.service_id.hyphenize()}"
            made.meta.events.register_first(event, _on_attempt)
            _clients[service] = made
    return _clients[service]


def _on_attempt(
    attempts: int,
    response: Any = None,
    caught_exception: Any = None,
    operation: Any = None,
    **_: Any,
) -> None:
    """botocore's `needs-retry` hook, after every attempt: count it, log a failure, and end a
    timed-out call here (the per-request timeout fails the utterance, it is not retried).
    Returns None, so botocore's standard retry handler alone decides about retries."""
    from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError

    _attempts.n = attempts
    name = getattr(operation, "name", "call")
    if isinstance(caught_exception, (ReadTimeoutError, ConnectTimeoutError)):
        raise ApiError("timeout", f"{name}: no answer within {POLICY.timeout_s:g} s", retried=True)
    if caught_exception is not None:
        what = f"{type(caught_exception).__name__}"
    elif response is not None and response[0].status_code >= 400:
        code = (response[1] or {}).get("Error", {}).get("Code", "")
        what = f"{code} (HTTP {response[0].status_code})"
    else:
        return
    print(
        f"{CARD['id']}: {name}: {what}, attempt {attempts}/{POLICY.max_attempts}", file=sys.stderr
    )


def aws_call(fn: Any, **kwargs: Any) -> Any:
    """A boto3 call (botocore retries it), what still failed classified as ApiError."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    _attempts.n = 1
    try:
        return fn(**kwargs)
    except ClientError as exc:
        err = exc.response.get("Error", {})
        code = err.get("Code", "")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        message = f"{code}: {err.get('Message', '')}{_after()}"
        if code in AUTH or status in (401, 403):
            raise ApiError("auth", message, status) from None
        kind = "throttled" if status == 429 else "server" if status >= 500 else "client"
        raise ApiError(kind, message, status, retried=True) from None
    except NoCredentialsError:
        raise ApiError("auth", "no AWS credentials in the environment") from None
    except BotoCoreError as exc:  # connection failures, after botocore's retries
        raise ApiError("network", f"{exc}{_after()}", retried=True) from None


def _after() -> str:
    n = getattr(_attempts, "n", 1)
    return f" (after {n} attempts)" if n > 1 else ""


def job_name(uid: str, audio: bytes) -> str:
    """Valid Transcribe job name ([0-9a-zA-Z._-], at most 200), stable for the same audio."""
    safe = re.sub(r"[^0-9A-Za-z._-]", "_", uid)[:150]
    return f"asrbench-{safe}-{hashlib.sha256(audio).hexdigest()[:12]}"


def _diarized(uid: str, text: str, results: dict[str, Any]) -> Timed:
    # older transcripts name the speaker only in speaker_labels.segments: by start time
    by_start = {
        i["start_time"]: i.get("speaker_label")
        for seg in (results.get("speaker_labels") or {}).get("segments") or []
        for i in seg.get("items") or []
    }
    words: list[dict[str, Any]] = []
    for item in results.get("items") or []:
        content = item["alternatives"][0]["content"]
        if item.get("type") == "punctuation":
            if words:  # attached to the word before it
                words[-1]["word"] += content
            continue
        spk = item.get("speaker_label") or by_start.get(item["start_time"])
        words.append(timed_word(item["start_time"], item["end_time"], content, spk))
    return Timed(text, speaker_turns(uid, words), words)


def _job_settings() -> dict[str, Any]:
    """StartTranscriptionJob's optional `Settings`: speakers when asked, else none at all."""
    if not DIARIZE:
        return {}
    speakers = int(SETTINGS["AWS_TRANSCRIBE_MAX_SPEAKERS"])
    return {"Settings": {"ShowSpeakerLabels": True, "MaxSpeakerLabels": speakers}}


def transcribe_one(uid: str, path: str) -> str | Timed:
    with open(path, "rb") as f:
        audio = f.read()
    with wave.open(path, "rb") as w:
        rate = w.getframerate()
    name = job_name(uid, audio)
    bucket, key = SETTINGS["AWS_TRANSCRIBE_BUCKET"], SETTINGS["AWS_TRANSCRIBE_PREFIX"] + name
    if not bucket:
        raise ApiError(
            "client",
            "setting AWS_TRANSCRIBE_BUCKET is empty: name an S3 bucket the "
            "credentials may write and Transcribe may read",
        )
    s3, tr = client("s3"), client("transcribe")
    aws_call(s3.put_object, Bucket=bucket, Key=key + ".wav", Body=audio, ContentType="audio/wav")
    try:
        aws_call(
            tr.start_transcription_job,
            TranscriptionJobName=name,
            LanguageCode=SETTINGS["AWS_TRANSCRIBE_LANGUAGE"],
            MediaFormat="wav",
            MediaSampleRateHertz=rate,
            Media={"MediaFileUri": f"s3://{bucket}/{key}.wav"},
            **_job_settings(),
        )
    except ApiError as exc:
        if "ConflictException" not in str(exc):  # a retry: the job already exists
            raise
    deadline = time.monotonic() + float(SETTINGS["AWS_TRANSCRIBE_JOB_TIMEOUT_S"])
    poll = float(SETTINGS["AWS_TRANSCRIBE_POLL_S"])
    while True:
        job = aws_call(tr.get_transcription_job, TranscriptionJobName=name)["TranscriptionJob"]
        status = job["TranscriptionJobStatus"]
        if status in ("COMPLETED", "FAILED"):
            break
        if time.monotonic() > deadline:
            raise ApiError(
                "timeout",
                f"job {name} still {status} after {SETTINGS['AWS_TRANSCRIBE_JOB_TIMEOUT_S']} s",
            )
        time.sleep(poll)
    try:
        if status == "FAILED":
            raise ApiError("client", f"job {name} FAILED: {job.get('FailureReason', '?')}")
        uri = job["Transcript"]["TranscriptFileUri"]
        resp = request("GET", uri, POLICY.timeout_s, lambda r: r.text[:300])
        results = resp.json()["results"]
        text = " ".join(t["transcript"] for t in results["transcripts"])
        return _diarized(uid, text, results) if DIARIZE else text
    finally:
        # Jobs and uploads are the user's data and cost: leave nothing behind.
        aws_call(tr.delete_transcription_job, TranscriptionJobName=name)
        aws_call(s3.delete_object, Bucket=bucket, Key=key + ".wav")


if __name__ == "__main__":
    sys.exit(
        run(
            __file__,
            sys.argv[1:],
            transcribe_one,
            "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN)",
        )
    )
