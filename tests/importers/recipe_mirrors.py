"""Builders of `file://` mirrors in each recipe's native archive layout, from real audio in
../shared/data (LibriSpeech, CMU ARCTIC, LJSpeech, FSDD, JFK). Each returns the mirror's base
folder, the --checksum options for its archives (computed here) and what the import must give:
{utterance ID: (duration in s, text)}."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import soundfile as sf

RATE = 16000


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tar_gz(path: Path, files: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def zip_file(path: Path, files: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def encode(samples: np.ndarray, rate: int, fmt: str, subtype: str | None = None) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, samples, rate, format=fmt, subtype=subtype)
    return buf.getvalue()


def audio(path: Path) -> tuple[np.ndarray, int]:
    return sf.read(str(path), dtype="float32")


def transcripts(tsv: Path) -> dict[str, str]:
    lines = tsv.read_text(encoding="utf-8").splitlines()[1:]
    return {ln.split("\t")[0]: ln.split("\t")[-1] for ln in lines}


def arctic(shared: Path) -> list[tuple[str, np.ndarray, str]]:
    """The 7 CMU ARCTIC utterances at 16 kHz: (ID, samples, text)."""
    base = shared / "data" / "cmu-arctic-sample"
    texts = transcripts(base / "transcripts.tsv")
    out = []
    for uid, text in sorted(texts.items()):
        x, rate = audio(base / f"{uid}.wav")
        assert rate == RATE
        out.append((uid, x, text))
    return out


def long_recording(parts: list[np.ndarray], gap_s: float = 0.5) -> tuple[np.ndarray, list]:
    """Real utterances joined by silence: (recording, [(start, end)] of each part in s)."""
    gap = np.zeros(int(gap_s * RATE), dtype=np.float32)
    pieces, times, t = [gap], [], gap_s
    for p in parts:
        times.append((round(t, 3), round(t + len(p) / RATE, 3)))
        pieces += [p, gap]
        t += (len(p) + len(gap)) / RATE
    return np.concatenate(pieces), times


def _mirror(base: Path, archives: dict[str, Path]) -> list[str]:
    return [f"{p.name}=sha256:{sha256(p)}" for p in archives.values()]


def librispeech(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    src = shared / "data" / "librispeech-test-clean-sample" / "LibriSpeech"
    files, expect = {}, {}
    for f in sorted(src.rglob("*")):
        if f.is_file():
            files[f"LibriSpeech/{f.relative_to(src)}"] = f.read_bytes()
    speakers = shared / "data" / "librispeech-gender" / "librispeech_test-other" / "SPEAKERS.TXT"
    files["LibriSpeech/SPEAKERS.TXT"] = speakers.read_bytes()
    for trans in src.rglob("*.trans.txt"):
        for line in trans.read_text().splitlines():
            uid, _, text = line.partition(" ")
            info = sf.info(str(trans.parent / f"{uid}.flac"))
            expect[uid] = (info.frames / info.samplerate, text)
    arc = tar_gz(root / "resources" / "12" / "test-clean.tar.gz", files)
    return root, _mirror(root, {"a": arc}), expect


def tedlium(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    utts = arctic(shared)[:3]
    rec, times = long_recording([x for _, x, _ in utts])
    d = "TEDLIUM_release-3/legacy/test"
    stm = [
        f"TalkOne_2020 1 TalkOne_2020 {t0:.2f} {t1:.2f} <o,f0,male> {text}"
        for (t0, t1), (_, _, text) in zip(times, utts, strict=True)
    ]
    stm.insert(
        1,
        f"TalkOne_2020 1 inter_segment_gap {times[0][1]:.2f} {times[1][0]:.2f} "
        "<o,f0,male> ignore_time_segment_in_scoring",
    )
    files = {
        f"{d}/sph/TalkOne_2020.sph": encode(rec, RATE, "NIST", "PCM_16"),
        f"{d}/stm/TalkOne_2020.stm": ("\n".join(stm) + "\n").encode(),
        "TEDLIUM_release-3/data/ignored.txt": b"not extracted",
    }
    arc = tar_gz(root / "resources" / "51" / "TEDLIUM_release-3.tgz", files)
    expect = {
        f"TalkOne_2020-{round(float(f'{t0:.2f}') * 100):07d}-"
        f"{round(float(f'{t1:.2f}') * 100):07d}": (round(t1, 2) - round(t0, 2), text)
        for (t0, t1), (_, _, text) in zip(times, utts, strict=True)
    }
    return root, _mirror(root, {"a": arc}), expect


def commonvoice(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    utts = arctic(shared)
    rows = ["client_id\tpath\tsentence\tup_votes\tdown_votes\tage\tgender\taccents\tlocale"]
    files, expect = {}, {}
    for i, (uid, x, text) in enumerate(utts):
        name = f"common_voice_en_{1000 + i}.mp3"
        data = encode(x, RATE, "MP3")
        files[f"cv-corpus-99.0-2030-01-01/en/clips/{name}"] = data
        rows.append(
            f"spk{uid.split('_')[-2] if 'us' in uid else 'x'}\t{name}\t{text}\t2\t0\t"
            f"twenties\tmale_masculine\tUnited States English\ten"
        )
        expect[name[:-4]] = (sf.info(io.BytesIO(data)).frames / RATE, text)
    files["cv-corpus-99.0-2030-01-01/en/test.tsv"] = ("\n".join(rows) + "\n").encode()
    arc = tar_gz(root / "cv-corpus-99.0-2030-01-01-en.tar.gz", files)
    return arc, [f"cv-corpus-en.tar.gz=sha256:{sha256(arc)}"], expect


def fleurs(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    base = shared / "data" / "ljspeech-sample"
    texts = transcripts(base / "transcripts.tsv")
    rows, files, expect = [], {}, {}
    for i, (uid, text) in enumerate(sorted(texts.items())[:4]):
        x, rate = audio(base / "wavs" / f"{uid}.flac")
        name = f"{9000 + i}.wav"
        files[f"test/{name}"] = encode(x, rate, "WAV", "PCM_16")
        rows.append(f"{i}\t{name}\t{text}\t{text.lower()}\t|c|h|a|r|s|\t{len(x)}\tFEMALE")
        expect[str(9000 + i)] = (len(x) / rate, text)
    lang = root / "data" / "en_us"
    lang.mkdir(parents=True)
    (lang / "test.tsv").write_text("\n".join(rows) + "\n")
    arc = tar_gz(lang / "audio" / "test.tar.gz", files)
    return root, _mirror(root, {"t": lang / "test.tsv", "a": arc}), expect


def voxpopuli(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    utts = arctic(shared)[3:]
    rows = ["id\traw_text\tnormalized_text\tgender\tspeaker_id\tis_gold_transcript\taccent"]
    files, expect = {}, {}
    for i, (_uid, x, text) in enumerate(utts):
        vid = f"20180101-0900-PLENARY-{i}_en"
        files[f"test_part_0/{vid}.wav"] = encode(x, RATE, "WAV", "PCM_16")
        rows.append(f"{vid}\t{text}\t{text.lower()}\tfemale\t{4000 + i}\tTrue\tNone")
        expect[vid] = (len(x) / RATE, text)
    lang = root / "data" / "en"
    lang.mkdir(parents=True)
    (lang / "asr_test.tsv").write_text("\n".join(rows) + "\n")
    arc = tar_gz(lang / "test" / "test_part_0.tar.gz", files)
    return root, _mirror(root, {"t": lang / "asr_test.tsv", "a": arc}), expect


def fsdd(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    src = shared / "data" / "fsdd"
    files, expect = {}, {}
    top = "free-spoken-digit-dataset-1.0.10"
    for wav in sorted((src / "recordings").glob("*_jackson_*.wav")):
        digit, _, index = wav.stem.split("_")
        if int(index) >= 8:
            continue
        files[f"{top}/recordings/{wav.name}"] = wav.read_bytes()
        if int(index) < 5:
            info = sf.info(str(wav))
            expect[wav.stem] = (info.frames / info.samplerate, digit)
    files[f"{top}/metadata.py"] = (src / "metadata.py").read_bytes()
    files[f"{top}/README.md"] = b"not extracted"
    arc = tar_gz(root / "archive" / "refs" / "tags" / "v1.0.10.tar.gz", files)
    return root, _mirror(root, {"a": arc}), expect


AMI_WORDS = (
    '<?xml version="1.0"?>\n<nite:root xmlns:nite="http://nite.sourceforge.net/">{}\n</nite:root>\n'
)


def ami(shared: Path, root: Path, mix: bool = False) -> tuple[Path, list[str], dict]:
    """Meeting ES2004a: headset 0 (agent A) and 1 (agent B) carry real speech; 2 and 3 silence.
    With `mix`, each meeting's one Mix-Headset recording (the headsets summed) instead."""
    utts = arctic(shared)
    meetings = [
        f'<meeting observation="{m}">'
        '<speaker nxt_agent="A" channel="0" global_name="MEE001"/>'
        '<speaker nxt_agent="B" channel="1" global_name="FEE002"/>'
        '<speaker nxt_agent="C" channel="2" global_name="MEE003"/>'
        '<speaker nxt_agent="D" channel="3" global_name="MEE004"/></meeting>'
        for m in ["ES2004a"]
    ]
    ann = {
        "corpusResources/meetings.xml": (
            f'<?xml version="1.0"?>\n<meetings>{"".join(meetings)}</meetings>\n'.encode()
        )
    }
    expect, recs = {}, {}
    for agent, ch, spk, part in (("A", 0, "MEE001", utts[:2]), ("B", 1, "FEE002", utts[2:4])):
        rec, times = long_recording([x for _, x, _ in part])
        recs[ch] = rec
        words, segs, n = [], [], 0
        for (t0, t1), (_, _, text) in zip(times, part, strict=True):
            tokens = text.replace(",", " ,").replace(".", " .").split()
            step = (t1 - t0) / len(tokens)
            for k, tok in enumerate(tokens):
                punc = ' punc="true"' if tok in ",." else ""
                words.append(
                    f'<w nite:id="ES2004a.{agent}.words{n}" '
                    f'starttime="{t0 + k * step:.3f}" '
                    f'endtime="{t0 + (k + 1) * step:.3f}"{punc}>{tok}</w>'
                )
                n += 1
            segs.append(
                f'<segment nite:id="ES2004a.sync.{len(segs)}" transcriber_start="{t0}" '
                f'transcriber_end="{t1}"/>'
            )
            tag = "MIX" if mix else f"H{ch:02d}"
            uid = f"AMI_ES2004a_{tag}_{spk}_{round(t0 * 100):07d}_{round(t1 * 100):07d}"
            expect[uid] = (t1 - t0, text)
        ann[f"words/ES2004a.{agent}.words.xml"] = AMI_WORDS.format("".join(words)).encode()
        ann[f"segments/ES2004a.{agent}.segments.xml"] = AMI_WORDS.format("".join(segs)).encode()
    ann["words/ES2002a.A.words.xml"] = b"<not a test meeting, not extracted>"
    arcs = {"ann": zip_file(root / "AMICorpusAnnotations" / "ami_public_manual_1.6.2.zip", ann)}
    length = max(len(r) for r in recs.values())
    from asrbench.importers.recipes.meetings import AMI_TEST

    for m in AMI_TEST:  # every test meeting's 4 headsets (or its mix) must exist in a mirror
        heads = []
        for ch in range(4):
            x = recs.get(ch) if m == "ES2004a" else None
            x = np.zeros(length, dtype=np.float32) if x is None else np.pad(x, (0, length - len(x)))
            heads.append(x if m == "ES2004a" else x[:RATE])
        for name, x in (
            [(f"{m}.Mix-Headset.wav", sum(heads))]
            if mix
            else [(f"{m}.Headset-{ch}.wav", x) for ch, x in enumerate(heads)]
        ):
            p = root / "AMICorpusMirror" / "amicorpus" / m / "audio" / name
            p.parent.mkdir(parents=True, exist_ok=True)
            sf.write(p, x, RATE, subtype="PCM_16")
            arcs[p.name] = p
    return root, _mirror(root, arcs), expect


