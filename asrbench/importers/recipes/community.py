"""Common Voice, FLEURS, VoxPopuli and the Free Spoken Digit Dataset."""

from __future__ import annotations

import ast
import csv
import io
from collections.abc import Iterator
from pathlib import Path

from asrbench.importers.common import ImportProblem, Item, file_loader, read_text_file
from asrbench.importers.commonvoice import import_commonvoice
from asrbench.importers.download import Archive
from asrbench.importers.recipes.base import Recipe, RecipeOptions

COMMONVOICE = Recipe(
    name="commonvoice",
    title="Common Voice",
    base_url="https://commonvoice.mozilla.org",
    archives=lambda o: [Archive(f"cv-corpus-{o.language}.tar.gz")],
    wanted=lambda n, o: (
        f"/{o.language}/" in f"/{n}" and (n.endswith(f"/{o.split}.tsv") or "/clips/" in n)
    ),
    items=lambda root, o: import_commonvoice(root, o.language, o.split),
    marker=lambda o: f"**/{o.language}/{o.split}.tsv",
    licence="CC0 1.0",
    homepage="https://commonvoice.mozilla.org/datasets",
    citation=("R. Ardila et al. Common Voice: a massively-multilingual speech corpus. LREC 2020."),
    needs_from="download the release for your language from commonvoice.mozilla.org/datasets "
    "(free, behind an e-mail form)",
    multilingual=True,
    splits=("test", "dev", "train", "validated", "other", "invalidated"),
    hours="per release and language",
    utterances="per release and language",
    notes="any language (--language, Common Voice's code: en, de, pt, zh-CN...)",
)

HF = "https://huggingface.co/datasets"
_HF_GENDER = {"male": "M", "female": "F"}


def _fleurs_items(root: Path, o: RecipeOptions) -> Iterator[Item]:
    tsv = next(iter(sorted(root.glob(f"**/{o.language}/{o.split}.tsv"))), None)
    if tsv is None:
        raise ImportProblem(f"no data/{o.language}/{o.split}.tsv in the FLEURS copy")
    audio_dir = tsv.parent / "audio" / o.split
    index = {p.name: p for p in root.glob(f"**/{o.split}/*.wav")}
    for lineno, line in enumerate(read_text_file(tsv).splitlines(), start=1):
        if not line.strip():
            continue
        cells = line.split("\t")
        where = f"{tsv}:{lineno}"
        if len(cells) != 7:
            raise ImportProblem(
                f"{where}: {len(cells)} columns; FLEURS rows have 7 (id, file "
                "name, raw transcription, transcription, characters, samples, "
                "gender)"
            )
        _, name, raw, _, _, _, gender = cells
        audio = index.get(name, audio_dir / name)
        yield Item(
            id=Path(name).stem,
            load=file_loader(audio, where),
            key=str(audio),
            text=raw,
            where=where,
            extra={"GENDER": _HF_GENDER.get(gender.lower(), ""), "LANGUAGE": o.language},
        )


FLEURS = Recipe(
    name="fleurs",
    title="FLEURS",
    base_url=f"{HF}/google/fleurs/resolve/main",
    archives=lambda o: [
        Archive(f"data/{o.language}/{o.split}.tsv"),
        Archive(f"data/{o.language}/audio/{o.split}.tar.gz"),
    ],
    wanted=lambda n, o: n.endswith(".wav"),
    items=_fleurs_items,
    marker=lambda o: f"**/{o.language}/{o.split}.tsv",
    licence="CC BY 4.0",
    homepage="https://huggingface.co/datasets/google/fleurs",
    citation=(
        "A. Conneau et al. FLEURS: Few-shot Learning Evaluation of Universal "
        "Representations of Speech. SLT 2022."
    ),
    multilingual=True,
    languages=("en_us",),
    splits=("test", "dev", "train"),
    hours="about 1.8 (en_us test)",
    utterances="647 (en_us test)",
    notes="--language is the FLEURS config (en_us, de_de, cmn_hans_cn...); raw transcription "
    "kept (not the normalised column)",
)


