"""Long recordings cut by their official segmentation: AMI (IHM, Mix-Headset), GigaSpeech,
Earnings-21/22.

Each also imports as a long-form dataset (`ops/import <recipe> --longform`): the same items
regrouped into whole sessions (an AMI meeting's four headsets summed, an Earnings call, a
GigaSpeech audio) with the official segments as the references (asrbench.importers.longform).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from asrbench.importers.common import ImportProblem, Item, file_loader, read_text_file
from asrbench.importers.download import Archive
from asrbench.importers.recipes.base import Recipe, RecipeOptions

# --- AMI, individual headset microphones, full-corpus-ASR test partition ----------------------

AMI_TEST = [f"{s}{x}" for s in ("ES2004", "IS1009", "TS3003", "EN2002") for x in "abcd"]
AMI_ANNOTATIONS = "AMICorpusAnnotations/ami_public_manual_1.6.2.zip"
_NITE_ID = "{http://nite.sourceforge.net/}id"


def _ami_archives(o: RecipeOptions) -> list[Archive]:
    wavs = [
        Archive(f"AMICorpusMirror/amicorpus/{m}/audio/{m}.Headset-{ch}.wav")
        for m in AMI_TEST
        for ch in range(4)
    ]
    return [Archive(AMI_ANNOTATIONS), *wavs]


def _ami_mix_archives(o: RecipeOptions) -> list[Archive]:
    mixes = [Archive(f"AMICorpusMirror/amicorpus/{m}/audio/{m}.Mix-Headset.wav") for m in AMI_TEST]
    return [Archive(AMI_ANNOTATIONS), *mixes]


def _ami_wanted(name: str, o: RecipeOptions) -> bool:
    if name.endswith("corpusResources/meetings.xml"):
        return True
    stem = name.rsplit("/", 1)[-1]
    return stem.split(".")[0] in AMI_TEST and stem.endswith((".words.xml", ".segments.xml"))


def _xml(path: Path) -> ET.Element:
    try:
        return ET.fromstring(read_text_file(path))
    except ET.ParseError as exc:
        raise ImportProblem(f"{path}: not valid XML ({exc})") from None


def _attr(el: ET.Element, name: str, path: Path) -> str:
    """An attribute the AMI annotations always carry; a file without it is named, not a crash."""
    value = el.get(name)
    if value is None:
        raise ImportProblem(f"{path}: a <{el.tag}> element lacks its {name} attribute")
    return value


def _headset(root: Path, meeting: str, channel: int) -> tuple[Path, str]:
    """A speaker's own headset recording, and the tag its utterance IDs carry."""
    wav = next(
        iter(root.glob(f"**/{meeting}/audio/{meeting}.Headset-{channel}.wav")),
        root / f"{meeting}.Headset-{channel}.wav",
    )
    return wav, f"H{channel:02d}"


def _mix(root: Path, meeting: str, channel: int) -> tuple[Path, str]:
    """The meeting's Mix-Headset recording (every headset in one file), whoever speaks."""
    wav = next(
        iter(root.glob(f"**/{meeting}/audio/{meeting}.Mix-Headset.wav")),
        root / f"{meeting}.Mix-Headset.wav",
    )
    return wav, "MIX"


def _ami_items(root: Path, o: RecipeOptions, audio=_headset) -> Iterator[Item]:
    """The manual segments with their words (by time), cut from `audio(root, meeting, channel)`."""
    meetings = next(iter(root.glob("**/corpusResources/meetings.xml")), None)
    if meetings is None:
        raise ImportProblem("AMI annotations: corpusResources/meetings.xml not found")
    agents = {}
    for entry in _xml(meetings):
        for spk in entry:
            agents[(entry.get("observation"), spk.get("nxt_agent"))] = (
                _attr(spk, "global_name", meetings),
                int(_attr(spk, "channel", meetings)),
            )
    ann = meetings.parent.parent
    for seg_file in sorted((ann / "segments").glob("*.segments.xml")):
        meeting, agent = seg_file.name.split(".")[:2]
        if meeting not in AMI_TEST or (meeting, agent) not in agents:
            continue
        speaker, channel = agents[(meeting, agent)]
        words = []
        word_file = ann / "words" / f"{meeting}.{agent}.words.xml"
        for w in _xml(word_file) if word_file.is_file() else []:
            if w.tag == "w" and w.get("starttime") and w.text:
                words.append(
                    (
                        float(_attr(w, "starttime", word_file)),
                        float(_attr(w, "endtime", word_file)),
                        w.text,
                        w.get("punc") == "true",
                    )
                )
        wav, tag = audio(root, meeting, channel)
        for seg in _xml(seg_file):
            t0 = float(_attr(seg, "transcriber_start", seg_file))
            t1 = float(_attr(seg, "transcriber_end", seg_file))
            text = ""
            for ws, we, token, punc in words:
                if t0 <= (ws + we) / 2 < t1:
                    text += token if punc or not text else f" {token}"
            if not text:
                continue
            where = f"{seg_file.name} {seg.get(_NITE_ID, '')}".strip()
            yield Item(
                id=f"AMI_{meeting}_{tag}_{speaker}_{round(t0 * 100):07d}_{round(t1 * 100):07d}",
                load=file_loader(wav, where),
                key=str(wav),
                text=text,
                start=t0,
                end=t1,
                where=where,
                extra={"SPEAKER": speaker, "MEETING": meeting},
            )


