"""The meeting recipes' long-form version (`ops/import ami-ihm-test --longform`, earnings21):
whole sessions with the official segments, from the same tiny hand-made mirrors as
test_recipes.py (real ARCTIC and JFK speech)."""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf

from asrbench.dataset import load_dataset
from scoring.nlp_inputs import read_references
from scoring.timed import read_rttm
from tests.importers import recipe_mirrors


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASRBENCH_DATASETS_DIR", str(tmp_path / "datasets"))
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _import(name: str, shared: Path, env: Path, cli, *extra: str):
    base, checksums, expect = recipe_mirrors.BUILDERS[name](shared, env / "mirror")
    args = ["import", name, "--from", base.as_uri(), "--id", "t", *extra]
    for c in checksums:
        args += ["--checksum", c]
    code, out, err = cli(*args)
    assert code == 0, err
    return load_dataset(env / "datasets" / "t"), expect


def test_ami_longform_is_the_meeting_with_its_speakers_segments(
    shared: Path, env: Path, cli
) -> None:
    ds, expect = _import("ami-ihm-test", shared, env, cli, "--longform")
    assert ds.longform and [u.id for u in ds] == ["ES2004a"]
    # the cut utterances' IDs carry headset, speaker and times: the segments must be exactly them
    want = sorted(
        (uid.split("_")[3], int(uid.split("_")[4]) / 100, int(uid.split("_")[5]) / 100, text)
        for uid, (_, text) in expect.items()
    )
    got = sorted((s.speaker, s.start_time, s.end_time, s.words) for s in ds.segments)
    assert [(g[0], g[3]) for g in got] == [(w[0], w[3]) for w in want]
    assert all(
        abs(g[1] - w[1]) < 0.006 and abs(g[2] - w[2]) < 0.006
        for g, w in zip(got, want, strict=True)
    )
    # the session's audio is the headsets summed: both speakers' speech is in it
    audio, rate = sf.read(str(ds.audio_path(ds.utterances[0])))
    for s in ds.segments:
        part = audio[int(s.start_time * rate) : int(s.end_time * rate)]
        assert (part**2).mean() > 1e-4, s.speaker


def test_ami_mix_longform_is_the_mix_with_segments_and_an_rttm(
    shared: Path, env: Path, cli
) -> None:
    """ami-mix-test --longform: the meeting's Mix-Headset file as it is (one recording, not a
    sum), the manual segments with their words, and `ops/export --to rttm` the speaker turns."""
    ds, expect = _import("ami-mix-test", shared, env, cli, "--longform")
    assert ds.longform and [u.id for u in ds] == ["ES2004a"]
    assert all("_MIX_" in uid for uid in expect)
    want = sorted(
        (uid.split("_")[3], int(uid.split("_")[4]) / 100, int(uid.split("_")[5]) / 100, text)
        for uid, (_, text) in expect.items()
    )
    got = sorted((s.speaker, s.start_time, s.end_time, s.words) for s in ds.segments)
    assert [(g[0], g[3]) for g in got] == [(w[0], w[3]) for w in want]
    mix = env / "mirror" / "AMICorpusMirror/amicorpus/ES2004a/audio/ES2004a.Mix-Headset.wav"
    assert sf.read(str(ds.audio_path(ds.utterances[0])))[0].shape == sf.read(str(mix))[0].shape
    code, _, err = cli("export", env / "datasets" / "t", "--to", "rttm", "--out", env / "rttm")
    assert code == 0, err
    rttm = read_rttm(env / "rttm" / "t.rttm")
    assert sorted((s.speaker, s.start_time) for s in rttm) == [(g[0], g[1]) for g in got]
    assert {s.session_id for s in rttm} == {"ES2004a"}


def test_earnings_longform_keeps_timed_turns_and_untimed_calls_whole(
    shared: Path, env: Path, cli
) -> None:
    ds, expect = _import("earnings21", shared, env, cli, "--longform")
    assert ds.longform and sorted(u.id for u in ds) == ["4320211", "4330115"]
    whole = [s for s in ds.segments if s.session_id == "4320211"]
    call = next(u for u in ds if u.id == "4320211")
    assert len(whole) == 1 and whole[0].start_time == 0 and whole[0].end_time == call.duration
    assert whole[0].words == expect["4320211"][1]
    turns = [s for s in ds.segments if s.session_id == "4330115"]
    assert [s.words for s in turns] == [expect["4330115_0000"][1], expect["4330115_0001"][1]]
    assert [s.speaker for s in turns] == ["4330115_0", "4330115_1"]


def test_earnings_recipe_declares_its_nlp_references_for_whole_calls(
    shared: Path, env: Path, cli
) -> None:
    """Every row a whole call (--longform): the NLP references and sidecars are copied and
    dataset.yaml's `nlp:` names them, so a cell stores the entity metrics; a call cut into
    timed turns has no `ID.nlp` of its own: no block."""
    ds, _ = _import("earnings21", shared, env, cli, "--longform")
    assert ds.meta["nlp"] == {
        "references": "nlp/references",
        "norm": "nlp/normalizations",
        "wer_tags": "nlp/wer_tags",
        "lenient": True,  # Rev's sidecars name a few entities their reference lacks
    }
    assert ds.nlp_lenient
    recs, warnings = read_references(*ds.nlp, lenient=False)
    assert sorted(recs) == sorted(u.id for u in ds) and warnings == []
    words = [w for s in ds.segments if s.session_id == "4330115" for w in s.words.split()]
    assert len(recs["4330115"].tokens) == len(words)
    ds, _ = _import("earnings21", shared, env, cli, "--force")
    assert "nlp" not in ds.meta and not (ds.root / "nlp").exists()


def test_longform_is_refused_for_recipes_without_sessions(env: Path, cli) -> None:
    code, _, err = cli("import", "fsdd", "--id", "x", "--longform")
    assert code != 0 and "--longform works for ami-ihm-test" in err


def test_gigaspeech_longform_groups_segments_by_audio(shared: Path, env: Path, cli) -> None:
    ds, expect = _import("gigaspeech-test", shared, env, cli, "--longform")
    assert [u.id for u in ds] == ["POD0000000001"]
    assert [s.words for s in ds.segments] == [text for _, text in expect.values()]
    assert {s.speaker for s in ds.segments} == {"unknown"}  # GigaSpeech has no speaker labels
