"""Where a result cell goes, so that no result is ever replaced by a different or partial one.

    results/<model>/<dataset>/                 the reported result: the full dataset
    results/<model>/<dataset>~sample-<key>/    a sample (--max-utts): stored and shown as such;
                                               <key> names the selection (see sample_key)
    results/<model>/<dataset>~<key>/           another result under the same names whose dataset
                                               content or scorer options differ

A new full result replaces the reported one only when it was computed on the same dataset
content with the same scorer options (a rerun, a newer model image or scorer code); anything
else is stored beside it and the command says so. `--replace` makes a different full result the
reported one (the previous one moves beside it; a variant folder of the new content goes, as it
is now the reported cell). `<key>` is the first 12 hex digits of the
cell's `result_key`. Cells are written into a staging folder and moved into place whole.

A reported cell whose summary.json cannot be read (truncated, an older format, missing while
other files are there) is never replaced: the new result goes beside it and the command says
why. `--replace` moves such a cell aside to `<dataset>~unreadable-<key>/` (key: the first 12 hex
digits of its summary.json's SHA-256), never deletes it.

The model and dataset IDs pass the one ID check (asrbench/ids.py) and every folder this module
names is checked to lie under the results root, whatever a dataset.yaml or a summary says.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from asrbench.fsio import clean_stale, replace_dir
from asrbench.identity import bytes_sha256, digest, short
from asrbench.ids import COMBINE, check_id, inside
from asrbench.results.summary import Summary, SummaryError, read_summary

SEP = "~"


@dataclass(frozen=True)
class Placement:
    """Where a cell was put and why."""

    path: Path
    kind: str  # "reported", "sample" or "variant"
    note: str | None = None
    supersedes: Path | None = None  # a variant of the same content, removed once this is in place


def reported_dir(root: Path, model: str, dataset: str) -> Path:
    """`<root>/<model>/<dataset>`; both IDs pass the one ID check, and the folder (symlinks
    followed) must lie under the results root."""
    for part in model.split(COMBINE):  # `ASR+DIARIZER`: each part is a model ID
        check_id(part, "model ID", "fix the model's model.yaml `id:`")
    check_id(dataset, "dataset ID", "fix `id:` in the dataset's dataset.yaml")
    return inside(root, Path(root) / model / dataset, "result folder")


def sample_key(summary: Summary) -> str:
    """The sample folder's key: the dataset content, the utterances and the user's scorer
    options, not the model, so every model's sample of one selection (`--max-utts N --seed S`)
    lands under the same name and is ranked beside the others (results/ranking.py)."""
    return short(
        digest(
            "sample-cell",
            dataset=summary.dataset_hash,
            selection=summary.selection.ids_sha256,
            scorer_options=summary.scorer.get("options", {}),
        ),
        12,
    )


def _holds_files(folder: Path) -> bool:
    try:
        return any(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return False


def _unreadable_name(reported: Path) -> Path:
    """A free `<dataset>~unreadable-<key>` folder name for a cell whose summary cannot be read."""
    try:
        key = short(bytes_sha256((reported / "summary.json").read_bytes()), 12)
    except OSError:
        key = "nosummary"
    out = reported.with_name(f"{reported.name}{SEP}unreadable-{key}")
    n = 2
    while out.exists():
        out = reported.with_name(f"{reported.name}{SEP}unreadable-{key}-{n}")
        n += 1
    return out


def _same_content(a: Summary, b: Summary) -> bool:
    """The same dataset content scored with the same user options: a rerun, whatever the model
    image or the scorer's code and data files (a newer version of the platform's scorer gives
    the reported result, not a variant of it)."""
    return a.dataset_hash == b.dataset_hash and a.scorer.get("options", {}) == b.scorer.get(
        "options", {}
    )


def place(root: Path, summary: Summary, replace: bool = False) -> tuple[Placement, Path | None]:
    """Decide where a new cell goes: (placement, folder of an old reported cell to move aside)."""
    model, dataset = summary.model or "_", summary.dataset or "_"
    reported = reported_dir(root, model, dataset)
    clean_stale(reported)  # a swap killed half way puts the old cell back before deciding
    key = short(summary.result_key, 12)
    if summary.selection.is_sample:
        n = summary.selection.n_utts
        return Placement(
            reported.with_name(f"{dataset}{SEP}sample-{sample_key(summary)}"),
            "sample",
            f"a sample of {n} of {summary.selection.n_dataset_utts} utterances: "
            "stored as a sample, the reported full result (if any) is kept",
        ), None
    try:
        current = read_summary(reported / "summary.json")
    except SummaryError as exc:
        if not _holds_files(reported):
            return Placement(reported, "reported"), None  # nothing there to protect
        # Unreadable (truncated, an older format): what it holds is unknown, so it is kept.
        if replace:
            aside = _unreadable_name(reported)
            return (
                Placement(
                    reported,
                    "reported",
                    f"replaces the reported cell, whose summary.json is unreadable "
                    f"({exc}); that cell was moved, whole, to {aside.name}",
                ),
                aside,
            )
        mine = reported.with_name(f"{dataset}{SEP}{key}")
        return Placement(
            mine,
            "variant",
            f"the reported cell {reported} has an unreadable summary.json ({exc}); "
            f"it is kept as it is and this result is stored beside it as "
            f"{mine.name}; inspect that cell, then rerun with --replace to report "
            "this one (the old cell is moved aside, never deleted)",
        ), None
    if _same_content(current, summary) or current.selection.is_sample:
        return Placement(reported, "reported"), None
    if replace:
        old_key = short(current.result_key, 12)
        mine = reported.with_name(f"{dataset}{SEP}{key}")
        return (
            Placement(
                reported,
                "reported",
                f"replaces the reported result, moved to {dataset}{SEP}{old_key}",
                supersedes=mine if mine.exists() else None,
            ),
            reported.with_name(f"{dataset}{SEP}{old_key}"),
        )
    why = (
        "dataset content differs"
        if current.dataset_hash != summary.dataset_hash
        else "scorer options differ"
    )
    return Placement(
        reported.with_name(f"{dataset}{SEP}{key}"),
        "variant",
        f"{why} from the reported result in {reported} (dataset hash "
        f"{current.dataset_hash}); stored beside it, the leaderboard keeps "
        "reporting the earlier one; rerun with --replace to report this one",
    ), None


def commit(staging: Path, placement: Placement, displaced: Path | None = None) -> Path:
    """Move a fully written staging folder into place; an old cell there is swapped out."""
    target = placement.path
    replace_dir(staging, target, keep_old=displaced if target.exists() else None)
    if placement.supersedes is not None and placement.supersedes != target:
        shutil.rmtree(placement.supersedes, ignore_errors=True)  # now the reported cell
    return target