AMI = Recipe(
    name="ami-ihm-test",
    title="AMI Meeting Corpus, IHM, test",
    base_url="https://groups.inf.ed.ac.uk/ami",
    archives=_ami_archives,
    wanted=_ami_wanted,
    items=_ami_items,
    marker=lambda o: "**/corpusResources/meetings.xml",
    licence="CC BY 4.0",
    homepage="https://groups.inf.ed.ac.uk/ami/corpus/",
    citation=("J. Carletta et al. The AMI Meeting Corpus: A Pre-Announcement. MLMI 2005."),
    hours="8.7",
    utterances="about 12,600 (manual segments with words)",
    notes="16 meetings (ES2004, IS1009, TS3003, EN2002 a-d), 4 headsets each; cut by the "
    "manual segments (transcriber_start/end) of annotations 1.6.2, words by time",
)

AMI_MIX = replace(
    AMI,
    name="ami-mix-test",
    title="AMI Meeting Corpus, Mix-Headset, test",
    archives=_ami_mix_archives,
    items=lambda root, o: _ami_items(root, o, _mix),
    notes="16 meetings (ES2004, IS1009, TS3003, EN2002 a-d), the Mix-Headset recording of "
    "each (the headsets mixed: the diarization benchmarks' AMI); manual segments with their "
    "words (annotations 1.6.2); --longform gives whole meetings with speaker turns (SegLST; "
    "ops/export --to rttm)",
)

# --- GigaSpeech test (SpeechColab) -------------------------------------------------------------


