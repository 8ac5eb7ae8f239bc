"""Earnings-21 / Earnings-22 as fstalign scores them: the NLP references, their sidecars and
the published system outputs, copied from a checkout of Rev's `speech-datasets` (or its
extracted branch archive) into a folder `ops/score` reads as it is.

Text only: the audio is the `earnings21` / `earnings22` recipes' (`ops/import earnings21`,
downloaded, so only where the user is online; a git checkout holds no MP3 without Git LFS).
Layout written (Rev's own names, one file per call, ID = file name up to the first dot):

    OUT/references/ID.nlp        transcripts/nlp_references
    OUT/normalizations/ID.norm.json
    OUT/wer_tags/ID.wer_tag.json   (Earnings-21 only: Earnings-22 publishes none)
    OUT/output/SYSTEM/ID.nlp     Earnings-21's seven systems (`--systems`)
    OUT/README.md                source, licence (CC BY-SA 4.0) and the commands to score

Every file is read with `scoring.nlp` before it is copied, so a malformed line fails here,
naming the source file and line, not later in `ops/score`; a time column that is not a number
(Earnings-21's 4346923 has one) is copied as it is and reported (`ops/score --lenient`).
"""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

from asrbench.errors import InputError
from asrbench.fsio import atomic_write_text, replace_dir, stage_dir
from scoring.errors import ScoringError
from scoring.nlp import read_nlp, read_norm_sidecar, read_wer_tags

CORPORA = ("earnings21", "earnings22")
LICENCE = "CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/), (c) Rev.com"
_README = """# {corpus}: NLP references for ops/score

Copied from Rev's speech-datasets ({source}), `{corpus}/`: {n} calls{systems}.
Licence: {licence}; cite {cite}.

    ops/score {out}/references SYSTEM_OUTPUTS/ --norm {out}/normalizations{wer} -o OUT
"""
_CITES = {
    "earnings21": "Del Rio et al., Earnings-21: A Practical Benchmark for ASR in the Wild, "
    "Interspeech 2021",
    "earnings22": "Del Rio et al., Earnings-22: A Practical Benchmark for Accents in the Wild, "
    "arXiv:2203.15591",
}


SIDECARS = (  # transcripts/FOLDER/ID.SUFFIX, as Rev names them
    ("normalizations", ".norm.json", read_norm_sidecar),
    ("wer_tags", ".wer_tag.json", read_wer_tags),
)
_BLOCK_KEYS = {"normalizations": "norm", "wer_tags": "wer_tags"}  # dataset.yaml `nlp:` keys


def dataset_nlp(source: Path, corpus: str, dest: Path, ids: list[str]) -> dict:
    """The `earnings21` / `earnings22` recipes' `nlp:` block (docs/DATASETS.md): the NLP
    references and the sidecars of the rows `ids` (whole calls) copied, each read first, into
    `dest/nlp/` (references, normalizations, wer_tags: a kind only where every call has
    one), and dataset.yaml's keys naming them; `lenient`: Rev's sidecars name a few entities
    their reference lacks (Earnings-21 4320211, 4341191), warnings in the cell's `entities`.
    No block ({}) when a row has no `ID.nlp` (a call cut into timed speaker turns)."""
    root = _corpus_root(Path(source), corpus) / "transcripts"
    refs = [root / "nlp_references" / f"{i}.nlp" for i in ids]
    if not ids or not all(p.is_file() for p in refs):
        return {}
    read = partial(read_nlp, warnings=[])
    block: dict[str, object] = {"references": "nlp/references"}
    for ref in refs:
        _copy_checked(ref, dest / "nlp" / "references" / ref.name, read)
    for folder, suffix, reader in SIDECARS:
        found = [root / folder / f"{i}{suffix}" for i in ids]
        if all(p.is_file() for p in found):
            for p in found:
                _copy_checked(p, dest / "nlp" / folder / p.name, reader)
            block[_BLOCK_KEYS[folder]] = f"nlp/{folder}"
    return {"nlp": {**block, "lenient": True}}


def _corpus_root(source: Path, corpus: str) -> Path:
    """`corpus/` inside a checkout, an extracted archive (one folder deeper), or itself."""
    for cand in (source / corpus, *source.glob(f"*/{corpus}"), source):
        if (cand / "transcripts" / "nlp_references").is_dir():
            return cand
    raise InputError(
        f"--from {source}: no {corpus}/transcripts/nlp_references inside; give a checkout of "
        "https://github.com/revdotcom/speech-datasets or its extracted branch archive"
    )


def _copy_checked(src: Path, dest: Path, read) -> None:
    try:
        read(src)
    except ScoringError as exc:
        raise InputError(str(exc)) from None
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def _systems(root: Path, stage: Path, ids: set[str], read) -> list[str]:
    """Earnings-21's system outputs (`output/**/ID.nlp`): SYSTEM is the path below output/
    without its trailing `nlp` folder (rev/espnet, kaldi_org/librispeech, google)."""
    names = []
    for nlp in sorted((root / "output").glob("**/*.nlp")):
        parts = nlp.parent.relative_to(root / "output").parts
        system = "/".join(p for p in parts if p != "nlp")
        if nlp.name.split(".", 1)[0] not in ids:
            continue
        _copy_checked(nlp, stage / "output" / system / nlp.name, read)
        names.append(system)
    return sorted(set(names))


def import_earnings_nlp(
    source: Path, corpus: str, out: Path, systems: bool = False, force: bool = False
) -> dict:
    """Copy the corpus's NLP references and sidecars (and system outputs) into `out`; returns
    what was written: calls, sidecars, systems, and the warnings of lenient reading."""
    if corpus not in CORPORA:
        raise InputError(f"--corpus {corpus!r}: give one of {', '.join(CORPORA)}")
    if out.exists() and not force:
        raise InputError(f"{out} exists; pass --force to replace it")
    root = _corpus_root(Path(source), corpus)
    refs = sorted((root / "transcripts" / "nlp_references").glob("*.nlp"))
    ids = {p.name.split(".", 1)[0] for p in refs}
    warnings: list[str] = []
    read = partial(read_nlp, warnings=warnings)
    stage = stage_dir(out)
    for ref in refs:
        _copy_checked(ref, stage / "references" / ref.name, read)
    counts = {}
    for folder, suffix, reader in SIDECARS:
        found = [root / "transcripts" / folder / f"{i}{suffix}" for i in sorted(ids)]
        found = [p for p in found if p.is_file()]
        for p in found:
            _copy_checked(p, stage / folder / p.name, reader)
        counts[folder] = len(found)
    names = _systems(root, stage, ids, read) if systems else []
    readme = _README.format(
        corpus=corpus,
        source=source,
        n=len(refs),
        systems=f", with the outputs of {', '.join(names)}" if names else "",
        licence=LICENCE,
        cite=_CITES[corpus],
        out=out,
        wer=f" --wer-tags {out}/wer_tags" if counts["wer_tags"] else "",
    )
    atomic_write_text(stage / "README.md", readme)
    replace_dir(stage, out)
    return {"calls": len(refs), **counts, "systems": names, "warnings": warnings}
