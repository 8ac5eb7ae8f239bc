"""Speaker groups from a metadata column: who is in which group, the units resampled and
relabelled, and the groups too small to trust (reported and flagged, never dropped).

A group is a value of any metadata column (GENDER, ACCENT, LANGUAGE, SPEAKER or another label).
Units of resampling are speakers (the SPEAKER column) when the dataset has one, utterances
otherwise; an utterance with an empty SPEAKER is a speaker of its own (and said so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from asrbench.errors import InputError
from asrbench.fairness.stats import Units

SPEAKER = "SPEAKER"
MIN_SPEAKERS = 3
MIN_UTTS = 20


@dataclass(frozen=True)
class Row:
    """One utterance as far as grouping is concerned."""

    id: str
    label: str
    speaker: str | None  # None: the dataset has no speaker column


@dataclass(frozen=True)
class Grouping:
    """Utterances (labelled ones, in dataset order) with their group and units."""

    dataset: str
    column: str
    names: list[str]
    ids: list[str]
    group: np.ndarray  # (N,) group index of each utterance
    boot_unit: np.ndarray  # (N,) index of the utterance's bootstrap unit (speaker in a group)
    boot: Units
    perm_unit: np.ndarray  # (N,) index of the utterance's permutation unit
    perm: Units
    unit_kind: str  # "speaker" or "utterance"
    info: list[dict]
    unlabelled: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def n_groups(self) -> int:
        return len(self.names)

    def index(self, name: str, option: str = "group") -> int:
        if name not in self.names:
            raise InputError(
                f"{option} {name!r} is not a value of {self.column} in dataset "
                f"{self.dataset}; its values: {', '.join(self.names)}"
            )
        return self.names.index(name)

    def boot_sums(self, values: np.ndarray) -> np.ndarray:
        """Per-utterance values (N, ...) summed into bootstrap units."""
        return unit_sums(values, self.boot_unit, len(self.boot.group))

    def perm_sums(self, values: np.ndarray) -> np.ndarray:
        """Per-utterance values (N, ...) summed into permutation units."""
        return unit_sums(values, self.perm_unit, len(self.perm.group))

    def restricted(self, keep: np.ndarray) -> Grouping:
        """The same groups and units on a subset of the utterances (a boolean mask)."""
        keep = np.asarray(keep, dtype=bool)
        return Grouping(
            self.dataset,
            self.column,
            self.names,
            [i for i, k in zip(self.ids, keep, strict=True) if k],
            self.group[keep],
            self.boot_unit[keep],
            self.boot,
            self.perm_unit[keep],
            self.perm,
            self.unit_kind,
            self.info,
            self.unlabelled,
            self.warnings,
        )


def unit_sums(values: np.ndarray, unit: np.ndarray, n_units: int) -> np.ndarray:
    vals = np.asarray(values, dtype=np.float64)
    flat = vals.reshape(len(vals), -1)
    out = np.zeros((n_units, flat.shape[1]))
    for j in range(flat.shape[1]):
        out[:, j] = np.bincount(unit, weights=flat[:, j], minlength=n_units)
    return out.reshape((n_units,) + vals.shape[1:])


def rows_from(
    utterances: Sequence,
    column: str,
    dataset: str,
    columns: Sequence[str],
    cluster: str | None = SPEAKER,
) -> list[Row]:
    """Grouping rows from dataset utterances (`Utterance` objects); a missing column is an
    input error naming the column, the dataset and the columns it has."""
    if column in ("ID", "AUDIO", "DURATION", "TEXT"):
        raise InputError(
            f"--by {column}: that column is not a group label; name a metadata "
            "column such as GENDER, ACCENT, LANGUAGE or SPEAKER"
        )
    if column not in columns:
        extra = [c for c in columns if c not in ("ID", "AUDIO", "DURATION", "TEXT")]
        raise InputError(
            f"dataset {dataset} has no column {column!r}; its metadata columns: "
            f"{', '.join(extra) or '(none besides ID AUDIO DURATION TEXT)'}"
        )
    if cluster is not None and cluster not in columns:
        if cluster != SPEAKER:
            raise InputError(f"dataset {dataset} has no column {cluster!r} for --cluster")
        cluster = None
    return [
        Row(
            u.id,
            u.extra.get(column, "").strip(),
            None if cluster is None else u.extra.get(cluster, "").strip(),
        )
        for u in utterances
    ]


def make_grouping(
    rows: Sequence[Row],
    column: str,
    dataset: str,
    min_speakers: int = MIN_SPEAKERS,
    min_utts: int = MIN_UTTS,
) -> Grouping:
    """Group the labelled rows; flag small groups; say what is unusual, in one line each."""
    warnings: list[str] = []
    unlabelled = [r.id for r in rows if not r.label]
    kept = [r for r in rows if r.label]
    if unlabelled:
        eg = ", ".join(unlabelled[:3]) + (", ..." if len(unlabelled) > 3 else "")
        warnings.append(
            f"{len(unlabelled)} utterance(s) of {dataset} have no {column} value "
            f"({eg}): left out of every {column} group"
        )
    names = sorted({r.label for r in kept})
    if len(names) < 2:
        raise InputError(
            f"column {column} of dataset {dataset} has "
            f"{'no value' if not names else 'a single value ' + repr(names[0])}"
            " among the utterances analysed: nothing to compare; choose another "
            "--by column"
        )
    has_speakers = bool(kept) and kept[0].speaker is not None
    gidx = {n: i for i, n in enumerate(names)}
    group = np.array([gidx[r.label] for r in kept], dtype=np.int64)
    if has_speakers:
        no_spk = [r.id for r in kept if not r.speaker]
        if no_spk:
            warnings.append(
                f"{len(no_spk)} utterance(s) of {dataset} have no SPEAKER value "
                f"({', '.join(no_spk[:3])}{', ...' if len(no_spk) > 3 else ''}): "
                "each counts as a speaker of its own"
            )
        spk = [r.speaker or f"utt:{r.id}" for r in kept]
    else:
        spk = [r.id for r in kept]
    # Bootstrap units: a speaker within a group (a speaker with two labels is two clusters).
    keys = list(dict.fromkeys(zip(spk, group.tolist(), strict=True)))
    kidx = {k: i for i, k in enumerate(keys)}
    boot_unit = np.array([kidx[(s, g)] for s, g in zip(spk, group.tolist(), strict=True)])
    boot = Units(
        np.array([g for _, g in keys], dtype=np.int64),
        len(names),
        "speaker" if has_speakers else "utterance",
    )
    labels_of: dict[str, set[int]] = {}
    for s, g in zip(spk, group.tolist(), strict=True):
        labels_of.setdefault(s, set()).add(g)
    mixed = sorted(s for s, gs in labels_of.items() if len(gs) > 1)
    if has_speakers and not mixed:
        perm_unit, perm = boot_unit, boot
    else:
        perm_unit = np.arange(len(kept))
        perm = Units(group.copy(), len(names), "utterance")
        if mixed:
            warnings.append(
                f"{column} varies within {len(mixed)} speaker(s) of {dataset} "
                f"({', '.join(mixed[:3])}{', ...' if len(mixed) > 3 else ''}): permutation "
                "tests relabel utterances, not speakers, and ignore speaker clustering (their "
                "p-values can be too small); intervals still resample speakers"
            )
    info = []
    for g, name in enumerate(names):
        n_utts = int(np.count_nonzero(group == g))
        n_spk = len({s for s, gg in zip(spk, group.tolist(), strict=True) if gg == g})
        reasons = []
        if has_speakers and n_spk < min_speakers:
            reasons.append(f"{n_spk} speaker(s) < {min_speakers}")
        if n_utts < min_utts:
            reasons.append(f"{n_utts} utterance(s) < {min_utts}")
        info.append(
            {
                "group": name,
                "n_speakers": n_spk if has_speakers else None,
                "n_utts": n_utts,
                "small": bool(reasons),
                "small_reasons": reasons,
            }
        )
        if reasons:
            what = (
                f"{n_spk} speaker{'s' if n_spk != 1 else ''}, {n_utts} utterances"
                if has_speakers
                else f"{n_utts} utterances"
            )
            extra = (
                "; with one speaker its between-speaker interval is undefined"
                if has_speakers and n_spk == 1
                else ""
            )
            warnings.append(
                f"group {name!r} of {column} in {dataset} is small ({what}; "
                f"minimum {min_speakers} speakers and {min_utts} utterances): "
                f"reported and flagged{extra}"
            )
    return Grouping(
        dataset,
        column,
        names,
        [r.id for r in kept],
        group,
        boot_unit,
        boot,
        perm_unit,
        perm,
        "speaker" if has_speakers else "utterance",
        info,
        unlabelled,
        warnings,
    )
