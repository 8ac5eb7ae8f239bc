"""Reports: the text producers against a plain per-column layout, utterances.jsonl against
json.dumps of its schema, and the files the platform writes (determinism, widths, identity)."""

from __future__ import annotations

import hashlib
import json
import random
import unicodedata
from pathlib import Path

import pytest

from asrbench.results import reports
from asrbench.results.reports import (
    REPORTS,
    utterance_lines,
    utterance_record,
    write_reports,
    write_utterances,
)
from scoring import Scorer, ScorerConfig
from scoring.metrics import UtteranceResult
from scoring.report import alignment_text, columns, layout_texts, pra_text, sys_text, table_text

# Texts that exercise every layout path: contractions and DAE forms (HYP# rows), case, wide and
# combining characters, ß (upper() changes its width), symbols, quotes and backslashes (JSON).
REFS = {
    "u1": "I am going to tell the storyteller",
    "u2": "hello",
    "u3": "",
    "u4": "Straße café naïve ß",
    "u5": "我爱北京天安门 OK",
    "u6": 'say "quote" and back\\slash 😀 emoji',
    "u7": "it is ok I am fine",
    "u8": "colour of the centre",
    "u9": "tab\tinside",
}
HYPS = {
    "u1": "I'm gonna tell a story-teller",
    "u3": "oops extra",
    "u4": "strasse cafe ß ß naïve",
    "u5": "我爱南京 天安门 ok",
    "u6": "say quote and back slash 😀",
    "u7": "it's okay i'm fine",
    "u8": "color of the center",
    "u9": "",
}


# --- an independent oracle: the plain per-column layout these producers replaced -----------
def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _rows(u: UtteranceResult, upper: bool) -> list[tuple[str, list[str]]]:
    alt_cols = {j for a, b, _, _ in u.alternatives for j in range(a, b)}
    ref_row, hyp_row, mark_row, edit_row = [], [], [], []
    for j_hyp, (op, r, h) in _hyp_index(u):
        if upper and op != "C":
            r = r.upper() if r is not None else None
            h = h.upper() if h is not None else None
        ref_row.append(r if r is not None else "*" * _width(h))
        hyp_row.append(h if h is not None else "*" * _width(r))
        mark_row.append("#" if j_hyp is not None and j_hyp in alt_cols else "")
        edit_row.append("" if op == "C" else op)
    rows = [("REF", ref_row), ("HYP", hyp_row)]
    if any(mark_row) and not upper:
        rows.append(("HYP#", mark_row))
    rows.append(("Eval" if upper else "EDIT", edit_row))
    return rows


def _hyp_index(u: UtteranceResult) -> list[tuple[int | None, tuple]]:
    out, j = [], 0
    for op in u.ops:
        out.append((None if op[0] == "D" else j, op))
        j += op[0] != "D"
    return out


def _lines(rows: list[tuple[str, list[str]]]) -> list[str]:
    widths = [max(_width(row[c]) for _, row in rows) for c in range(len(rows[0][1]))]

    def pad(row: list[str]) -> str:
        cells = zip(row, widths, strict=True)
        return " ".join(cell + " " * (w - _width(cell)) for cell, w in cells)

    return [((label + ":").ljust(6) + pad(row)).rstrip() for label, row in rows]


def _oracle_alignment(utts: list[UtteranceResult]) -> str:
    out = []
    for u in utts:
        ter = "undefined" if u.ter is None else f"{u.ter:.4f}"
        out += [
            f"id: {u.id}",
            f"counts: C={u.cor} S={u.sub} D={u.dele} I={u.ins} TER={ter} "
            f"mTER={u.mter:.4f}" + ("  (hypothesis missing)" if u.missing else ""),
        ]
        if u.codes:
            out += _lines(_rows(u, upper=False))
        out += [f"ALT: {w!r} -> {c!r}" for _, _, c, w in u.alternatives] + [""]
    return "\n".join(out)


