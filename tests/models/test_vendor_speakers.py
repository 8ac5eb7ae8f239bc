"""Speakers from vendor APIs: each wrapper asked to diarize (`<VENDOR>_DIARIZE=true`) sends its
vendor's documented parameter, parses the documented diarized answer of a loopback stub, and
writes speaker-attributed timed output (hyp.timed.jsonl) with hyp.tsv's text unchanged; not
asked, it sends no such parameter and writes no timed file (its outputs keep their bytes).

The stubs answer each utterance of mini_en as two speakers (its first half, its second half),
in each vendor's own labels.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from stubs.vendors import (
    AssemblyAIStub,
    AzureStub,
    DeepgramStub,
    GoogleStub,
    RevAIStub,
    SpeechmaticsStub,
    StubServer,
    assemblyai_label,
    sha,
)

from asrbench.results.timed import TIMED_FILE, read_hyp_timed
from asrbench.runners import read_tsv_pairs
from tests.models.test_api_wrappers import VENDORS, run_wrapper


@dataclass
class Diarizing:
    model: str
    stub: type[StubServer]
    setting: str
    label: Callable[[int], str]  # the vendor's name for speaker n
    asked: Callable[[StubServer], list[bool]]  # per request: did it ask for speakers?


def _deepgram_asked(stub: StubServer) -> list[bool]:
    return [r["query"].get("diarize") == "true" for r in stub.posts()]


def _assemblyai_asked(stub: StubServer) -> list[bool]:
    return [r["json"].get("speaker_labels") is True for r in stub.posts() if "json" in r]


def _speechmatics_asked(stub: StubServer) -> list[bool]:
    return [
        r["config"]["transcription_config"].get("diarization") == "speaker" for r in stub.posts()
    ]


def _revai_asked(stub: StubServer) -> list[bool]:
    return [r["options"].get("skip_diarization") is False for r in stub.posts()]


def _google_asked(stub: StubServer) -> list[bool]:
    return [
        (r["config"].get("diarizationConfig") or {}).get("enableSpeakerDiarization") is True
        for r in stub.posts()
    ]


def _azure_asked(stub: StubServer) -> list[bool]:
    """Speakers come from fast transcription with `diarization.enabled`; the short-audio
    API has none."""
    return [
        r["path"].startswith("/speechtotext/transcriptions:transcribe")
        and r["definition"]["diarization"] == {"enabled": True, "maxSpeakers": 10}
        for r in stub.posts()
    ]


DIARIZING = [
    Diarizing("deepgram_en", DeepgramStub, "DEEPGRAM_DIARIZE", str, _deepgram_asked),
    Diarizing(
        "assemblyai_en", AssemblyAIStub, "ASSEMBLYAI_DIARIZE", assemblyai_label, _assemblyai_asked
    ),
    Diarizing(
        "speechmatics_en",
        SpeechmaticsStub,
        "SPEECHMATICS_DIARIZE",
        lambda n: f"S{n + 1}",
        _speechmatics_asked,
    ),
    Diarizing("revai_en", RevAIStub, "REVAI_DIARIZE", str, _revai_asked),
    Diarizing(
        "google_stt_en", GoogleStub, "GOOGLE_STT_DIARIZE", lambda n: str(n + 1), _google_asked
    ),
    Diarizing(
        "azure_speech_en", AzureStub, "AZURE_SPEECH_DIARIZE", lambda n: str(n + 1), _azure_asked
    ),
]


@pytest.fixture(params=DIARIZING, ids=lambda d: d.model)
def diarizing(request: pytest.FixtureRequest) -> Diarizing:
    return request.param


def _halves(text: str) -> list[tuple[float, float, str, int | None]]:
    """An utterance as two turns: its first half by speaker 0, the rest by speaker 1."""
    words = text.split()
    cut = max(1, len(words) // 2)
    return [(0.2, 1.2, " ".join(words[:cut]), 0), (1.5, 3.0, " ".join(words[cut:]), 1)]


def _run(diarizing, stub_factory, mini, few, transcripts, tmp_path, monkeypatch, **env: str):
    stub = stub_factory(diarizing.stub, transcripts)
    for u in few:
        stub.turns[sha(mini.audio_path(u).read_bytes())] = _halves(u.text)
    vendor = next(v for v in VENDORS if v.model == diarizing.model)
    return stub, run_wrapper(vendor, stub, mini, few, tmp_path, stub.key, monkeypatch, **env)


def test_diarized_answer_gives_speaker_segments(
    diarizing, stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    env = {diarizing.setting: "true"}
    stub, result = _run(
        diarizing, stub_factory, mini, few, transcripts, tmp_path, monkeypatch, **env
    )
    assert all(diarizing.asked(stub)) and diarizing.asked(stub)
    hyps = read_tsv_pairs(result.hyp_path)
    assert hyps == {u.id: " ".join(u.text.split()) for u in few}  # the text is as without
    timed, problems = read_hyp_timed(result.result_dir / TIMED_FILE, set(hyps))
    assert not problems and set(timed) == set(hyps)
    for u in few:
        turns = _halves(u.text)
        segments = timed[u.id]["segments"]
        got = [(s["speaker"], s["text"]) for s in segments]
        want = [(diarizing.label(spk), text) for _, _, text, spk in turns if text]
        assert got == want, u.id
        assert segments[0]["start"] == pytest.approx(0.2, abs=0.01)
        assert segments[-1]["end"] <= 3.0
        words = timed[u.id]["words"]
        assert " ".join(w["word"] for w in words) == " ".join(u.text.split())
        assert {w["speaker"] for w in words} == {s["speaker"] for s in segments}


def test_not_asked_sends_nothing_and_writes_no_timed_file(
    diarizing, stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    stub, result = _run(diarizing, stub_factory, mini, few, transcripts, tmp_path, monkeypatch)
    assert not any(diarizing.asked(stub))
    assert read_tsv_pairs(result.hyp_path) == {u.id: " ".join(u.text.split()) for u in few}
    assert not (result.result_dir / TIMED_FILE).exists()


def test_words_without_a_speaker_are_not_attributed(
    stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    """A reply with speakers on some words only: those words' segments name no speaker (said
    in the log), so the hypothesis is not speaker-attributed; nothing fails."""
    d = DIARIZING[0]
    stub = stub_factory(d.stub, transcripts)
    u = few[0]
    first, second = _halves(u.text)
    stub.turns[sha(mini.audio_path(u).read_bytes())] = [first, (*second[:3], None)]
    vendor = next(v for v in VENDORS if v.model == d.model)
    env = {d.setting: "true"}
    result = run_wrapper(vendor, stub, mini, [u], tmp_path, stub.key, monkeypatch, **env)
    timed, problems = read_hyp_timed(result.result_dir / TIMED_FILE, {u.id})
    assert not problems
    segments: list[dict[str, Any]] = timed[u.id]["segments"]
    assert [s.get("speaker") for s in segments] == ["0", None]
    assert "name no speaker" in result.log_path.read_text()


def test_a_bad_setting_stops_with_one_line(
    stub_factory, mini, few, transcripts, tmp_path, monkeypatch
):
    from asrbench.runners import RunnerError

    d = DIARIZING[0]
    with pytest.raises(RunnerError) as err:
        _run(
            d,
            stub_factory,
            mini,
            few[:1],
            transcripts,
            tmp_path,
            monkeypatch,
            **{d.setting: "maybe"},
        )
    assert f"setting {d.setting}='maybe': expected true or false" in str(err.value)


# ----------------------------------------------------------------------------- end to end

MEETING = "mini_meeting_en"


def _meeting_turns(split: int = 1) -> dict[str, list[tuple[float, float, str, int]]]:
    """mini_meeting_en's reference turns as a diarizing vendor would hear them, by session:
    0.4 s late, every third turn short of its last word, each dataset speaker numbered by
    first appearance, and the 4th turn given to the other speaker. `split` > 1 cuts each turn
    into that many pieces, piece n by speaker n % 40: a hypothesis with 40 speakers."""
    from asrbench.resolve import resolve_dataset

    out: dict[str, list[tuple[float, float, str, int]]] = {}
    numbers: dict[str, dict[str, int]] = {}
    for seg in sorted(resolve_dataset(MEETING).segments, key=lambda s: s.start_time):
        turns, known = out.setdefault(seg.session_id, []), numbers.setdefault(seg.session_id, {})
        words = seg.words.split()
        words = words[:-1] if len(turns) % 3 == 2 and len(words) > 1 else words
        spk = known.setdefault(seg.speaker, len(known))
        spk = 1 - spk if len(turns) == 4 else spk
        start, step = seg.start_time + 0.4, (seg.end_time - seg.start_time) / split
        for k in range(split):
            piece = words[k * len(words) // split : (k + 1) * len(words) // split]
            if split > 1:
                spk = (len(turns)) % 40
            if piece:
                turns.append((start + k * step, start + (k + 1) * step, " ".join(piece), spk))
    return out


def _bench_meeting(cli, tmp_path, monkeypatch, turns) -> tuple[str, Any]:
    from asrbench.resolve import resolve_dataset

    ds = resolve_dataset(MEETING)
    stub = DeepgramStub()
    try:
        for u in ds.utterances:
            audio = ds.audio_path(u).read_bytes()
            stub.turns[sha(audio)] = turns[u.id]
            stub.transcripts[sha(audio)] = " ".join(t[2] for t in turns[u.id])
        monkeypatch.setenv("DEEPGRAM_API_KEY", stub.key)
        code, out, err = cli(
            "benchmark", "-m", "deepgram_en", "-d", MEETING, "--runner", "local",
            "--env", f"DEEPGRAM_BASE_URL={stub.url}", "--env", "DEEPGRAM_DIARIZE=true",
            "--results", tmp_path / "results", "--cache", tmp_path / "hyps",
            "--score-opt", "nsw=false", "--no-progress",
        )  # fmt: skip
    finally:
        stub.close()
    assert code == 0, err
    assert all(r["query"].get("diarize") == "true" for r in stub.posts())
    return out, tmp_path / "results" / "deepgram_en" / MEETING


@pytest.mark.parametrize("metric", ["cpwer", "tcpwer"])
def test_diarized_vendor_end_to_end_gives_cpwer_equal_to_ops_score(
    cli, tmp_path, monkeypatch, metric
):
    """Deepgram's diarized answer (stub) -> the card -> `ops/benchmark` on mini_meeting_en:
    summary.json reports cpWER and tcpWER, each equal to `ops/score` on the cell's exported
    SegLST against the dataset's; the turn given to the wrong speaker costs cpWER errors."""
    from tests.benchmark.test_session_metrics import _exported_score

    out, cell = _bench_meeting(cli, tmp_path, monkeypatch, _meeting_turns())
    sessions = json.loads((cell / "summary.json").read_text())["session_metrics"]
    # the reference names its speakers too, so diarization's DER and JER come beside them
    assert list(sessions) == ["cpwer", "der", "jer", "tcpwer"]
    mine = sessions[metric]["metrics"]
    assert f"{ {'cpwer': 'cpWER', 'tcpwer': 'tcpWER'}[metric] } {100 * mine['ter']:.2f}%" in out
    assert _exported_score(cli, tmp_path, cell, "seglst", metric)["metrics"] == mine
    wer = _exported_score(cli, tmp_path, cell, "seglst", "wer")["metrics"]
    assert mine["errors"] > wer["errors"] > 0