def ami_mix(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    return ami(shared, root, mix=True)


def gigaspeech(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    utts = arctic(shared)[:4]
    rec, times = long_recording([x for _, x, _ in utts])
    segs, expect = [], {}
    for i, ((t0, t1), (_, _, text)) in enumerate(zip(times, utts, strict=True)):
        sid = f"POD0000000001_S{i:07d}"
        tn = text.upper().replace(",", " <COMMA>").replace(".", " <PERIOD>")
        segs.append(
            {
                "sid": sid,
                "begin_time": t0,
                "end_time": t1,
                "text_tn": tn,
                "subsets": ["{TEST}"] if i < 3 else ["{XL}"],
            }
        )
        if i < 3:
            expect[sid] = (t1 - t0, tn)
    meta = {
        "audios": [
            {
                "aid": "POD0000000001",
                "path": "audio/podcast/P0000/POD0000000001.opus",
                "source": "podcast",
                "category": "Education",
                "segments": segs,
            }
        ]
    }
    files = {
        "GigaSpeech/GigaSpeech.json": json.dumps(meta).encode(),
        "GigaSpeech/audio/podcast/P0000/POD0000000001.opus": encode(rec, RATE, "OGG", "OPUS"),
    }
    arc = tar_gz(root / "GigaSpeech.tar.gz", files)
    return arc, [f"GigaSpeech.tar.gz=sha256:{sha256(arc)}"], expect


def earnings21(shared: Path, root: Path) -> tuple[Path, list[str], dict]:
    """Call 4320211 (JFK, no token times: one long-form utterance) and call 4330115 (ARCTIC
    utterances with token times: cut into speaker turns)."""
    jfk, rate = audio(shared / "data" / "jfk" / "jfk.flac")
    jfk_text = (shared / "data" / "jfk" / "transcripts.tsv").read_text().splitlines()[1]
    jfk_text = jfk_text.split("\t")[-1]
    head = "token|speaker|ts|endTs|punctuation|case|tags|wer_tags"
    nlp1 = [head] + [
        f"{t.rstrip(',.;!?')}|0|||{t[-1] if t[-1] in ',.;!?' else ''}|LC|[]|[]"
        for t in jfk_text.split()
    ]
    utts = arctic(shared)[:2]
    rec, times = long_recording([x for _, x, _ in utts])
    nlp2, expect = [head], {}
    for spk, ((t0, t1), (_, _, text)) in enumerate(zip(times, utts, strict=True)):
        tokens = text.split()
        step = (t1 - t0) / len(tokens)
        for k, tok in enumerate(tokens):
            p = tok[-1] if tok[-1] in ",.;!?" else ""
            nlp2.append(
                f"{tok.rstrip(',.;!?')}|{spk}|{t0 + k * step:.3f}|"
                f"{t0 + (k + 1) * step:.3f}|{p}|LC|[]|[]"
            )
        expect[f"4330115_{spk:04d}"] = (
            float(f"{t0 + len(tokens) * step:.3f}") - float(f"{t0:.3f}"),
            text,
        )
    top = "speech-datasets-main/earnings21"
    calls = ("4320211", "4330115")
    mp3 = {n: encode(x, r, "MP3") for n, x, r in (("4320211", jfk, rate), ("4330115", rec, RATE))}
    expect["4320211"] = (sf.info(io.BytesIO(mp3["4320211"])).frames / rate, jfk_text)
    files = {
        f"{top}/media/4320211.mp3": mp3["4320211"],
        f"{top}/media/4330115.mp3": mp3["4330115"],
        f"{top}/transcripts/nlp_references/4320211.nlp": ("\n".join(nlp1) + "\n").encode(),
        f"{top}/transcripts/nlp_references/4330115.nlp": ("\n".join(nlp2) + "\n").encode(),
        # sidecars (no entity tagged here): the recipe's `nlp:` block copies them
        **{f"{top}/transcripts/normalizations/{c}.norm.json": b"{}" for c in calls},
        **{f"{top}/transcripts/wer_tags/{c}.wer_tag.json": b"{}" for c in calls},
        "speech-datasets-main/earnings22/README.md": b"not extracted",
    }
    arc = zip_file(root / "archive" / "refs" / "heads" / "main.zip", files)
    return root, _mirror(root, {"a": arc}), expect


BUILDERS = {
    "librispeech-test-clean": librispeech,
    "tedlium3-test": tedlium,
    "commonvoice": commonvoice,
    "fleurs": fleurs,
    "voxpopuli": voxpopuli,
    "fsdd": fsdd,
    "ami-ihm-test": ami,
    "ami-mix-test": ami_mix,
    "gigaspeech-test": gigaspeech,
    "earnings21": earnings21,
}