def _oracle_pra(utts: list[UtteranceResult]) -> str:
    out = []
    for u in utts:
        out += [f"id: ({u.id})", f"Scores: (#C #S #D #I) {u.cor} {u.sub} {u.dele} {u.ins}"]
        if u.codes:
            out += _lines(_rows(u, upper=True))
        out.append("")
    return "\n".join(out)


def _random_corpus(seed: int, n: int = 300) -> tuple[dict[str, str], dict[str, str]]:
    rng = random.Random(seed)
    vocab = [
        "the",
        "cat",
        "i'm",
        "i",
        "am",
        "gonna",
        "going",
        "to",
        "ok",
        "okay",
        "Straße",
        "北京",
        "café",
        "a-b",
        "x",
        "colour",
        "uh",
    ]
    refs = {f"r{i}": " ".join(rng.choices(vocab, k=rng.randint(0, 9))) for i in range(n)}
    hyps = {
        k: " ".join(rng.choices(vocab, k=rng.randint(0, 9))) for k in refs if rng.random() > 0.1
    }
    return refs, hyps


@pytest.mark.parametrize("seed", [0, 1])
def test_layout_matches_plain_per_column_layout(scorer: Scorer, seed: int) -> None:
    for refs, hyps in ((REFS, HYPS), _random_corpus(seed)):
        utts = scorer.score(refs, hyps).utterances
        assert any(u.alternatives for u in utts)  # HYP# rows are exercised
        texts = layout_texts(utts)
        assert texts["alignment"] == _oracle_alignment(utts) == alignment_text(utts)
        assert texts["pra"] == _oracle_pra(utts) == pra_text(utts)
        assert layout_texts(utts, ()) == {}


def test_columns_are_the_ops(scorer: Scorer) -> None:
    refs, hyps = _random_corpus(2)
    for u in scorer.score(refs, hyps).utterances:
        ref_cols, hyp_cols = columns(u)
        assert list(zip(ref_cols, hyp_cols, strict=True)) == [(r, h) for _, r, h in u.ops]


def test_jsonl_is_json_dumps_of_the_record(scorer: Scorer) -> None:
    refs, hyps = dict(REFS), dict(HYPS)
    refs.update(_random_corpus(3)[0])
    hyps["u2"] = None  # a failed utterance: no hypothesis at all
    hyps["ctl"] = "\x01\x1f\u2028"
    refs["ctl"] = "control\x07 chars"
    refs["opt"] = "so (very) we go (far)"  # optionally deletable words keep "(w)"
    hyps["opt"] = "so we go far"
    result = scorer.score(refs, {k: v for k, v in hyps.items() if v is not None})
    durations = {"u1": 1.25, "u4": 3, "u5": 0.1 + 0.2}
    failed = {"u2": 'decoder "crashed"\n'}
    lines = list(utterance_lines(result, refs, hyps, durations, failed))
    assert len(lines) == len(refs)
    for line, u in zip(lines, result.utterances, strict=True):
        record = utterance_record(
            u, refs[u.id], hyps.get(u.id), durations.get(u.id), failed.get(u.id)
        )
        assert (
            line == json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
        )
        assert json.loads(line) == record
    opt = json.loads(lines[list(refs).index("opt")])
    assert opt["ref_norm"] == "so (very) we go (far)" and opt["del"] == 0


def test_jsonl_of_every_edit_code() -> None:
    """Every column code the writer places, the exact mode's `o` (an optional hypothesis word
    left out) and `O` beside S, D and I, and the rates of empty references (TER null), in the
    line `json.dumps` writes of the record."""
    exact = Scorer(ScorerConfig(nsw=False, itj=False, ukus=False, bootstrap=0, align="sclite"))
    refs = {"a": "so we go (far) now", "b": "one two three four", "c": "x y", "d": "", "e": ""}
    hyps = {"a": "so (uh) we go now", "b": "won two four five", "c": "z x y w", "d": "a", "e": ""}
    result = exact.score(refs, hyps)
    codes = "".join(u.codes for u in result.utterances)
    assert set(codes) == set("CSDIOo")
    for line, u in zip(utterance_lines(result, refs, hyps), result.utterances, strict=True):
        record = utterance_record(u, refs[u.id], hyps[u.id])
        assert line == json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"