def test_forty_speakers_are_refused_with_the_reason(cli, tmp_path, monkeypatch):
    """A hypothesis naming 40 speakers where the reference has 2: the cell is benchmarked (WER
    and all), its cpWER and tcpWER are `skipped` with MeetEval's reason (more than 20
    hypothesis speakers in a session), printed, and `ops/score` on the exported SegLST refuses
    the same file in one line, exit status 2: the documented behaviour, no traceback."""
    turns = _meeting_turns(split=2)
    assert max(len({t[3] for t in ts}) for ts in turns.values()) == 40
    out, cell = _bench_meeting(cli, tmp_path, monkeypatch, turns)
    timed = [json.loads(line) for line in (cell / "hyp.timed.jsonl").read_text().splitlines()]
    assert max(len({s["speaker"] for s in t["segments"]}) for t in timed) == 40
    summary = json.loads((cell / "summary.json").read_text())
    assert summary["metrics"]["ter"] < 0.2  # the words are scored as ever
    why = "has more than 20 hypothesis speakers"
    sessions = summary["session_metrics"]
    assert list(sessions) == ["cpwer", "der", "jer", "tcpwer"]
    assert all(why in sessions[m]["skipped"] for m in ("cpwer", "tcpwer"))
    # DER and JER have no speaker limit: 40 hypothesis speakers for 2 are a score, not a refusal
    assert 0 < sessions["der"]["der"] and "skipped" not in sessions["der"]
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    assert cli("export", MEETING, "--to", "seglst", "--out", ref)[0] == 0
    assert cli("export", cell, "--to", "seglst", "--out", hyp)[0] == 0
    code, _, err = cli(
        "score", ref / f"{MEETING}.seglst.json", hyp / "hyp.seglst.json", "--metric", "cpwer",
        "--no-nsw", "--out", tmp_path / "score",
    )  # fmt: skip
    assert code == 2 and why in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_turn_without_speakers_is_scored_without_speakers(cli, tmp_path, monkeypatch):
    """Speakers on some words only (one turn unattributed): the hypothesis is not
    speaker-attributed, so the cell reports ORC-WER and session WER, not a cpWER with a
    guessed speaker (models/README.md, "Timed output")."""
    turns = _meeting_turns()
    sid = sorted(turns)[0]
    turns[sid][2] = (*turns[sid][2][:3], None)
    out, cell = _bench_meeting(cli, tmp_path, monkeypatch, turns)
    sessions = json.loads((cell / "summary.json").read_text())["session_metrics"]
    assert list(sessions) == ["orcwer", "wer"]
    assert "cpWER" not in out
