"""Our scorer against the Open ASR Leaderboard's multilingual normaliser, utterance by utterance,
with the cause of every difference.

The leaderboard's multilingual track normalises both sides with Whisper's basic normaliser
(`BasicMultilingualTextNormalizer(remove_diacritics=False)` in its `normalizer/data_utils.py`;
here the `whisper-normalizer` package's `BasicTextNormalizer()`, the same code) and counts with
jiwer: `wer` (words), or `cer` where our unit is characters. Ours is `scoring.Scorer` for the
language (NSW off unless `--nsw`: the leaderboard's basic normaliser has none either, so the
comparison isolates the text steps).

    .venv/bin/python benchmarks/multilingual_normaliser.py --lang fr \\
        --ref datasets/mini_fr/metadata.tsv --hyp HYP.tsv
    .venv/bin/python benchmarks/multilingual_normaliser.py --cell RESULTS/whisper_base/mini_fr
    .venv/bin/python benchmarks/multilingual_normaliser.py --multiscript

Every utterance whose token count or S/D/I differ is listed with the causes found in its raw
texts, each tried on the side(s) whose tokens differ:
  nsw         a digit, which our NSW step spells out (with --nsw); theirs keeps it
  marks       a combining mark (category M): theirs makes it a space, splitting the word
              (Devanagari vowel signs and viramas, Thai tone marks, Arabic harakat...)
  apostrophe  an apostrophe inside a word: theirs always splits there; ours keeps the word
              whole (`aujourd'hui`, `don't`) except an elided clitic (`l'`, `dell'`)
  symbols     a symbol (category S: `€ % + °`): theirs makes it a space; ours keeps it
  brackets    text in parentheses: theirs deletes it; ours keeps it (a reference's words in
              parentheses are optional for sclite's convention)
  numbers     a decimal point or thousands separator between digits: theirs splits `3.5`
  unit        Chinese: our mixed unit (CJK characters + words) against jiwer's cer
              (every character, spaces included)
  casefold    `ß`, final `ς`, Turkish `İ`/`I`: theirs lower-cases, ours folds
  nfkc        a compatibility character (`ﬁ`, `²`, full-width): theirs applies NFKC, ours NFC
  geresh      Hebrew geresh or gershayim inside a word: theirs splits, ours joins
  other       none of the above (shown with both tokenisations)
"""

from __future__ import annotations

import argparse
import collections
import difflib
import json
import re
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring import Scorer, ScorerConfig  # noqa: E402
from scoring.io import read_transcripts  # noqa: E402

_NUMBER = re.compile(r"\d[.,]\d")
_PARENS = re.compile(r"\([^)]+?\)")
_GERESH = re.compile(r"[\u0590-\u05ff][\u05f3\u05f4'\"][\u0590-\u05ff]")


def _category_in(tokens: list[str], first: str) -> bool:
    return any(unicodedata.category(c)[0] == first for t in tokens for c in t)


# cause -> does it apply, given the raw text, our tokens of it and whether our NSW ran. Each
# looks at what we kept (our tokens) where it can, so that it names what theirs changed.
DETECTORS = {
    "nsw": lambda t, toks, nsw: nsw and any(c.isdigit() for c in t),
    "marks": lambda t, toks, nsw: _category_in(toks, "M"),
    "apostrophe": lambda t, toks, nsw: any("'" in x for x in toks),
    "symbols": lambda t, toks, nsw: _category_in(toks, "S"),
    "brackets": lambda t, toks, nsw: bool(_PARENS.search(t)),
    "numbers": lambda t, toks, nsw: any(_NUMBER.search(x) for x in toks),
    "casefold": lambda t, toks, nsw: t.casefold() != t.lower() or "İ" in t or "ı" in t,
    "nfkc": lambda t, toks, nsw: (
        unicodedata.normalize("NFKC", t) != unicodedata.normalize("NFC", t)
    ),
    "geresh": lambda t, toks, nsw: bool(_GERESH.search(t)),
}


@dataclass
class Row:
    """One utterance by both pipelines: tokens and (n_ref, S, D, I) each."""

    id: str
    ours: tuple[int, int, int, int]
    theirs: tuple[int, int, int, int]
    tokens: dict[str, list[list[str]]] = field(default_factory=dict)  # ours/theirs: ref, hyp
    causes: list[str] = field(default_factory=list)