def test_files_are_deterministic_and_wide_aware(scorer: Scorer, tmp_path: Path) -> None:
    def write(folder: Path) -> dict[str, Path]:
        result = scorer.score(REFS, HYPS)
        names = write_reports(folder, result, tuple(REPORTS))
        write_utterances(folder / "utterances.jsonl", utterance_lines(result, REFS, HYPS))
        assert names == list(REPORTS.values())
        return {p.name: p for p in folder.iterdir()}

    one, two = write(tmp_path / "a"), write(tmp_path / "b")
    assert sorted(one) == sorted(["utterances.jsonl", *REPORTS.values()])
    for name, path in one.items():
        assert path.read_bytes() == two[name].read_bytes(), name
    rows = [json.loads(x) for x in one["utterances.jsonl"].read_text().splitlines()]
    assert [r["id"] for r in rows] == list(REFS) and rows[2]["ter"] is None
    assert {"id", "ter", "mter", "cor", "sub", "ins", "del", "ops"} <= rows[0].keys()
    assert "HYP#:" in one["alignment.txt"].read_text()
    assert "Scores: (#C #S #D #I)" in one["hyp.pra"].read_text()
    zh = Scorer(ScorerConfig(lang="zh", bootstrap=10)).score({"z": "我爱北京"}, {"z": "我爱南京"})
    text = alignment_text(zh.utterances)
    ref_line, hyp_line = (x for x in text.splitlines() if x.startswith(("REF", "HYP")))
    assert ref_line.index("北") == hyp_line.index("南")


def test_utterances_are_written_in_chunks_as_one_text(
    scorer: Scorer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """write_utterances writes a few lines at a time: the same bytes as the lines joined, for
    a line count below, at and above a multiple of the chunk; `utterance_lines` reads the
    utterances alone (ops/score writes them before the metrics are ready) as it reads the
    result."""
    refs, hyps = _random_corpus(3)
    result = scorer.score(refs, hyps)
    lines = list(utterance_lines(result, refs, hyps))
    assert list(utterance_lines(result.utterances, refs, hyps)) == lines
    monkeypatch.setattr(reports, "_LINES_PER_WRITE", 4)
    for n in (0, 3, 4, 8, 9):
        path = tmp_path / f"u{n}.jsonl"
        write_utterances(path, iter(lines[:n]))
        assert path.read_bytes() == "".join(lines[:n]).encode("utf-8"), n


def test_sys_and_table_read_the_metrics(scorer: Scorer) -> None:
    m = scorer.score(REFS, HYPS).metrics
    row = next(x for x in sys_text(m).splitlines() if x.startswith("| Sum/Avg"))
    assert row.split()[3:5] == [str(m.n_utts), str(m.n_ref)]
    assert f"{100 * m.errors / m.n_ref:.1f}" in row
    table = table_text(m)
    assert f"{100 * m.ter:.2f}" in table and f"C {m.cor}  S {m.sub}  D {m.dele}" in table
    assert f"[{100 * m.ter_ci.low:.2f}, {100 * m.ter_ci.high:.2f}]" in table
    assert "empty reference(s)" in table  # u3


def test_identity_hashes_data_files_outside_scoring(scorer: Scorer) -> None:
    from asrbench.scorers import scorer_config, scorer_identity

    cfg = scorer_config(scorer)
    for kind, entry in cfg["data_files"].items():
        assert entry["sha256"] == hashlib.sha256(Path(entry["path"]).read_bytes()).hexdigest()
        assert "sha256" not in scorer.config_dict()["data_files"][kind]  # scoring hashes nothing
    assert "versions" not in scorer.config_dict()
    other = Scorer(ScorerConfig(nsw=False, bootstrap=200, itj=False))
    assert scorer_identity(scorer).config_hash != scorer_identity(other).config_hash
    assert scorer_identity(scorer) == scorer_identity(
        Scorer(ScorerConfig(nsw=False, bootstrap=200))
    )
