"""LibriSpeech test-clean/test-other and TED-LIUM 3 test (OpenSLR 12 and 51)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from asrbench.importers.common import ImportProblem, Item, file_loader, read_text_file
from asrbench.importers.download import Archive
from asrbench.importers.recipes.base import Recipe, RecipeOptions
from scoring.errors import ScoringError
from scoring.timed import is_ignored, read_stm

OPENSLR = "https://www.openslr.org"
# md5: OpenSLR's listing for SLR12 (openslr.org/12); sha256: torchaudio.datasets.librispeech.
LIBRISPEECH = {
    "test-clean": (
        "32fa31d27d2e1cad72775fee3f4849a9",
        "39fde525e59672dc6d1551919b1478f724438a95aa55f874b576be21967e6c23",
    ),
    "test-other": (
        "fb5a50374b501bb3bac4815ee91d3135",
        "d09c181bba5cf717b3dee7d4d592af11a3ee3a09e08ae025c5506f6ebe961c29",
    ),
}
LIBRISPEECH_CITATION = (
    "V. Panayotov, G. Chen, D. Povey, S. Khudanpur. LibriSpeech: an ASR corpus "
    "based on public domain audio books. ICASSP 2015."
)


def _speakers(root: Path) -> dict[str, str]:
    path = root / "LibriSpeech" / "SPEAKERS.TXT"
    out = {}
    if path.is_file():
        for line in read_text_file(path).splitlines():
            if line.startswith(";") or "|" not in line:
                continue
            cells = [c.strip() for c in line.split("|")]
            out[cells[0]] = cells[1].upper()
    return out


def librispeech_items(split: str):
    def items(root: Path, options: RecipeOptions) -> Iterator[Item]:
        genders = _speakers(root)
        for trans in sorted((root / "LibriSpeech" / split).glob("*/*/*.trans.txt")):
            for lineno, line in enumerate(read_text_file(trans).splitlines(), start=1):
                if not line.strip():
                    continue
                uid, _, text = line.partition(" ")
                audio = trans.parent / f"{uid}.flac"
                where = f"{trans.name}:{lineno}"
                spk = uid.split("-")[0]
                yield Item(
                    id=uid,
                    load=file_loader(audio, where),
                    key=str(audio),
                    text=text,
                    where=where,
                    extra={"SPEAKER": spk, "GENDER": genders.get(spk, "")},
                )

    return items


def librispeech(split: str, hours: str, utts: str) -> Recipe:
    md5, sha = LIBRISPEECH[split]
    return Recipe(
        name=f"librispeech-{split}",
        title=f"LibriSpeech {split}",
        base_url=OPENSLR,
        archives=lambda o: [
            Archive(
                f"resources/12/{split}.tar.gz",
                md5=md5,
                sha256=sha,
                checksum_source="md5: openslr.org/12; sha256: torchaudio",
            )
        ],
        wanted=lambda n, o: (
            n.startswith(f"LibriSpeech/{split}/")
            or n in ("LibriSpeech/SPEAKERS.TXT", "LibriSpeech/LICENSE.TXT")
        ),
        items=librispeech_items(split),
        marker=lambda o: f"LibriSpeech/{split}/*/*/*.trans.txt",
        licence="CC BY 4.0",
        citation=LIBRISPEECH_CITATION,
        homepage="https://www.openslr.org/12",
        hours=hours,
        utterances=utts,
    )


TEDLIUM_CITATION = (
    "F. Hernandez, V. Nguyen, S. Ghannay, N. Tomashenko, Y. Esteve. TED-LIUM 3: "
    "twice as much data and corpus repartition for experiments on speaker "
    "adaptation. SPECOM 2018."
)
TEDLIUM_DIR = "TEDLIUM_release-3/legacy/test"


def parse_stm(path: Path) -> Iterator[tuple[int, str, str, float, float, str, str]]:
    """(line, recording, speaker, start, end, label, text) of each scored STM segment: the one
    STM reader (`scoring.timed.read_stm`) and sclite's rule for the segments it does not score
    (`scoring.timed.is_ignored`: `ignore_time_segment_in_scoring` in any case)."""
    try:
        segments = read_stm(path)
    except ScoringError as exc:
        raise ImportProblem(str(exc)) from None
    for seg in segments:
        if not is_ignored(seg):
            yield (
                seg.line,
                seg.session_id,
                seg.speaker,
                seg.start_time,
                seg.end_time,
                seg.label,
                seg.words,
            )


def tedlium_items(root: Path, options: RecipeOptions) -> Iterator[Item]:
    base = root / TEDLIUM_DIR
    for stm in sorted((base / "stm").glob("*.stm")):
        sph = base / "sph" / f"{stm.stem}.sph"
        for lineno, rec, spk, t0, t1, label, text in parse_stm(stm):
            where = f"{stm.name}:{lineno}"
            gender = "F" if "female" in label else "M" if "male" in label else ""
            yield Item(
                id=f"{rec}-{round(t0 * 100):07d}-{round(t1 * 100):07d}",
                load=file_loader(sph, where),
                key=str(sph),
                text=text,
                start=t0,
                end=t1,
                where=where,
                extra={"SPEAKER": spk, "GENDER": gender},
            )


TEDLIUM3 = Recipe(
    name="tedlium3-test",
    title="TED-LIUM 3 test (legacy)",
    base_url=OPENSLR,
    archives=lambda o: [
        Archive(
            "resources/51/TEDLIUM_release-3.tgz",
            sha256="ad1e454d14d1ad550bc2564c462d87c7a7ec83d4dc2b9210f22ab4973b9eccdb",
            checksum_source="torchaudio.datasets.tedlium",
        )
    ],
    wanted=lambda n, o: n.startswith(TEDLIUM_DIR + "/"),
    items=tedlium_items,
    marker=lambda o: f"{TEDLIUM_DIR}/stm/*.stm",
    licence="CC BY-NC-ND 3.0",
    citation=TEDLIUM_CITATION,
    homepage="https://www.openslr.org/51",
    hours="2.6",
    utterances="1155",
    notes="segmented by the STM files; `ignore_time_segment_in_scoring` segments are skipped",
)

RECIPES = [
    librispeech("test-clean", "5.4", "2620"),
    librispeech("test-other", "5.1", "2939"),
    TEDLIUM3,
]