def _theirs(norm, ref: str, hyp: str, chars: bool) -> tuple[list[list[str]], tuple]:
    """The leaderboard's tokens and counts: normalise, then jiwer (wer, or cer for chars)."""
    import jiwer

    r, h = norm(ref).strip(), norm(hyp).strip()
    toks = [list(r) if chars else r.split(), list(h) if chars else h.split()]
    if not r:  # jiwer refuses an empty reference: count the hypothesis as insertions
        return toks, (0, 0, 0, len(toks[1]))
    out = (jiwer.process_characters if chars else jiwer.process_words)(r, h or "")
    return toks, (len(toks[0]), out.substitutions, out.deletions, out.insertions)


def compare(refs: dict[str, str], hyps: dict[str, str], lang: str, nsw: bool) -> list[Row]:
    """Both pipelines on every reference ID, with the causes of each difference."""
    from whisper_normalizer.basic import BasicTextNormalizer

    cache = str(ROOT / ".cache") if nsw else None
    scorer = Scorer(ScorerConfig(lang=lang, nsw=nsw, cache_dir=cache, bootstrap=0))
    chars = scorer.config.unit != "word"
    norm = BasicTextNormalizer()
    rows = []
    for u in scorer.utterances(refs, hyps):
        ref, hyp = refs[u.id], hyps.get(u.id) or ""
        toks, theirs = _theirs(norm, ref, hyp, chars)
        row = Row(u.id, (len(u.ref), u.sub, u.dele, u.ins), theirs)
        row.tokens = {"ours": [u.ref, u.hyp], "theirs": toks}
        if row.ours != row.theirs:
            row.causes = _causes(scorer, norm, ref, hyp, chars)
        rows.append(row)
    return rows


def _causes(scorer: Scorer, norm, ref: str, hyp: str, chars: bool) -> list[str]:
    """The detectors that fire on a side whose two tokenisations differ."""
    found: list[str] = ["unit"] if scorer.config.unit == "mixed" else []
    for text in (ref, hyp):
        ours = scorer.normalize(text)
        theirs = list(norm(text).strip()) if chars else norm(text).split()
        if ours == theirs:
            continue
        for cause, test in DETECTORS.items():
            if cause not in found and test(text, ours, scorer.nsw is not None):
                found.append(cause)
    return found or ["other"]


def _rate(rows: list[Row], which: str) -> float:
    n = sum(getattr(r, which)[0] for r in rows)
    e = sum(sum(getattr(r, which)[1:]) for r in rows)
    return e / n if n else float("nan")


def report(rows: list[Row], title: str) -> dict:
    """Print the differences and return the summary."""
    diff = [r for r in rows if r.ours != r.theirs]
    causes = collections.Counter(c for r in diff for c in r.causes)
    print(f"\n## {title}: {len(rows)} utterances, {len(diff)} differ")
    ours, theirs = _rate(rows, "ours"), _rate(rows, "theirs")
    print(f"TER ours {ours:.2%}, theirs (OALB basic + jiwer) {theirs:.2%}")
    for r in diff:
        print(
            f"- {r.id}: ours N={r.ours[0]} S/D/I={r.ours[1:]}, theirs N={r.theirs[0]} "
            f"S/D/I={r.theirs[1:]}; cause: {', '.join(r.causes)}"
        )
        for side, i in (("ref", 0), ("hyp", 1)):
            o, t = r.tokens["ours"][i], r.tokens["theirs"][i]
            if o != t:
                print(f"    {side} ours:   {' '.join(o)}\n    {side} theirs: {' '.join(t)}")
    return {
        "title": title,
        "utterances": len(rows),
        "differ": len(diff),
        "ter_ours": _rate(rows, "ours"),
        "ter_theirs": _rate(rows, "theirs"),
        "causes": dict(causes),
        "rows": [r.__dict__ for r in diff],
    }


def multiscript() -> list[dict]:
    """The hand-worked corpus of tests/scoring/test_multiscript.py, one language at a time."""
    from tests.scoring.test_multiscript import CASES

    by_lang: dict[str, tuple[dict, dict]] = {}
    for i, (lang, ref, hyp, _) in enumerate(CASES):
        refs, hyps = by_lang.setdefault(lang, ({}, {}))
        refs[f"{lang}_{i}"], hyps[f"{lang}_{i}"] = ref, hyp
    return [
        report(compare(r, h, lang, False), f"multi-script corpus, {lang}")
        for lang, (r, h) in by_lang.items()
    ]


