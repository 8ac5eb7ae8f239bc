"""Long NLP recordings scored in chunks (scoring/nlp_chunks.py) give the whole alignment's
counts: the Earnings-21 excerpt (tests/fixtures/earnings21) cut every 60 reference words."""

from __future__ import annotations

from asrbench.settings import REPO_ROOT
from scoring import Scorer, ScorerConfig
from scoring.nlp import pieces_text
from scoring.nlp_chunks import chunk_texts, merge
from scoring.nlp_inputs import read_hypotheses, read_references

E21 = REPO_ROOT / "tests" / "fixtures" / "earnings21"


def test_chunked_counts_equal_the_whole_alignment() -> None:
    recs, _ = read_references(
        E21 / "4320211.nlp", E21 / "4320211.norm.json", E21 / "4320211.wer_tag.json", False
    )
    rec = recs["4320211"]
    hyp = read_hypotheses(E21 / "google" / "4320211.nlp", ["4320211"])["4320211"]
    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    whole = scorer.utterances({"4320211": pieces_text(rec.pieces)}, {"4320211": hyp})[0]
    refs, hyps = chunk_texts("4320211", rec.pieces, hyp, target=60)
    assert len(refs) >= 5  # it was cut
    (joined,) = merge(scorer.utterances(refs, hyps))
    assert joined.id == "4320211"
    assert (joined.sub, joined.dele, joined.ins, joined.n_ref) == (
        whole.sub, whole.dele, whole.ins, whole.n_ref,
    )  # fmt: skip
    assert joined.errors > 20