def _voxpopuli_items(root: Path, o: RecipeOptions) -> Iterator[Item]:
    tsv = next(iter(sorted(root.glob(f"**/{o.language}/asr_{o.split}.tsv"))), None)
    if tsv is None:
        raise ImportProblem(f"no data/{o.language}/asr_{o.split}.tsv in the VoxPopuli copy")
    index = {p.stem: p for p in root.glob("**/*.wav")}
    reader = csv.DictReader(
        io.StringIO(read_text_file(tsv), newline=""), delimiter="\t", quoting=csv.QUOTE_NONE
    )
    for lineno, row in enumerate(reader, start=2):
        where = f"{tsv}:{lineno}"
        uid = row.get("id") or ""
        if uid not in index:
            raise ImportProblem(f"{where}: no audio {uid}.wav in the {o.split} archive(s)")
        audio = index[uid]
        yield Item(
            id=uid,
            load=file_loader(audio, where),
            key=str(audio),
            text=row.get("raw_text") or "",
            where=where,
            extra={
                "SPEAKER": row.get("speaker_id") or "",
                "GENDER": _HF_GENDER.get((row.get("gender") or "").lower(), ""),
                "ACCENT": row.get("accent") or "",
                "LANGUAGE": o.language,
            },
        )


VOXPOPULI = Recipe(
    name="voxpopuli",
    title="VoxPopuli (transcribed)",
    base_url=f"{HF}/facebook/voxpopuli/resolve/main",
    archives=lambda o: [
        Archive(f"data/{o.language}/asr_{o.split}.tsv"),
        Archive(f"data/{o.language}/{o.split}/{o.split}_part_0.tar.gz"),
    ],
    wanted=lambda n, o: n.endswith(".wav"),
    items=_voxpopuli_items,
    marker=lambda o: f"**/{o.language}/asr_{o.split}.tsv",
    licence="CC0 1.0",
    homepage="https://github.com/facebookresearch/voxpopuli",
    citation=(
        "C. Wang et al. VoxPopuli: A Large-Scale Multilingual Speech Corpus for "
        "Representation Learning, Semi-Supervised Learning and Interpretation. ACL 2021."
    ),
    multilingual=True,
    splits=("test", "dev", "train"),
    hours="about 4.9 (en test)",
    utterances="1842 (en test)",
    notes="the segmented copy the VoxPopuli authors host on the Hugging Face Hub; raw_text kept",
)

FSDD_TAG = "v1.0.10"
FSDD_DIR = f"free-spoken-digit-dataset-{FSDD_TAG.lstrip('v')}"


def _fsdd_metadata(root: Path) -> dict:
    path = next(iter(root.glob("**/metadata.py")), None)
    if path is None:
        return {}
    tree = ast.parse(read_text_file(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return {}
    return {}


def _fsdd_items(root: Path, o: RecipeOptions) -> Iterator[Item]:
    meta = _fsdd_metadata(root)
    for wav in sorted(root.glob("**/recordings/*.wav")):
        digit, speaker, index = wav.stem.split("_")
        if (int(index) < 5) != (o.split == "test"):  # the README's split: indices 0-4 are test
            continue
        info = meta.get(speaker, {})
        yield Item(
            id=wav.stem,
            load=file_loader(wav, wav.name),
            key=str(wav),
            text=digit,
            where=wav.name,
            extra={
                "SPEAKER": speaker,
                "GENDER": str(info.get("gender", ""))[:1].upper(),
                "ACCENT": str(info.get("accent", "")),
            },
        )


FSDD = Recipe(
    name="fsdd",
    title="Free Spoken Digit Dataset",
    base_url="https://github.com/Jakobovski/free-spoken-digit-dataset",
    archives=lambda o: [Archive(f"archive/refs/tags/{FSDD_TAG}.tar.gz")],
    wanted=lambda n, o: "/recordings/" in n and n.endswith(".wav") or n.endswith("metadata.py"),
    items=_fsdd_items,
    marker=lambda o: "**/recordings/*.wav",
    licence="CC BY-SA 4.0",
    homepage="https://github.com/Jakobovski/free-spoken-digit-dataset",
    citation="Z. Jackson et al. Free Spoken Digit Dataset (FSDD), v1.0.10. Zenodo, 2018.",
    splits=("test", "train"),
    hours="0.04 (test)",
    utterances="300 (test)",
    notes="test = recordings with index 0-4 (the README's split); TEXT is the digit as "
    "labelled (`7`), 8 kHz source audio",
)

RECIPES = [COMMONVOICE, FLEURS, VOXPOPULI, FSDD]