def _gigaspeech_items(root: Path, o: RecipeOptions) -> Iterator[Item]:
    meta = next(iter(sorted(root.glob("**/GigaSpeech.json"))), None)
    if meta is None:
        raise ImportProblem("GigaSpeech.json not found")
    try:
        data = json.loads(read_text_file(meta))
    except json.JSONDecodeError as exc:
        raise ImportProblem(f"{meta}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    tag = "{" + o.split.upper() + "}"
    for audio in data.get("audios", []):
        path = meta.parent / audio["path"]
        for seg in audio.get("segments", []):
            if tag not in seg.get("subsets", []):
                continue
            where = f"{meta.name} {seg['sid']}"
            yield Item(
                id=seg["sid"],
                load=file_loader(path, where),
                key=str(path),
                text=seg.get("text_tn", ""),
                start=float(seg["begin_time"]),
                end=float(seg["end_time"]),
                where=where,
                extra={"SOURCE": audio.get("source", ""), "CATEGORY": audio.get("category", "")},
            )


GIGASPEECH = Recipe(
    name="gigaspeech-test",
    title="GigaSpeech test",
    base_url="https://github.com/SpeechColab/GigaSpeech",
    archives=lambda o: [Archive("GigaSpeech.tar.gz")],
    wanted=lambda n, o: n.endswith("GigaSpeech.json") or "/audio/" in f"/{n}",
    items=_gigaspeech_items,
    marker=lambda o: "**/GigaSpeech.json",
    splits=("test", "dev"),
    licence="Apache 2.0 (metadata); audio for non-commercial research, see the agreement",
    homepage="https://github.com/SpeechColab/GigaSpeech",
    citation=(
        "G. Chen et al. GigaSpeech: An Evolving, Multi-domain ASR Corpus with 10,000 Hours "
        "of Transcribed Audio. Interspeech 2021."
    ),
    needs_from="sign SpeechColab's agreement and fetch the audio and GigaSpeech.json with their "
    "toolkit (utils/download_gigaspeech.sh; decrypted)",
    hours="40.4",
    utterances="25,619",
    notes="segments tagged {TEST} in GigaSpeech.json; text_tn kept with its <COMMA>/<PERIOD> and "
    "garbage tags (the scorer's job)",
)

# --- Earnings-21 / Earnings-22 (Rev) -----------------------------------------------------------

REV = "https://github.com/revdotcom/speech-datasets"


def parse_nlp(path: Path) -> list[dict]:
    """Rows of a Rev .nlp file (token|speaker|ts|endTs|punctuation|case|tags|wer_tags)."""
    lines = read_text_file(path).splitlines()
    if not lines or not lines[0].startswith("token|speaker"):
        raise ImportProblem(f"{path}:1: not an .nlp file (header token|speaker|ts|endTs|...)")
    head = lines[0].split("|")
    return [dict(zip(head, line.split("|"), strict=False)) for line in lines[1:] if line]


def _turns(rows: list[dict]) -> list[tuple[str, float | None, float | None, str]]:
    """Speaker turns: (speaker, start, end, text with the published punctuation)."""
    out: list[list] = []
    for r in rows:
        token = r["token"] + (r.get("punctuation") or "")
        ts = float(r["ts"]) if r.get("ts") else None
        te = float(r["endTs"]) if r.get("endTs") else None
        if out and out[-1][0] == r["speaker"]:
            out[-1][2] = te if te is not None else out[-1][2]
            out[-1][3] += " " + token
        else:
            out.append([r["speaker"], ts, te, token])
    return [tuple(t) for t in out]


def _earnings_items(corpus: str):
    def items(root: Path, o: RecipeOptions) -> Iterator[Item]:
        base = next(iter(root.glob(f"**/{corpus}/transcripts/nlp_references")), None)
        if base is None:
            raise ImportProblem(f"{corpus}/transcripts/nlp_references not found")
        media = base.parent.parent / "media"
        for nlp in sorted(base.glob("*.nlp")):
            audio = media / f"{nlp.stem}.mp3"
            rows = parse_nlp(nlp)
            turns = _turns(rows)
            timed = all(t[1] is not None and t[2] is not None for t in turns)
            if not timed:  # the published files carry no token times: the call is one utterance
                yield Item(
                    id=nlp.stem,
                    load=file_loader(audio, nlp.name),
                    key=str(audio),
                    text=" ".join(t[3] for t in turns),
                    where=nlp.name,
                    extra={"SPEAKER": ""},
                )
                continue
            for i, (spk, t0, t1, text) in enumerate(turns):
                where = f"{nlp.name} turn {i + 1}"
                yield Item(
                    id=f"{nlp.stem}_{i:04d}",
                    load=file_loader(audio, where),
                    key=str(audio),
                    text=text,
                    start=t0,
                    end=t1,
                    where=where,
                    extra={"SPEAKER": f"{nlp.stem}_{spk}"},
                )

    return items


_EARNINGS_TEXT = ("nlp_references", "normalizations", "wer_tags")  # transcripts/ extracted


def _earnings_nlp(corpus: str) -> Callable[[Path, Path, list[str]], dict]:
    def sidecars(root: Path, dest: Path, ids: list[str]) -> dict:
        from asrbench.importers.earnings_nlp import dataset_nlp

        return dataset_nlp(root, corpus, dest, ids)

    return sidecars


def _earnings(corpus: str, title: str, hours: str, utts: str, cite: str) -> Recipe:
    return Recipe(
        name=corpus,
        title=title,
        base_url=REV,
        archives=lambda o: [Archive("archive/refs/heads/main.zip")],
        wanted=lambda n, o: (
            f"/{corpus}/media/" in n
            or any(f"/{corpus}/transcripts/{k}/" in n for k in _EARNINGS_TEXT)
        ),
        items=_earnings_items(corpus),
        marker=lambda o: f"**/{corpus}/transcripts/nlp_references",
        licence="CC BY-SA 4.0",
        homepage=f"{REV}/tree/main/{corpus}",
        citation=cite,
        hours=hours,
        utterances=utts,
        notes="speaker turns when the .nlp tokens carry times; else one long-form utterance per "
        "call (the published files have no token times), with dataset.yaml's `nlp:` block",
        sidecars=_earnings_nlp(corpus),
    )


EARNINGS21 = _earnings(
    "earnings21",
    "Earnings-21",
    "39.3",
    "44 calls",
    "M. Del Rio et al. Earnings-21: A Practical Benchmark for ASR in the Wild. Interspeech 2021.",
)
EARNINGS22 = _earnings(
    "earnings22",
    "Earnings-22",
    "119",
    "125 calls",
    "M. Del Rio et al. Earnings-22: A Practical Benchmark for Accents in the "
    "Wild. arXiv:2203.15591, 2022.",
)

RECIPES = [AMI, AMI_MIX, GIGASPEECH, EARNINGS21, EARNINGS22]
LONGFORM_RECIPES = frozenset(r.name for r in RECIPES)  # `--longform`: whole sessions + segments
