"""aws_transcribe_en: Amazon Transcribe batch jobs through boto3, as the service works.

Per utterance: upload the WAV to S3 (`s3://$AWS_TRANSCRIBE_BUCKET/<prefix><job>.wav`),
`StartTranscriptionJob` (LanguageCode, MediaFormat wav, MediaSampleRateHertz, Media.MediaFileUri),
poll `GetTranscriptionJob` until COMPLETED or FAILED, fetch the transcript JSON from
`Transcript.TranscriptFileUri` (`results.transcripts[0].transcript`), then delete the job and
the uploaded object. Job names are derived from the utterance ID and audio hash, so a retried
utterance finds its own job again (ConflictException) instead of paying twice.

botocore's own retries are off: apiclient.py's policy (backoff with jitter on throttling and
5xx, per-request timeout, concurrency limit, fail fast on rejected credentials) governs, as for
every API model. Endpoints are settings, so tests use loopback S3 and Transcribe servers.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
import wave
from typing import Any

from apiclient import ApiError, RetryPolicy, load_card, request, run, settings

CARD = load_card(__file__)
SETTINGS = settings(CARD)
POLICY = RetryPolicy.from_card(CARD)
THROTTLED = {"ThrottlingException", "LimitExceededException", "TooManyRequestsException",
             "SlowDown", "RequestLimitExceeded", "ProvisionedThroughputExceededException"}
AUTH = {"UnrecognizedClientException", "InvalidSignatureException", "AccessDenied",
        "AccessDeniedException", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
        "ExpiredTokenException", "InvalidClientTokenId", "MissingAuthenticationToken"}
_clients: dict[str, Any] = {}


def client(service: str) -> Any:
    """One boto3 client per service (thread-safe), with our timeouts and no own retries."""
    if service not in _clients:
        import boto3
        from botocore.config import Config

        endpoint = SETTINGS["AWS_S3_ENDPOINT_URL" if service == "s3"
                            else "AWS_TRANSCRIBE_ENDPOINT_URL"] or None
        config = Config(retries={"total_max_attempts": 1, "mode": "standard"},
                        connect_timeout=POLICY.timeout_s, read_timeout=POLICY.timeout_s,
                        max_pool_connections=max(10, POLICY.concurrency),
                        s3={"addressing_style": "path"})
        _clients[service] = boto3.client(service, region_name=SETTINGS["AWS_REGION"],
                                         endpoint_url=endpoint, config=config)
    return _clients[service]


def aws_call(fn: Any, **kwargs: Any) -> Any:
    """A boto3 call, its failures classified as ApiError."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
        ReadTimeoutError,
    )

    try:
        return fn(**kwargs)
    except ClientError as exc:
        err = exc.response.get("Error", {})
        code = err.get("Code", "")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        message = f"{code}: {err.get('Message', '')}"
        if code in THROTTLED or status == 429:
            raise ApiError("throttled", message, status) from None
        if code in AUTH or status in (401, 403):
            raise ApiError("auth", message, status) from None
        if status >= 500 or code in ("InternalFailureException", "ServiceUnavailable"):
            raise ApiError("server", message, status) from None
        raise ApiError("client", message, status) from None
    except NoCredentialsError:
        raise ApiError("auth", "no AWS credentials in the environment") from None
    except (ReadTimeoutError, ConnectTimeoutError):
        raise ApiError("timeout", f"no answer within {POLICY.timeout_s:g} s") from None
    except EndpointConnectionError as exc:
        raise ApiError("network", str(exc)) from None
    except BotoCoreError as exc:
        raise ApiError("network", f"{type(exc).__name__}: {exc}") from None


def job_name(uid: str, audio: bytes) -> str:
    """Valid Transcribe job name ([0-9a-zA-Z._-], at most 200), stable for the same audio."""
    safe = re.sub(r"[^0-9A-Za-z._-]", "_", uid)[:150]
    return f"asrbench-{safe}-{hashlib.sha256(audio).hexdigest()[:12]}"


def transcribe_one(uid: str, path: str) -> str:
    with open(path, "rb") as f:
        audio = f.read()
    with wave.open(path, "rb") as w:
        rate = w.getframerate()
    name = job_name(uid, audio)
    bucket, key = SETTINGS["AWS_TRANSCRIBE_BUCKET"], SETTINGS["AWS_TRANSCRIBE_PREFIX"] + name
    if not bucket:
        raise ApiError("client", "setting AWS_TRANSCRIBE_BUCKET is empty: name an S3 bucket the "
                                 "credentials may write and Transcribe may read")
    s3, tr = client("s3"), client("transcribe")
    aws_call(s3.put_object, Bucket=bucket, Key=key + ".wav", Body=audio,
             ContentType="audio/wav")
    try:
        aws_call(tr.start_transcription_job, TranscriptionJobName=name,
                 LanguageCode=SETTINGS["AWS_TRANSCRIBE_LANGUAGE"], MediaFormat="wav",
                 MediaSampleRateHertz=rate, Media={"MediaFileUri": f"s3://{bucket}/{key}.wav"})
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
            raise ApiError("timeout", f"job {name} still {status} after "
                                      f"{SETTINGS['AWS_TRANSCRIBE_JOB_TIMEOUT_S']} s")
        time.sleep(poll)
    try:
        if status == "FAILED":
            raise ApiError("client", f"job {name} FAILED: {job.get('FailureReason', '?')}")
        uri = job["Transcript"]["TranscriptFileUri"]
        resp = request("GET", uri, POLICY.timeout_s, lambda r: r.text[:300])
        transcripts = resp.json()["results"]["transcripts"]
        return " ".join(t["transcript"] for t in transcripts)
    finally:
        # Jobs and uploads are the user's data and cost: leave nothing behind.
        aws_call(tr.delete_transcription_job, TranscriptionJobName=name)
        aws_call(s3.delete_object, Bucket=bucket, Key=key + ".wav")


if __name__ == "__main__":
    sys.exit(run(__file__, sys.argv[1:], transcribe_one,
                 "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN)"))
