"""Per-utterance records and the scorer's readable reports, written into a result folder.

One record schema for `utterances.jsonl` whoever scores (benchmark or `ops/score`): the scorer's
per-utterance counts and alignment plus the raw and normalised texts, the duration when known
and the failure reason when the model failed on that utterance. `utterance_record` defines it;
`utterance_lines` writes the same JSON text without building the objects (tested equal). The
record of a cell that was not scored (a reference-free dataset: `unscored_lines`) and the
`secret_in_hyp` flag (`flagged_lines`) are written here too: this module is the one serialiser
of `utterances.jsonl`.

The texts come from `scoring.report`; every file is written here, atomically.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from json.encoder import encode_basestring  # what json.dumps(ensure_ascii=False) escapes with
from pathlib import Path
from typing import Any

from asrbench.errors import InputError
from asrbench.fsio import atomic_file, atomic_write_text
from scoring import report as text
from scoring.metrics import UtteranceResult
from scoring.scorer import ScoreResult

try:  # the same lines built in C (scoring/_fast.pyx); where it was not built, Python's below
    import scoring._fast as _fast
except ImportError:  # pragma: no cover - an install without a C compiler
    _fast = None

# report name -> file name; "utterances" and "summary" are always written
REPORTS = {"alignment": "alignment.txt", "pra": "hyp.pra", "sys": "hyp.sys", "table": "table.txt"}
# alignment.txt and hyp.pra hold every utterance's alignment (about 400 bytes an utterance):
# `ops/score` writes them only when asked; the light ones are its default.
HEAVY = ("alignment", "pra")
LIGHT = ("sys", "table")
_LINES_PER_WRITE = 1024  # utterances.jsonl lines a write (~1.3 MB with 25-word utterances)
# utterance_lines builds its lines in C (scoring/_fast.pyx) where it is built; False: the
# Python writer (the same text: tests/results/test_utterance_lines.py runs both)
COMPILED = _fast is not None
# Lines a compiled call builds: it holds the GIL throughout, and ops/score's bootstrap thread
# waits for it between its numpy calls (128 lines: well under a millisecond)
_COMPILED_LINES = 128


def parse_reports(spec: str) -> tuple[str, ...]:
    """`--reports` value: comma-separated names, `all` or `none`; unknown names are an error."""
    spec = spec.strip()
    if spec == "none":
        return ()
    if spec == "all":
        return tuple(REPORTS)
    which = tuple(r.strip() for r in spec.split(",") if r.strip())
    unknown = sorted(set(which) - set(REPORTS))
    if unknown:
        raise InputError(
            f"unknown report(s) {unknown}; choose from {', '.join(REPORTS)}, all or none"
        )
    return which


def utterance_record(
    u: UtteranceResult,
    ref: str,
    hyp: str | None,
    duration: float | None = None,
    failed: str | None = None,
) -> dict[str, Any]:
    """The `utterances.jsonl` record of one utterance (the schema; docs/RESULTS.md)."""
    d = u.to_dict()
    d["ref"] = ref
    d["hyp"] = hyp
    d["ref_norm"] = u.ref_norm  # optional words keep their parentheses, as sclite reads them
    d["hyp_norm"] = u.hyp_norm
    d["duration"] = duration
    d["failed"] = failed
    return d


class _Encoded(dict):
    """Token -> its JSON string, computed once per distinct token."""

    def __missing__(self, key: str) -> str:
        out = self[key] = encode_basestring(key)
        return out


class _Correct(dict):
    """Token -> the JSON of a correct column `["C", tok, tok]`, once per distinct token."""

    def __init__(self, enc: _Encoded) -> None:
        super().__init__()
        self.enc = enc

    def __missing__(self, key: str | None) -> str:
        if key is None:  # an insertion column, overwritten by the caller
            return ""
        e = self.enc[key]
        out = self[key] = f'["C", {e}, {e}]'
        return out


class _Rates(dict):
    """(errors, |ref|, max(|ref|, |hyp|)) -> the JSON of TER and mTER: the same floats as
    UtteranceResult.ter / .mter, as json.dumps writes them (repr), once per distinct triple
    (a corpus has a few hundred to a few thousand of them)."""

    def __missing__(self, key: tuple[int, int, int]) -> tuple[str, str]:
        errors, n_ref, denom = key
        ter = repr(errors / n_ref) if n_ref else "null"
        out = self[key] = (ter, repr(errors / denom if denom else 0.0))
        return out


def _value(x: Any) -> str:
    if x is None:
        return "null"
    if type(x) is str:
        return encode_basestring(x)
    return json.dumps(x, ensure_ascii=False, allow_nan=False)


def utterance_lines(
    result: ScoreResult | Sequence[UtteranceResult],
    refs: Mapping[str, str],
    hyps: Mapping[str, str | None],
    durations: Mapping[str, float] | None = None,
    failed: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """One JSON line per utterance of `result` (or of these utterances), in their order.

    Byte for byte `json.dumps(utterance_record(...), sort_keys=True, ensure_ascii=False)`,
    written directly: in C where scoring/_fast.pyx is built (`COMPILED`; about half the
    Python loop's CPU), else by `_python_lines`. Either is several times faster than building
    and dumping dicts.
    """
    durations = durations or {}
    failed = failed or {}
    utts = result.utterances if isinstance(result, ScoreResult) else result
    if not (COMPILED and _fast is not None):
        yield from _python_lines(utts, refs, hyps, durations, failed)
        return
    for start in range(0, len(utts), _COMPILED_LINES):
        batch = list(utts[start : start + _COMPILED_LINES])
        try:
            yield from _fast.utterance_lines(batch, refs, hyps, durations, failed, _value)
        except (UnicodeEncodeError, TypeError):
            # A lone surrogate (fails as before, when the file is encoded), or a field not of
            # the type the C reads (a tuple of tokens): Python's lines, or Python's own error.
            yield from _python_lines(batch, refs, hyps, durations, failed)


def _python_lines(
    utts: Sequence[UtteranceResult],
    refs: Mapping[str, str],
    hyps: Mapping[str, str | None],
    durations: Mapping[str, float],
    failed: Mapping[str, str],
) -> Iterator[str]:
    """`utterance_lines` in Python: token strings are escaped once per distinct token and a
    correct column's JSON is reused."""
    enc = _Encoded()
    correct = _Correct(enc).__getitem__
    dump = encode_basestring
    rates = _Rates()
    for u in utts:
        ref, hyp = u.ref, u.hyp
        n_ref, n_hyp = len(ref), len(hyp)
        errors = u.sub + u.ins + u.dele
        if not errors and "O" not in u.codes and "o" not in u.codes:
            ops = ", ".join(map(correct, ref))
        else:
            # Every reference token as a correct column, then the edits (rare) in column
            # order: each insertion adds its column, so cells[p] is column p when p is reached.
            # An omitted optional word (O) is a column without a hypothesis token, as D.
            # (A plain loop over the ~25 codes costs less than a regex match object an edit.)
            cells = list(map(correct, ref))
            n_del = n_ins = 0
            p = -1
            for op in u.codes:
                p += 1
                if op == "C":
                    continue
                if op == "S":
                    cells[p] = f'["S", {enc[ref[p - n_ins]]}, {enc[hyp[p - n_del]]}]'
                elif op == "D" or op == "O":
                    cells[p] = f'["{op}", {enc[ref[p - n_ins]]}, null]'
                    n_del += 1
                elif op == "I" or op == "o":  # o: an optional hyp word left out (exact sclite mode)
                    cells.insert(p, f'["{op}", null, {enc[hyp[p - n_del]]}]')
                    n_ins += 1
            ops = ", ".join(cells)
        alts = (
            ", ".join(
                f'{{"chosen": {dump(c)}, "hyp_end": {b}, "hyp_start": {a}, "written": {dump(w)}}}'
                for a, b, c, w in u.alternatives
            )
            if u.alternatives
            else ""
        )
        ter, mter = rates[errors, n_ref, n_ref if n_ref > n_hyp else n_hyp]
        key = u.id
        raw_ref, raw_hyp = refs[key], hyps.get(key)
        # A text already in normal form (common for hypotheses) is escaped once.
        ref_norm, hyp_norm = u.ref_norm, " ".join(hyp)
        ref_norm_json = dump(ref_norm)
        hyp_norm_json = dump(hyp_norm)
        ref_json = ref_norm_json if raw_ref == ref_norm else dump(raw_ref)
        if raw_hyp is None:
            hyp_json = "null"
        else:
            hyp_json = hyp_norm_json if raw_hyp == hyp_norm else dump(raw_hyp)
        yield (
            f'{{"alternatives": [{alts}], "cor": {u.cor}, "del": {u.dele}, '
            f'"duration": {_value(durations.get(key)) if durations else "null"}, '
            f'"failed": {_value(failed.get(key)) if failed else "null"}, '
            f'"hyp": {hyp_json}, "hyp_norm": {hyp_norm_json}, "id": {dump(key)}, '
            f'"ins": {u.ins}, "missing": {"true" if u.missing else "false"}, "mter": {mter}, '
            f'"n_hyp": {n_hyp}, "n_ref": {n_ref}, "ops": [{ops}], "ref": {ref_json}, '
            f'"ref_norm": {ref_norm_json}, "sub": {u.sub}, "ter": {ter}}}\n'
        )


def _dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"


def unscored_lines(
    utts: Iterable[tuple[str, float | None]],
    hyps: Mapping[str, str],
    failed: Mapping[str, str],
) -> Iterator[str]:
    """The `utterances.jsonl` lines of a cell nothing was scored in (no reference): each
    (ID, duration) with its hypothesis and failure reason, null where there is none."""
    for uid, duration in utts:
        yield _dumps(
            {"id": uid, "hyp": hyps.get(uid), "duration": duration, "failed": failed.get(uid)}
        )


def flagged_lines(lines: Iterable[str], hits: Mapping[str, list[str]]) -> Iterator[str]:
    """`utterances.jsonl` lines, with `secret_in_hyp` (the secrets' NAMES) on those in `hits`."""
    for line in lines:
        if hits:
            record = json.loads(line)
            if record["id"] in hits:
                record["secret_in_hyp"] = hits[record["id"]]
                line = _dumps(record)
        yield line


def write_utterances(path: Path, lines: Iterable[str]) -> None:
    """Write `utterances.jsonl` atomically, `_LINES_PER_WRITE` lines at a time: the file as one
    text would be tens of MB allocated twice (the text, then its UTF-8 bytes), where a chunk's
    memory is reused by the next."""
    it = iter(lines)
    with atomic_file(path) as f:
        while chunk := "".join(islice(it, _LINES_PER_WRITE)):
            f.write(chunk.encode("utf-8"))


def write_reports(
    out_dir: Path, result: ScoreResult, which: tuple[str, ...] = tuple(REPORTS)
) -> list[str]:
    """Write the named readable reports into `out_dir`; returns their file names.

    alignment.txt and hyp.pra come from one layout pass over the utterances.
    """
    unknown = set(which) - set(REPORTS)
    if unknown:
        raise InputError(f"unknown report(s) {sorted(unknown)}; choose from {', '.join(REPORTS)}")
    texts = text.layout_texts(result.utterances, [k for k in HEAVY if k in which])
    if "sys" in which:
        texts["sys"] = text.sys_text(result.metrics)
    if "table" in which:
        texts["table"] = text.table_text(result.metrics)
    names = []
    for key, name in REPORTS.items():
        if key in texts:
            atomic_write_text(Path(out_dir) / name, texts[key])
            names.append(name)
    return names