def _cell_inputs(cell: Path) -> tuple[dict[str, str], dict[str, str], str]:
    """References, hypotheses and language of a results cell (its utterances.jsonl and
    summary.json)."""
    summary = json.loads((cell / "summary.json").read_text())
    lang = (summary.get("scorer") or {}).get("lang") or summary.get("language") or "en"
    refs, hyps = {}, {}
    with open(cell / "utterances.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            refs[d["id"]], hyps[d["id"]] = d["ref"], d.get("hyp") or ""
    return refs, hyps, lang


def _diff(old: list[str], new: list[str]) -> str:
    """The spans that changed, `old -> new`, one after another."""
    sm = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return "; ".join(
        f"{' '.join(old[i1:i2])} -> {' '.join(new[j1:j2])}"
        for op, i1, i2, j1, j2 in sm.get_opcodes()
        if op != "equal"
    )


# The ablation ladder of the script steps: (label, language tag, diacritics). `und` (BCP-47's
# "undetermined") gets the language-neutral steps only, so the second rung adds exactly what the
# language's profile adds (ELISION for French and Italian).
def ablation(refs: dict[str, str], hyps: dict[str, str], lang: str) -> dict:
    """TER under the neutral steps, the language's, and the language's with diacritics
    stripped; each utterance whose counts a rung changes, with its tokens before and after."""
    rungs = [
        ("neutral (und)", "und", "keep"),
        (lang, lang, "keep"),
        (f"{lang} + strip", lang, "strip"),
    ]
    out: dict = {"rungs": [], "changes": []}
    before = None
    for label, tag, diacritics in rungs:
        cfg = ScorerConfig(lang=tag, nsw=False, bootstrap=0, diacritics=diacritics)
        utts = Scorer(cfg).utterances(refs, hyps)
        n, e = sum(len(u.ref) for u in utts), sum(u.sub + u.dele + u.ins for u in utts)
        print(f"{label:>16}: TER {e / n:.2%} ({e}/{n}), steps {Scorer(cfg).pipeline.names}")
        out["rungs"].append({"label": label, "errors": e, "n_ref": n})
        for u, b in zip(utts, before or utts, strict=True):
            if (len(u.ref), u.sub, u.dele, u.ins) != (len(b.ref), b.sub, b.dele, b.ins):
                d_err = (u.sub + u.dele + u.ins) - (b.sub + b.dele + b.ins)
                print(f"    {u.id}: errors {d_err:+d}, ref words {len(u.ref) - len(b.ref):+d}")
                for side in ("ref", "hyp"):
                    old, new = getattr(b, side), getattr(u, side)
                    if old != new:
                        print(f"      {side}: {_diff(old, new)}")
                out["changes"].append({"rung": label, "id": u.id, "errors": d_err})
        before = utts
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ref", type=Path, help="reference transcripts (tsv, kaldi, trn, jsonl)")
    ap.add_argument("--hyp", type=Path, help="hypothesis transcripts")
    ap.add_argument("--lang", default="en", help="BCP-47 tag of the transcripts")
    ap.add_argument("--cell", type=Path, help="a results cell (summary.json + utterances.jsonl)")
    ap.add_argument("--multiscript", action="store_true", help="the hand-worked test corpus")
    ap.add_argument("--nsw", action="store_true", help="our NSW step on (off by default)")
    ap.add_argument("--ablation", action="store_true", help="also the script steps' ablation")
    ap.add_argument("--json", type=Path, help="write the findings here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = []
    if args.multiscript:
        out += multiscript()
    if args.cell:
        refs, hyps, lang = _cell_inputs(args.cell)
        out.append(report(compare(refs, hyps, lang, args.nsw), f"{args.cell} ({lang})"))
        if args.ablation:
            out.append(ablation(refs, hyps, lang))
    if args.ref and args.hyp:
        refs, hyps = read_transcripts(args.ref), read_transcripts(args.hyp)
        out.append(
            report(compare(refs, hyps, args.lang, args.nsw), f"{args.hyp.name} ({args.lang})")
        )
    if not out:
        ap.error("give --ref and --hyp, --cell, or --multiscript")
    print(f"\n({time.perf_counter() - t0:.1f} s)")
    if args.json:
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
