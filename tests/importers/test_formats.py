"""Other toolkits' formats, through their own libraries: lhotse and Kaldi round trips keep IDs,
text, speaker and duration exactly; a saved Hugging Face dataset with an audio column imports
and benchmarks; duplicate IDs across splits, and reference-free sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import soundfile as sf

from asrbench.dataset import load_dataset
from tests.benchmark.conftest import make_fake_model
from tests.importers.recipe_mirrors import arctic


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASRBENCH_DATASETS_DIR", str(tmp_path / "datasets"))
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _librispeech(shared: Path) -> list[tuple[str, Path, str]]:
    base = shared / "data" / "librispeech-test-clean-sample" / "LibriSpeech" / "test-clean"
    out = []
    for trans in sorted(base.rglob("*.trans.txt")):
        for line in trans.read_text().splitlines():
            uid, _, text = line.partition(" ")
            out.append((uid, trans.parent / f"{uid}.flac", text))
    return out


def _lhotse_manifests(shared: Path, folder: Path, with_text: bool = True) -> tuple[Path, Path]:
    """Recordings of the real LibriSpeech files (in `folder`), two supervisions per recording
    split at a sample boundary, with speaker and gender."""
    import shutil

    from lhotse import Recording, RecordingSet, SupervisionSegment, SupervisionSet

    folder.mkdir(parents=True)
    recs, sups = [], []
    for uid, flac, text in _librispeech(shared):
        shutil.copy(flac, folder / flac.name)
        rec = Recording.from_file(folder / flac.name, recording_id=uid)
        recs.append(rec)
        half = rec.num_samples // 2
        words = text.split()
        first, second = " ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2 :])
        for k, (a, b, t) in enumerate([(0, half, first), (half, rec.num_samples, second)]):
            sups.append(
                SupervisionSegment(
                    id=f"{uid}-{k}",
                    recording_id=uid,
                    start=a / 16000,
                    duration=(b - a) / 16000,
                    channel=0,
                    text=t if with_text else None,
                    speaker=uid.split("-")[0],
                    gender="male",
                    language="English",
                )
            )
    RecordingSet.from_recordings(recs).to_file(folder / "recordings.jsonl.gz")
    SupervisionSet.from_segments(sups).to_file(folder / "supervisions.jsonl.gz")
    return folder / "recordings.jsonl.gz", folder / "supervisions.jsonl.gz"


def test_lhotse_to_ours_to_lhotse_keeps_ids_text_speaker_duration(shared, env, cli) -> None:
    from lhotse import load_manifest

    recs, sups = _lhotse_manifests(shared, env / "lh")
    code, _, err = cli(
        "import", "lhotse", "--recordings", recs, "--supervisions", sups, "--id", "lh"
    )
    assert code == 0, err
    code, _, err = cli("export", env / "datasets" / "lh", "--to", "lhotse", "--out", env / "back")
    assert code == 0, err
    before = {s.id: (s.text, s.speaker, s.duration) for s in load_manifest(sups)}
    after = {
        s.id: (s.text, s.speaker, s.duration)
        for s in load_manifest(env / "back" / "supervisions.jsonl.gz")
    }
    assert after == before and len(before) == 8
    cuts = load_manifest(env / "back" / "cuts.jsonl.gz")
    assert sorted(c.id for c in cuts) == sorted(before)
    # The exported cuts import back to the same dataset.
    code, _, err = cli(
        "import",
        "lhotse",
        "--cuts",
        env / "back" / "cuts.jsonl.gz",
        "--id",
        "lh2",
        "--audio-root",
        env / "datasets" / "lh",
    )
    assert code == 0, err
    one, two = load_dataset(env / "datasets" / "lh"), load_dataset(env / "datasets" / "lh2")
    assert [(u.id, u.text, u.duration, u.extra) for u in one] == [
        (u.id, u.text, u.duration, u.extra) for u in two
    ]


def test_ours_to_kaldi_to_ours_keeps_ids_text_speaker_duration(env, cli, mini_en) -> None:
    code, _, err = cli("export", mini_en, "--to", "kaldi", "--out", env / "kaldi")
    assert code == 0, err
    # spk2gender only when every speaker's gender is known (mini_en's JFK clip has none)
    assert sorted(p.name for p in (env / "kaldi").iterdir()) == [
        "spk2utt",
        "text",
        "utt2dur",
        "utt2spk",
        "wav.scp",
    ]
    code, _, err = cli("import", "kaldi", env / "kaldi", "--id", "back")
    assert code == 0, err
    a, b = load_dataset(mini_en), load_dataset(env / "datasets" / "back")
    key = lambda u: (u.id, u.text, u.extra.get("SPEAKER"), u.duration)  # noqa: E731
    speakers = {u.id: u.extra["SPEAKER"] or u.id for u in a}  # Kaldi needs one: its own ID
    assert sorted(key(u) for u in b) == sorted(
        (u.id, u.text, speakers[u.id], u.duration) for u in a
    )
    utt2dur = dict(line.split() for line in (env / "kaldi" / "utt2dur").read_text().splitlines())
    for u in a:
        info = sf.info(str(mini_en / u.audio))
        assert float(utt2dur[u.id]) == info.frames / info.samplerate  # exact, not 3 decimals


def test_nemo_export_imports_back(env, cli, mini_en) -> None:
    code, _, err = cli("export", mini_en, "--to", "nemo", "--out", env / "nemo")
    assert code == 0, err
    rows = [json.loads(x) for x in (env / "nemo" / "manifest.json").read_text().splitlines()]
    assert len(rows) == 35 and {"audio_filepath", "duration", "text", "utt_id"} <= set(rows[0])
    code, _, err = cli(
        "import", "nemo", env / "nemo" / "manifest.json", "--id", "n", "--audio-root", mini_en
    )
    assert code == 0, err
    a, b = load_dataset(mini_en), load_dataset(env / "datasets" / "n")
    assert sorted((u.id, u.text, u.duration) for u in a) == sorted(
        (u.id, u.text, u.duration) for u in b
    )


def _hf_dataset(shared: Path, folder: Path, duplicate: bool = False) -> Path:
    """A DatasetDict (test + validation) with an Audio column holding the real WAV bytes."""
    import datasets

    # The audio column is stored as {bytes, path} and then typed Audio: exactly what
    # `datasets` saves, without its encoder (which needs torchcodec, absent here).
    struct = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
    feats = datasets.Features(
        {
            "audio": struct,
            "id": datasets.Value("string"),
            "sentence": datasets.Value("string"),
            "gender": datasets.ClassLabel(names=["male", "female"]),
        }
    )
    utts = arctic(shared)
    splits = {}
    for name, part in (("test", utts[:4]), ("validation", utts[4:])):
        rows = {"audio": [], "id": [], "sentence": [], "gender": []}
        for uid, _, text in part:
            wav = shared / "data" / "cmu-arctic-sample" / f"{uid}.wav"
            rows["audio"].append({"bytes": wav.read_bytes(), "path": wav.name})
            rows["id"].append(uid)
            rows["sentence"].append(text)
            rows["gender"].append(1 if "axb" in uid else 0)
        splits[name] = datasets.Dataset.from_dict(rows, features=feats).cast_column(
            "audio", datasets.Audio()
        )
    if duplicate:
        splits["validation"] = datasets.concatenate_datasets(
            [splits["validation"], splits["test"].select([1])]
        )
    dd = datasets.DatasetDict(splits)
    dd.save_to_disk(str(folder))
    return folder


def test_saved_hf_dataset_imports_and_benchmarks(shared, env, cli) -> None:
    from asrbench.benchmark import JobSpec, run_benchmark

    saved = _hf_dataset(shared, env / "hf")
    code, out, err = cli("import", "hf", saved, "--id", "hfset")
    assert code == 0, err
    ds = load_dataset(env / "datasets" / "hfset")
    texts = {uid: text for uid, _, text in arctic(shared)}
    assert {u.id: u.text for u in ds} == texts
    assert {u.id: u.extra["GENDER"] for u in ds if "axb" in u.id} == {
        u: "F" for u in texts if "axb" in u
    }
    for u in ds:
        x, rate = sf.read(str(shared / "data" / "cmu-arctic-sample" / f"{u.id}.wav"))
        assert u.duration == pytest.approx(len(x) / rate, abs=0.0005)
    model = make_fake_model(env / "models", "fake_hf")
    s = run_benchmark(
        model,
        env / "datasets" / "hfset",
        JobSpec(runner="local", results_root=env / "results", cache_root=env / "c", progress=False),
    )
    assert s.metrics is not None and s.metrics.n_utts == 7 and s.metrics.n_ref > 0
    # One split only, and the same data as parquet files (the Hub's layout), through pyarrow.
    code, _, err = cli("import", "hf", saved, "--split", "validation", "--id", "val")
    assert code == 0, err
    assert len(load_dataset(env / "datasets" / "val")) == 3
    import datasets

    pq = env / "parquet" / "data"
    pq.mkdir(parents=True)
    datasets.load_from_disk(str(saved))["test"].to_parquet(str(pq / "test-00000-of-00001.parquet"))
    code, _, err = cli("import", "hf", env / "parquet", "--id", "pq")
    assert code == 0, err
    assert [u.text for u in load_dataset(env / "datasets" / "pq")] == [u.text for u in ds][:4]


def test_duplicate_ids_across_splits_name_both_entries(shared, env, cli) -> None:
    saved = _hf_dataset(shared, env / "hf", duplicate=True)
    code, _, err = cli("import", "hf", saved, "--id", "dup")
    assert code == 2 and "Traceback" not in err
    assert (
        "[validation] row 3: cmu_arctic_us_aew_a0001: ID 'cmu_arctic_us_aew_a0001' already used by"
        in err
        and "[test] row 1" in err
        and "across the whole dataset" in err
    )
    assert not list((env / "datasets").glob("*")), "nothing partial in datasets/"


def test_reference_free_sets_import_and_export_like_any_other(shared, env, cli) -> None:
    from lhotse import load_manifest

    recs, sups = _lhotse_manifests(shared, env / "lh", with_text=False)
    code, _, err = cli(
        "import", "lhotse", "--recordings", recs, "--supervisions", sups, "--id", "free"
    )
    assert code == 0, err
    ds = load_dataset(env / "datasets" / "free")
    assert ds.reference_free and all(u.text == "" for u in ds)
    assert not [p for p in ds.problems if p.code == "empty-text"]
    for fmt in ("lhotse", "nemo", "kaldi"):
        code, _, err = cli("export", env / "datasets" / "free", "--to", fmt, "--out", env / fmt)
        assert code == 0, err
    assert all(s.text is None for s in load_manifest(env / "lhotse" / "supervisions.jsonl.gz"))
    code, _, err = cli(
        "import",
        "nemo",
        env / "nemo" / "manifest.json",
        "--id",
        "free2",
        "--reference-free",
        "--audio-root",
        env / "datasets" / "free",
    )
    assert code == 0, err
    code, _, err = cli("import", "kaldi", env / "kaldi", "--id", "free3", "--reference-free")
    assert code == 0, err
    for d in ("free2", "free3"):
        back = load_dataset(env / "datasets" / d)
        assert back.reference_free and sorted(u.id for u in back) == sorted(u.id for u in ds)


def test_csv_manifest_with_a_column_mapping(shared, env, cli) -> None:
    base = shared / "data" / "cmu-arctic-sample"
    rows = ["clip,words,who,begin,length"]
    for uid, _, text in arctic(shared)[:2]:
        rows.append(f'{uid}.wav,"{text}",{uid.split("_")[-2]},0.25,1.0')
    (env / "m.csv").write_text("\n".join(rows) + "\n")
    maps = [
        "--map",
        "audio=clip",
        "--map",
        "text=words",
        "--map",
        "speaker=who",
        "--map",
        "start=begin",
        "--map",
        "duration=length",
    ]
    code, _, err = cli(
        "import", "manifest", env / "m.csv", "--id", "m", "--audio-root", base, *maps
    )
    assert code == 0, err
    ds = load_dataset(env / "datasets" / "m")
    assert [(u.duration, u.extra["SPEAKER"]) for u in ds] == [(1.0, "arctic"), (1.0, "aew")]
    assert [u.text for u in ds] == [t for _, _, t in arctic(shared)[:2]]
    (env / "bad.csv").write_text(
        rows[0]
        + "\n"
        + rows[1].replace(",", ",", 1).replace(rows[1].split(",")[0], "../../etc/x.wav")
        + "\n"
    )
    code, _, err = cli(
        "import", "manifest", env / "bad.csv", "--id", "b", "--audio-root", base, *maps
    )
    assert code == 2 and "bad.csv:2: '../../etc/x.wav' points outside" in err
    code, _, err = cli("import", "manifest", env / "m.csv", "--id", "c", "--map", "text=nope")
    assert code == 2 and "--map text=nope: no such column" in err
