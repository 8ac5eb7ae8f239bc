"""Per-utterance records and the scorer's readable reports, written into a result folder.

One record schema for `utterances.jsonl` whoever scores (benchmark or `ops/score`): the scorer's
per-utterance counts and alignment plus the raw and normalised texts, the duration when known
and the failure reason when the model failed on that utterance.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from asrbench.fsio import atomic_write_text
from scoring import report as text
from scoring.scorer import ScoreResult

# report name -> (file name, text producer); "utterances" and "summary" are always written
REPORTS = {
    "alignment": ("alignment.txt", lambda r: text.alignment_text(r.utterances)),
    "pra": ("hyp.pra", lambda r: text.pra_text(r.utterances)),
    "sys": ("hyp.sys", text.sys_text),
    "table": ("table.txt", text.table_text),
}


def utterance_lines(result: ScoreResult, refs: Mapping[str, str],
                    hyps: Mapping[str, str | None],
                    durations: Mapping[str, float] | None = None,
                    failed: Mapping[str, str] | None = None) -> Iterator[str]:
    """One JSON line per utterance, in the result's (reference) order."""
    durations = durations or {}
    failed = failed or {}
    for u in result.utterances:
        d = u.to_dict()
        d["ref"] = refs[u.id]
        d["hyp"] = hyps.get(u.id)
        d["ref_norm"] = " ".join(u.ref)
        d["hyp_norm"] = " ".join(u.hyp)
        d["duration"] = durations.get(u.id)
        d["failed"] = failed.get(u.id)
        yield json.dumps(d, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def write_utterances(path: Path, lines: Iterator[str]) -> None:
    atomic_write_text(path, "".join(lines))


def write_reports(out_dir: Path, result: ScoreResult, which: tuple[str, ...] = tuple(REPORTS)
                  ) -> list[str]:
    """Write the named readable reports into `out_dir`; returns their file names."""
    unknown = set(which) - set(REPORTS)
    if unknown:
        from asrbench.errors import InputError

        raise InputError(f"unknown report(s) {sorted(unknown)}; choose from "
                         f"{', '.join(REPORTS)}")
    names = []
    for key in REPORTS:
        if key in which:
            name, produce = REPORTS[key]
            atomic_write_text(Path(out_dir) / name, produce(result))
            names.append(name)
    return names
