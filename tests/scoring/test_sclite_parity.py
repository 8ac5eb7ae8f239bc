"""Parity with NIST sclite (Debian sctk): per-utterance and total C/S/D/I on normalised text."""

from __future__ import annotations

import random

from scoring import Scorer
from scoring.io import read_transcripts
from scoring.sclite import find_sclite, run_sclite
from tests.conftest import require


def _corrupt(words: list[str], rng: random.Random, vocab: list[str], rate: float) -> list[str]:
    out = []
    for w in words:
        x = rng.random()
        if x < rate / 3:
            continue
        if x < 2 * rate / 3:
            out.append(rng.choice(vocab))
        elif x < rate:
            out += [w, rng.choice(vocab)]
        else:
            out.append(w)
    return out


def _check(plain_scorer: Scorer, refs: dict[str, str], hyps: dict[str, str], tmp_path) -> int:  # noqa: ANN001
    require("sclite", find_sclite() is not None, "apt-get install sctk")
    res = plain_scorer.score(refs, hyps)
    # sclite lower-cases utterance IDs in its reports
    ours = {u.id.lower(): (u.cor, u.sub, u.dele, u.ins) for u in res.utterances}
    theirs = run_sclite(
        {u.id: u.ref for u in res.utterances}, {u.id: u.hyp for u in res.utterances}, tmp_path
    )
    assert set(theirs) == set(ours)
    diff = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    assert not diff, list(diff.items())[:5]
    totals = [sum(v[i] for v in theirs.values()) for i in range(4)]
    assert totals == [res.summary[k] for k in ("cor", "sub", "del", "ins")]
    return len(ours)


def test_parity_synthetic(plain_scorer: Scorer, tmp_path) -> None:  # noqa: ANN001
    rng = random.Random(2024)
    vocab = [f"w{i}" for i in range(60)]
    refs, hyps = {}, {}
    for i in range(400):
        r = rng.choices(vocab, k=rng.randint(0, 25))
        refs[f"spk{i % 7}-u{i:04d}"] = " ".join(r)
        hyps[f"spk{i % 7}-u{i:04d}"] = " ".join(
            _corrupt(r, rng, vocab, rng.choice([0.05, 0.2, 0.5]))
        )
    assert _check(plain_scorer, refs, hyps, tmp_path) == 400


def test_parity_real_transcripts(plain_scorer: Scorer, shared, tmp_path) -> None:  # noqa: ANN001
    refs: dict[str, str] = {}
    for p in sorted(shared.glob("data/*/transcripts.tsv")):
        for k, v in read_transcripts(p, "tsv").items():
            refs[f"{p.parent.name}-{k}"] = v
    for p in sorted(shared.glob("data/librispeech-test-clean-sample/**/*.trans.txt")):
        refs.update({f"ls-{k}": v for k, v in read_transcripts(p, "kaldi").items()})
    assert len(refs) >= 10
    rng = random.Random(5)
    vocab = sorted({w for t in refs.values() for w in t.lower().split()})
    hyps = {k: " ".join(_corrupt(v.split(), rng, vocab, 0.3)) for k, v in refs.items()}
    _check(plain_scorer, refs, hyps, tmp_path)
