"""Importers on real audio files: Kaldi (plain, piped, segments), NeMo JSONL, folder + table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from asrbench.dataset import load_dataset
from asrbench.importers.common import ImportProblem, build_dataset
from asrbench.importers.folder import import_folder
from asrbench.importers.kaldi import import_kaldi, parse_pipe
from asrbench.importers.nemo import import_nemo


def tone(path: Path, seconds: float, rate: int, channels: int = 1, fmt: str | None = None) -> None:
    t = np.arange(int(seconds * rate)) / rate
    sig = 0.3 * np.sin(2 * np.pi * 440 * t)
    data = np.stack([sig] * channels, axis=1) if channels > 1 else sig
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, data, rate, format=fmt)


def _kaldi_dir(tmp_path: Path, wav_scp: str) -> Path:
    tone(tmp_path / "audio" / "r1.wav", 1.5, 8000, channels=2)
    tone(tmp_path / "audio" / "r2.flac", 2.0, 22050)
    d = tmp_path / "data" / "test"
    d.mkdir(parents=True)
    (d / "wav.scp").write_text(wav_scp)
    (d / "text").write_text("r1 HELLO WORLD\nr2 SECOND\tUTTERANCE\n")
    (d / "utt2spk").write_text("r1 spkA\nr2 spkB\n")
    (d / "spk2gender").write_text("spkA f\nspkB m\n")
    return d


def test_kaldi_plain_files(tmp_path):
    d = _kaldi_dir(tmp_path, "r1 audio/r1.wav\nr2 audio/r2.flac\n")
    out = build_dataset(tmp_path / "out", import_kaldi(d), dataset_id="k")
    ds = load_dataset(out)
    rows = {u.id: u for u in ds}
    assert rows["r1"].duration == pytest.approx(1.5, abs=0.002)
    assert rows["r2"].duration == pytest.approx(2.0, abs=0.002)
    assert rows["r2"].text == "SECOND UTTERANCE"  # the tab folded into a space
    assert rows["r1"].extra == {"SPEAKER": "spkA", "GENDER": "F"}
    info = sf.info(str(out / rows["r1"].audio))
    assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16")


def test_kaldi_pipes_refused_by_default_and_run_without_shell_when_allowed(tmp_path):
    d = _kaldi_dir(tmp_path, "r1 cat audio/r1.wav |\nr2 audio/r2.flac\n")
    with pytest.raises(ImportProblem, match="piped command .* refused; rerun with --allow-pipes"):
        list(import_kaldi(d))
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)  # Kaldi runs pipes from the recipe folder
    try:
        out = build_dataset(tmp_path / "out", import_kaldi(d, allow_pipes=True), dataset_id="k")
    finally:
        os.chdir(cwd)
    assert {u.id for u in load_dataset(out)} == {"r1", "r2"}


@pytest.mark.parametrize(
    "cmd",
    [
        "cat a; rm -rf /",
        "cat a > /tmp/x",
        "cat $(whoami)",
        "cat `id`",
        "cat a && ls",
        "(cat a)",
        "cat a | | cat",
    ],
)
def test_shell_features_refused_even_with_pipes(cmd):
    with pytest.raises(ImportProblem):
        parse_pipe(cmd, "wav.scp:1")


def test_kaldi_segments_cut_recordings(tmp_path):
    d = _kaldi_dir(tmp_path, "r1 audio/r1.wav\nr2 audio/r2.flac\n")
    (d / "segments").write_text("s1 r2 0.00 0.50\ns2 r2 0.50 1.75\ns3 r1 0.25 1.25\n")
    (d / "text").write_text("s1 ONE\ns2 TWO\ns3 THREE\n")
    (d / "utt2spk").write_text("s1 spkB\ns2 spkB\ns3 spkA\n")
    ds = load_dataset(build_dataset(tmp_path / "out", import_kaldi(d), dataset_id="seg"))
    durs = {u.id: u.duration for u in ds}
    assert durs == pytest.approx({"s1": 0.5, "s2": 1.25, "s3": 1.0}, abs=0.002)


def test_kaldi_missing_transcript_is_named(tmp_path):
    d = _kaldi_dir(tmp_path, "r1 audio/r1.wav\nr2 audio/r2.flac\n")
    (d / "text").write_text("r1 HELLO\n")
    with pytest.raises(ImportProblem, match="no transcript for 'r2'"):
        list(import_kaldi(d))


def test_nemo_manifest_with_offsets(tmp_path):
    tone(tmp_path / "wavs" / "long.wav", 3.0, 44100)
    tone(tmp_path / "wavs" / "short.ogg", 1.0, 16000, fmt="OGG")
    lines = [
        {"audio_filepath": "wavs/long.wav", "offset": 0.0, "duration": 1.0, "text": "a"},
        {
            "audio_filepath": "wavs/long.wav",
            "offset": 1.0,
            "duration": 2.0,
            "text": "b",
            "speaker": "x",
        },
        {"audio_filepath": "wavs/short.ogg", "duration": 1.0, "text": "c"},
    ]
    man = tmp_path / "train.json"
    man.write_text("".join(json.dumps(x) + "\n" for x in lines))
    ds = load_dataset(build_dataset(tmp_path / "out", import_nemo(man), dataset_id="n"))
    assert sorted((u.id, round(u.duration, 2)) for u in ds) == [
        ("long_00000000", 1.0),
        ("long_00001000", 2.0),
        ("short", 1.0),
    ]


def test_folder_with_csv_table_and_cli(tmp_path, cli):
    tone(tmp_path / "clips" / "a.wav", 1.0, 48000, channels=2)
    tone(tmp_path / "clips" / "sub" / "b.flac", 0.5, 16000)
    table = tmp_path / "t.csv"
    table.write_text('file,sentence,gender\nclips/a.wav,"Hello, there",F\nclips/sub/b.flac,bye,M\n')
    ds = load_dataset(
        build_dataset(tmp_path / "out", import_folder(tmp_path, table), dataset_id="f")
    )
    assert {u.id: (u.text, u.extra["GENDER"]) for u in ds} == {
        "clips_a": ("Hello, there", "F"),
        "clips_sub_b": ("bye", "M"),
    }
    # Through the CLI, into a second folder; an existing one is refused without --force.
    code, out, err = cli(
        "import", "folder", tmp_path, table, "--id", "f", "--out", tmp_path / "out"
    )
    assert code == 2 and "--force" in err and "Traceback" not in err
    code, out, err = cli(
        "import", "folder", tmp_path, table, "--id", "f2", "--out", tmp_path / "out2"
    )
    assert code == 0, err
    assert "imported 2 utterances" in out


def test_folder_refuses_escaping_paths_and_writes_nothing(tmp_path):
    table = tmp_path / "t.tsv"
    table.write_text("path\ttext\n../../etc/passwd\tx\n")
    with pytest.raises(ImportProblem, match="must be relative"):
        build_dataset(tmp_path / "out", import_folder(tmp_path, table), dataset_id="x")
    assert not (tmp_path / "out").exists()


def test_bad_audio_is_reported_by_utterance(tmp_path):
    (tmp_path / "bad.wav").write_bytes(b"not audio at all")
    tone(tmp_path / "good.wav", 0.5, 16000)
    table = tmp_path / "t.tsv"
    table.write_text("file\ttext\ngood.wav\tok\nbad.wav\tno\n")
    expected = r"(?s)1 problem\(s\); nothing written.*t.tsv:3: .*bad.wav"
    with pytest.raises(ImportProblem, match=expected):
        build_dataset(tmp_path / "out", import_folder(tmp_path, table), dataset_id="x")
    assert not (tmp_path / "out").exists()
