"""Long NLP recordings scored in chunks (scoring/nlp_chunks.py) give the whole alignment's
counts: the Earnings-21 excerpt (tests/fixtures/earnings21) cut every 60 reference words."""

from __future__ import annotations

from asrbench.settings import REPO_ROOT
from scoring import Scorer, ScorerConfig
from scoring.nlp import Piece, pieces_text
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


def test_no_cut_where_the_whole_alignment_does_not_pass() -> None:
    """Rev Kaldi's Earnings-21 call 4359971 (issue 42): the hypothesis's second "stopping the
    loan for" is a 4-word run shared with the reference's first, which the whole alignment
    leaves unmatched (it pairs "the loan for you" earlier); a cut in its middle cost 4 errors
    more than the whole alignment (and than fstalign). A cut is kept only where forcing the
    alignment through it costs nothing more in the words around it."""
    pad = "and we will continue to look at the business every quarter as we said before".split()
    ref = (
        "i'm sorry go ahead the- the government is in fact stopping the loan for you it's "
        "not stopping the loan for- for the banks"
    ).split()
    hyp = "i'm sorry go ahead isn't backstopping the loan for you stopping the loan for the bank"
    words = pad * 3 + ref + pad * 3
    pieces = [Piece(k, k + 1, (w,)) for k, w in enumerate(words)]
    hyp_text = " ".join(pad * 3) + " " + hyp + " " + " ".join(pad * 3)
    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    whole = scorer.utterances({"c": pieces_text(pieces)}, {"c": hyp_text})[0]
    for target in range(20, 60, 3):  # cuts fall at many places, the bad anchor among them
        refs, hyps = chunk_texts("c", pieces, hyp_text, target=target)
        assert len(refs) >= 2
        (joined,) = merge(scorer.utterances(refs, hyps))
        assert joined.errors == whole.errors, target


def test_no_cut_pairs_one_repetition_of_a_message_with_another() -> None:
    """A hold message repeated (Rev ESPnet's Earnings-21 call 4387383: the platform 771
    errors against fstalign's 427, whole repetitions deleted then inserted): the reference
    holds it three times, then the host, then once; the hypothesis once, the host, three
    times. Runs shared apart from the alignment paired repetitions across the host's words
    (50 errors where the whole alignment has 18); cuts on the alignment's own matches do not."""
    pad = "and we will continue to look at the business every quarter as we said before".split()
    hold = "thank you for holding we look forward to talking with you soon please hold the line"
    host = "good morning and welcome to the third quarter call".split()
    ref = pad + hold.split() * 3 + host + hold.split() + pad * 2
    hyp = " ".join(pad + hold.split() + host + hold.split() * 3 + pad * 2)
    pieces = [Piece(k, k + 1, (w,)) for k, w in enumerate(ref)]
    scorer = Scorer(ScorerConfig(nsw=False, bootstrap=0))
    whole = scorer.utterances({"c": pieces_text(pieces)}, {"c": hyp})[0]
    assert whole.errors == 18
    for target in range(20, 80, 7):
        refs, hyps = chunk_texts("c", pieces, hyp, target=target)
        assert len(refs) >= 2
        (joined,) = merge(scorer.utterances(refs, hyps))
        assert joined.errors == whole.errors, target
