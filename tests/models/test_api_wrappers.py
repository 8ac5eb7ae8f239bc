"""Commercial-API wrappers against loopback servers that implement each vendor's wire format.

Every wrapper runs through the platform's local runner (same program, arguments, outputs and
environment filtering as in Docker) against a stub on 127.0.0.1; never a real vendor.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

import pytest
from stubs.vendors import (
    AssemblyAIStub,
    AzureStub,
    DeepgramStub,
    GoogleStub,
    OpenAIStub,
    RevAIStub,
    SpeechmaticsStub,
    StubServer,
    sha,
)

from asrbench.resolve import resolve_model
from asrbench.runners import RunnerError, RunOptions, read_tsv_pairs
from asrbench.runners.local import LocalRunner


@dataclass
class Vendor:
    model: str
    stub: type[StubServer]
    secret: str
    url_setting: str
    url_suffix: str = ""
    calls: int = 1  # HTTP calls per utterance (job APIs: upload/create, poll, fetch, delete)
    env: dict[str, str] | None = None


FAST_POLL = {"ASSEMBLYAI_POLL_S": "0.05", "SPEECHMATICS_POLL_S": "0.05", "REVAI_POLL_S": "0.05"}
VENDORS = [
    Vendor("openai_api_en", OpenAIStub, "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
    Vendor("google_stt_en", GoogleStub, "GOOGLE_API_KEY", "GOOGLE_STT_BASE_URL"),
    Vendor("azure_speech_en", AzureStub, "AZURE_SPEECH_KEY", "AZURE_SPEECH_ENDPOINT"),
    Vendor("deepgram_en", DeepgramStub, "DEEPGRAM_API_KEY", "DEEPGRAM_BASE_URL"),
    Vendor(
        "assemblyai_en",
        AssemblyAIStub,
        "ASSEMBLYAI_API_KEY",
        "ASSEMBLYAI_BASE_URL",
        calls=4,
        env=FAST_POLL,
    ),
    Vendor(
        "speechmatics_en",
        SpeechmaticsStub,
        "SPEECHMATICS_API_KEY",
        "SPEECHMATICS_BASE_URL",
        calls=4,
        env=FAST_POLL,
    ),
    Vendor("revai_en", RevAIStub, "REVAI_ACCESS_TOKEN", "REVAI_BASE_URL", calls=4, env=FAST_POLL),
    Vendor(
        "openai_compatible",
        OpenAIStub,
        "OPENAI_COMPATIBLE_API_KEY",
        "OPENAI_COMPATIBLE_BASE_URL",
        "/v1",
    ),
]
FAST = {
    "ASRBENCH_API_BACKOFF_S": "0.05",
    "ASRBENCH_API_MAX_BACKOFF_S": "0.2",
    "ASRBENCH_API_CONCURRENCY": "2",
    "ASRBENCH_API_TIMEOUT_S": "10",
}


@pytest.fixture(params=VENDORS, ids=lambda v: v.model)
def vendor(request: pytest.FixtureRequest) -> Vendor:
    return request.param


def run_wrapper(
    vendor: Vendor,
    stub: StubServer,
    mini,
    utts,
    work: Path,
    key: str,
    monkeypatch: pytest.MonkeyPatch,
    **env: str,
):
    monkeypatch.setenv(vendor.secret, key)
    monkeypatch.setenv("ASRBENCH_UNDECLARED_TOKEN", "must-not-cross")
    options = RunOptions(
        timeout_s=300,
        env={vendor.url_setting: stub.url + vendor.url_suffix, **FAST, **(vendor.env or {}), **env},
    )
    return LocalRunner().run(resolve_model(vendor.model), mini, work, utts, options)


def all_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def test_transcribes_with_documented_request(
    vendor, stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    stub = stub_factory(vendor.stub, transcripts)
    result = run_wrapper(vendor, stub, mini, few, tmp_path, stub.key, monkeypatch)
    hyps = read_tsv_pairs(result.hyp_path)
    assert hyps == {u.id: " ".join(u.text.split()) for u in few}
    timing = read_tsv_pairs(result.timing_path)
    assert set(timing) == set(hyps)
    assert len(stub.requests) == vendor.calls * len(few)
    if vendor.calls > 1:  # job APIs: every job was deleted after its transcript was fetched
        assert len(stub.deleted) == len(few) and not stub.jobs
    # the secret went where the vendor expects it, and nowhere into logs or results
    assert stub.key not in all_text(tmp_path)
    # a cost estimate per utterance, from the card's list price (cost.tsv, models/README.md)
    cost = read_tsv_pairs(result.result_dir / "cost.tsv")
    assert set(cost) == set(hyps)
    pricing = resolve_model(vendor.model).card.extra["pricing"]
    for u in few:
        billed = (
            math.ceil(u.duration - 1e-6) if pricing.get("billing_increment_s") == 1 else u.duration
        )  # the vendor's increment: whole seconds, rounded up
        expected = pricing["usd_per_minute"] * billed / 60
        assert abs(float(cost[u.id]) - expected) < 1e-5, (u.id, cost[u.id], expected)


def test_throttling_then_success_recovers(
    vendor, stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    stub = stub_factory(vendor.stub, transcripts)
    stub.script = [(429, {"Retry-After": "0"}), (429, {}), (503, {}), (500, {})]
    result = run_wrapper(vendor, stub, mini, few, tmp_path, stub.key, monkeypatch)
    hyps = read_tsv_pairs(result.hyp_path)
    assert set(hyps) == {u.id for u in few}
    assert all(hyps.values())
    assert not read_tsv_pairs(result.result_dir / "failed.tsv")
    # every scripted fault was retried, each call on its own (a job API never starts over)
    assert len(stub.requests) == vendor.calls * len(few) + 4
    assert "retry" in result.log_path.read_text()


def test_http_date_retry_after_is_honoured(
    vendor, stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    """`Retry-After` as an HTTP-date (RFC 9110), not only as seconds: the retry waits for it."""
    stub = stub_factory(vendor.stub, transcripts)
    # the date is made when the 429 is sent, so a slow program start cannot eat into the wait
    stub.script = [(429, lambda: {"Retry-After": formatdate(time.time() + 3, usegmt=True)})]
    result = run_wrapper(
        vendor,
        stub,
        mini,
        few[:1],
        tmp_path,
        stub.key,
        monkeypatch,
        ASRBENCH_API_MAX_BACKOFF_S="10",
    )
    assert set(read_tsv_pairs(result.hyp_path)) == {few[0].id}
    first, retry = stub.requests[:2]
    assert len(stub.requests) == vendor.calls + 1
    # The date has whole seconds, so the wait is 2-3 s; the jittered backoff alone is < 0.05 s.
    assert retry["t"] - first["t"] > 1.5, retry["t"] - first["t"]


def test_persistent_5xx_is_recorded_per_utterance(
    vendor, stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    stub = stub_factory(vendor.stub, transcripts)
    stub.script = [(503, {})] * 3  # with 3 attempts, the first utterance gives up
    result = run_wrapper(
        vendor, stub, mini, few[:1], tmp_path, stub.key, monkeypatch, ASRBENCH_API_MAX_ATTEMPTS="3"
    )
    failed = read_tsv_pairs(result.result_dir / "failed.tsv")
    assert list(failed) == [few[0].id]
    assert "HTTP 503" in failed[few[0].id] and "after 3 attempts" in failed[few[0].id]
    assert few[0].id not in read_tsv_pairs(result.hyp_path)  # never a silently empty line


def test_permanent_401_fails_fast_with_clear_message(
    vendor, stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    stub = stub_factory(vendor.stub, transcripts)
    wrong = "wrong-key-SECRET-9876"
    start = time.monotonic()
    with pytest.raises(RunnerError) as err:
        run_wrapper(vendor, stub, mini, few, tmp_path, wrong, monkeypatch)
    assert time.monotonic() - start < 60  # no retry loop on a credentials error
    message = str(err.value)
    assert "rejected the credentials" in message and vendor.secret in message
    assert err.value.status == 3
    assert len(stub.requests) <= 2  # concurrency 2: at most the requests already in flight
    assert wrong not in message and wrong not in all_text(tmp_path)


def test_timeout_marks_utterance_failed_and_run_goes_on(
    vendor, stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    stub = stub_factory(vendor.stub, transcripts)
    slow = few[1]
    stub.slow[sha(mini.audio_path(slow).read_bytes())] = 3.0
    result = run_wrapper(
        vendor, stub, mini, few, tmp_path, stub.key, monkeypatch, ASRBENCH_API_TIMEOUT_S="1"
    )
    failed = read_tsv_pairs(result.result_dir / "failed.tsv")
    assert list(failed) == [slow.id] and "timeout" in failed[slow.id]
    hyps = read_tsv_pairs(result.hyp_path)
    assert set(hyps) == {u.id for u in few} - {slow.id}


def test_resume_skips_done_utterances(stub_factory, mini, few, transcripts, tmp_path, monkeypatch):
    vendor = VENDORS[0]
    stub = stub_factory(vendor.stub, transcripts)
    run_wrapper(vendor, stub, mini, few[:2], tmp_path, stub.key, monkeypatch)
    result = run_wrapper(vendor, stub, mini, few, tmp_path, stub.key, monkeypatch)
    assert len(stub.requests) == len(few)  # the first two were not sent again
    assert len(read_tsv_pairs(result.result_dir / "cost.tsv")) == len(few)
    assert set(read_tsv_pairs(result.hyp_path)) == {u.id for u in few}


def test_openai_request_fields(stub_factory, mini, few, transcripts, tmp_path, monkeypatch):
    vendor = VENDORS[0]
    stub = stub_factory(vendor.stub, transcripts)
    run_wrapper(
        vendor,
        stub,
        mini,
        few[:1],
        tmp_path,
        stub.key,
        monkeypatch,
        OPENAI_MODEL="whisper-large-v3",
    )
    fields = stub.requests[0]["fields"]
    assert fields["model"] == "whisper-large-v3" and fields["language"] == "en"
    assert fields["response_format"] == "json"
    assert os.environ.get("ASRBENCH_UNDECLARED_TOKEN") == "must-not-cross"


def test_utterance_timeout_bounds_retries(
    stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    """ops/benchmark --utt-timeout (ASRBENCH_UTT_TIMEOUT): throttled retries stop in time."""
    vendor = VENDORS[0]
    stub = stub_factory(vendor.stub, transcripts)
    stub.script = [(429, {"Retry-After": "2"})] * 50
    result = run_wrapper(
        vendor,
        stub,
        mini,
        few[:1],
        tmp_path,
        stub.key,
        monkeypatch,
        ASRBENCH_UTT_TIMEOUT="1",
        ASRBENCH_API_MAX_BACKOFF_S="5",
    )
    failed = read_tsv_pairs(result.result_dir / "failed.tsv")
    assert list(failed) == [few[0].id] and failed[few[0].id].startswith("timeout after 1 s")
    assert len(stub.requests) == 1  # the 2 s Retry-After does not fit in the 1 s budget
