"""Reading what a model program wrote (contract v1, models/README.md), trusting nothing.

One reader for `hyp.tsv`, `timing.tsv`, `failed.tsv` and `cost.tsv` (API models: `ID<TAB>USD`):
- a line is `ID<TAB>VALUE`; the value is everything after the first tab, and for texts any
  further tab becomes a space (`scoring.io` reads hypothesis files the same way);
- a last line without its newline was torn by a crash: that utterance is not done;
- an ID the program was not given is a contract error: reported, never scored;
- a timing or cost that is NaN, infinite or negative is a contract error: reported, not used;
- an ID written twice with different texts (or both transcribed and failed) is a contract
  error: the utterance counts as failed, with the reason, rather than keeping either line.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from asrbench.results.timed import TIMED_FILE, read_hyp_timed

FILES = ("hyp.tsv", "timing.tsv", "failed.tsv", "cost.tsv")
VALUES = ("timing.tsv", "cost.tsv")  # numbers, not texts: tabs kept


@dataclass
class Records:
    """The per-utterance tables of a run, as dicts keyed by utterance ID."""

    hyp: dict[str, str] = field(default_factory=dict)
    timing: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    cost: dict[str, str] = field(default_factory=dict)  # estimated USD (API models only)
    # optional timed output (timed.py): {"id", "segments", "words"}, times of the audio given
    timed: dict[str, dict] = field(default_factory=dict)

    def done(self) -> set[str]:
        """Utterances with an outcome (transcribed or failed)."""
        return set(self.hyp) | set(self.failed)

    def absorb(self, other: Records) -> int:
        """Merge `other` (a newer attempt); returns how many utterances it newly transcribed.

        A transcription replaces an earlier failure (failures are retried, never served as
        results); a failure never replaces a transcription.
        """
        new = 0
        for uid, text in other.hyp.items():
            if uid not in self.hyp:
                self.hyp[uid] = text
                self.failed.pop(uid, None)
                if uid in other.timing:
                    self.timing[uid] = other.timing[uid]
                if uid in other.cost:
                    self.cost[uid] = other.cost[uid]
                if uid in other.timed:
                    self.timed[uid] = other.timed[uid]
                new += 1
        for uid, why in other.failed.items():
            if uid not in self.hyp:
                self.failed[uid] = why
        return new


def split_line(line: str, text: bool) -> tuple[str, str]:
    """(ID, value) of one `ID<TAB>VALUE` line; for texts, inner tabs become spaces."""
    uid, _, value = line.partition("\t")
    return uid, (" ".join(value.split("\t")) if text else value)


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    data = path.read_text(encoding="utf-8", errors="replace")
    lines = data.split("\n")
    return [ln for ln in lines[:-1] if ln]  # the last piece is torn or empty


def _bad_number(name: str, value: str) -> str | None:
    """Why a timing (processing seconds first) or cost value cannot be used, or None: a
    NaN, infinite or negative number would reach RTF and summary.json (issue 30)."""
    if name not in VALUES:
        return None
    first = value.split("\t")[0]
    try:
        number = float(first)
    except ValueError:
        return None  # unparsable values are counted where they are used (cost_stats)
    if not math.isfinite(number) or number < 0:
        what = "processing time" if name == "timing.tsv" else "cost"
        return f"{what} {first!r} is not a finite non-negative number"
    return None


def read_output(folder: Path, given: Collection[str] | None = None) -> tuple[Records, list[str]]:
    """Records from a result folder, and the contract problems found (one message each)."""
    problems: list[str] = []
    tables: dict[str, dict[str, str]] = {}
    twice: set[str] = set()
    for name in FILES:
        table: dict[str, str] = {}
        for line in _lines(Path(folder) / name):
            uid, value = split_line(line, text=name not in VALUES)
            if given is not None and uid not in given:
                problems.append(
                    f"{name}: ID {uid!r} was not in the wav list given to the program; ignored"
                )
                continue
            bad = _bad_number(name, value)
            if bad:
                problems.append(f"{name}: ID {uid!r}: {bad}; ignored")
                continue
            if uid in table and table[uid] != value:
                problems.append(
                    f"{name}: ID {uid!r} written twice with different values "
                    f"({table[uid]!r}, {value!r}); the utterance counts as failed"
                )
                twice.add(uid)
            table[uid] = value
        tables[name] = table
    rec = Records(tables["hyp.tsv"], tables["timing.tsv"], tables["failed.tsv"], tables["cost.tsv"])
    timed, found = read_hyp_timed(Path(folder) / TIMED_FILE, given)
    problems += found
    rec.timed = {uid: t for uid, t in timed.items() if uid in rec.hyp}
    both = set(rec.hyp) & set(rec.failed)
    for uid in sorted(both):
        problems.append(f"ID {uid!r} is both in hyp.tsv and failed.tsv; it counts as failed")
    for uid in sorted(twice | both):
        reason = rec.failed.get(uid) if uid in both and uid not in twice else None
        rec.hyp.pop(uid, None)
        rec.timing.pop(uid, None)
        rec.cost.pop(uid, None)
        rec.timed.pop(uid, None)
        rec.failed[uid] = "contract error: " + (
            f"transcribed and failed ({reason})" if reason else "written twice with different texts"
        )
    return rec, problems


def given_ids(wav_list: Path) -> set[str] | None:
    """The IDs a program was given (its `wav.lst`); None when the list is gone."""
    if not Path(wav_list).is_file():
        return None
    return {
        ln.partition("\t")[0]
        for ln in Path(wav_list).read_text(encoding="utf-8").splitlines()
        if ln
    }
