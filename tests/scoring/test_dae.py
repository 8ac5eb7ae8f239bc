"""DAE: the alternatives file, expansion on the hypothesis only, and the rule that an
alternative is taken only where every one of its words is correct."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import pytest

from scoring import Scorer, ScorerConfig, ScoringError
from scoring.dae import Alternatives, Slot, parse_rules
from scoring.scorer import DATA


def test_curated_list_is_large_and_loads(scorer: Scorer) -> None:
    rules = parse_rules(DATA / "alternatives_en.txt")
    assert len(rules) >= 1000
    assert scorer.alternatives is not None and len(scorer.alternatives) >= 1000


def test_forms_shared_by_rules_are_deliberate(scorer: Scorer) -> None:
    # A form in several rules has the union of their forms as alternatives (not transitive).
    # In the curated list that is only meant for contractions with several readings (he'd =
    # he would / he had) and `st` (saint / street); anything else is a rule split by mistake.
    alts = scorer.alternatives
    seen: dict[tuple[str, ...], int] = {}
    shared = set()
    for r, rule in enumerate(alts.rules):
        for form in rule.forms:
            if form in seen and seen[form] != r:
                shared.add(" ".join(form))
            seen.setdefault(form, r)
    assert shared and all("'" in f or f == "st" for f in shared), sorted(shared)


@pytest.mark.parametrize(
    ("ref", "hyp"),
    [
        ("i am going to go", "i'm gonna go"),  # contraction + informal
        ("they do not know", "they don't know"),  # negation
        ("a good storyteller", "a good story-teller"),  # compound, hyphenated
        ("a good story teller", "a good storyteller"),  # compound, open in the reference
        ("it is ok", "it's okay"),  # abbreviation
        ("the u s a", "the usa"),  # initialism
        ("we will see", "we'll see"),
        ("i had seen it", "i'd seen it"),  # 'd = had (a second reading of i'd)
        ("i would have gone", "i'd have gone"),  # overlapping forms: i'd have, i'd
        ("he has been here", "he's been here"),  # 's = has
        ("we will rerecord it", "we will re record it"),  # from SpeechColab's list
        ("the a m show", "the am show"),  # initialism read as letters
        ("five oh one", "five zero one"),  # a digit read two ways
    ],
)
def test_each_class_matches(scorer: Scorer, ref: str, hyp: str) -> None:
    res = scorer.score({"u": ref}, {"u": hyp})
    assert res.utterances[0].errors == 0, res.utterances[0].ops
    assert res.utterances[0].n_ref == len(ref.split())


@pytest.mark.parametrize(
    ("ref", "hyp", "errors", "ops"),
    [
        # The planted cases (SpeechColab's counts): a merged or contracted form must not
        # remove an insertion where the words are wrong.
        ("eighteen", "that will run", 3, "IIS"),  # not 2 via "that'll"
        ("u", "you are", 2, "IS"),  # not 1 via "you're"
        ("your", "you all are", 3, "IIS"),  # not 2 via "y'all"
        ("please press star now", "please press the grand daughter now", 3, "CCIISC"),
        # ... while a correct alternative still reconciles, reference words between its words
        # being deleted (as SpeechColab allows):
        ("i really am here", "i'm here", 1, "CDCC"),
        # an alternative with one wrong word is not taken; the written form is scored as is
        ("we were", "we're", 2, "DS"),
    ],
)
def test_alternative_never_rewards_wrong_words(
    scorer: Scorer, ref: str, hyp: str, errors: int, ops: str
) -> None:
    for engine in ("auto", "fst"):
        sc = (
            scorer
            if engine == "auto"
            else Scorer(ScorerConfig(nsw=False, bootstrap=0, engine="fst"))
        )
        u = sc.score({"u": ref}, {"u": hyp}).utterances[0]
        assert (u.errors, u.codes) == (errors, ops), (engine, u.ops)
        for start, end, _, _ in u.alternatives:  # a chosen alternative is all correct
            cols = [op for op, _, h in u.ops if h is not None]
            assert all(op == "C" for op in cols[start:end]), u.ops


def test_count_for_wrong_words_does_not_depend_on_the_list(tmp_path: Path) -> None:
    # The same wrong hypothesis, scored with and without a list that holds merged forms of its
    # words: the same count. (Before, "that'll" turned 3 errors into 2.)
    alt = tmp_path / "alt.txt"
    alt.write_text(
        "that'll|that will\nyou're|you are\ny'all|you all\ngranddaughter|grand daughter\n",
        encoding="utf-8",
    )
    refs = {"a": "eighteen", "b": "u", "c": "your", "d": "press star now"}
    hyps = {"a": "that will run", "b": "you are", "c": "you all are", "d": "the grand daughter now"}
    with_list = Scorer(ScorerConfig(nsw=False, alternatives=str(alt), bootstrap=0))
    without = Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=0))
    a, b = with_list.score(refs, hyps), without.score(refs, hyps)
    assert [u.errors for u in a.utterances] == [u.errors for u in b.utterances] == [3, 2, 3, 3]
    assert a.metrics.dae_slots_used == 0


def test_reference_is_never_expanded(scorer: Scorer) -> None:
    refs = {"u": "i'm gonna go", "v": "we are going to see"}
    hyps = {"u": "i am going to go", "v": "we're gonna see"}
    with_dae = scorer.score(refs, hyps)
    without = Scorer(ScorerConfig(nsw=False, dae=False, bootstrap=0)).score(refs, hyps)
    assert [u.ref for u in with_dae.utterances] == [u.ref for u in without.utterances]
    assert with_dae.metrics.n_ref == without.metrics.n_ref == 8  # |ref| never moves
    assert with_dae.metrics.errors == 0 < without.metrics.errors
    # two spans a hypothesis are scored in their other form: i am, going to; we are, going to
    assert with_dae.metrics.dae_slots_used == 4 and without.metrics.dae_slots_used == 0


def test_span_matches_as_a_whole(scorer: Scorer) -> None:
    # Only half of "going to" is in the reference: the slot must not mix forms.
    res = scorer.score({"u": "we are going home"}, {"u": "we're gonna home"})
    u = res.utterances[0]
    assert u.hyp in (
        ["we", "are", "gonna", "home"],
        ["we", "are", "going", "to", "home"],
        ["we're", "gonna", "home"],
    )
    assert u.hyp[:2] == ["we", "are"] and u.errors == 1


def test_overlapping_matches_share_a_slot(tmp_path: Path) -> None:
    f = tmp_path / "alt.txt"
    f.write_text("a b c|abc\nab|a b\nb c|bc\n", encoding="utf-8")
    alts = Alternatives(f, str.split)
    seg = alts.expand("x a b c y".split())
    assert seg[0] == "x" and seg[2] == "y" and isinstance(seg[1], Slot)
    slot = seg[1]
    assert slot.forms[slot.surface] == ("a", "b", "c")
    readings = dict(zip(slot.forms, slot.strict, strict=True))
    # every reading of the span: a b c as written, abc, ab + c, a + bc
    assert readings == {
        ("a", "b", "c"): (False, False, False),
        ("abc",): (True,),
        ("ab", "c"): (True, False),
        ("a", "bc"): (False, True),
    }
    assert alts.expand("nothing here".split()) is None


def test_rules_with_a_shared_form_are_not_transitive(tmp_path: Path) -> None:
    f = tmp_path / "alt.txt"
    f.write_text("he'd|he would\nhe'd|he had\n", encoding="utf-8")
    sc = Scorer(ScorerConfig(nsw=False, alternatives=str(f), bootstrap=0))
    got = sc.score(
        {"a": "he had gone", "b": "he would go", "c": "he had gone"},
        {"a": "he'd gone", "b": "he'd go", "c": "he would gone"},
    )
    assert [u.errors for u in got.utterances] == [0, 0, 1]  # he would is not he had


def test_bad_rules_name_the_line(tmp_path: Path) -> None:
    f = tmp_path / "alt.txt"
    f.write_text("ok|okay\nsolo\n", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"alt.txt:2"):
        Scorer(ScorerConfig(nsw=False, alternatives=str(f)))
    f.write_text("ok|okay  # a source note\n|x\n", encoding="utf-8")
    with pytest.raises(ScoringError, match=r"alt.txt:2"):
        Scorer(ScorerConfig(nsw=False, alternatives=str(f)))
    f.write_text("ok|okay  # a source note\n", encoding="utf-8")
    assert parse_rules(f) == [(1, ["ok", "okay"])]


def _readings(alts: Alternatives, tokens: list[str]) -> set[tuple[tuple[str, ...], tuple]]:
    """Brute force: every way to rewrite `tokens`, each part as written or as one of the
    alternatives of a form matching there (words of an alternative strict)."""
    out = set()
    by_first: dict[str, list] = {}
    for forms in alts.classes:
        by_first.setdefault(forms[0][0], []).append(forms)

    def walk(p: int, toks: tuple, mask: tuple) -> None:
        if p == len(tokens):
            out.add((toks, mask))
            return
        walk(p + 1, toks + (tokens[p],), mask + (False,))
        for forms in by_first.get(tokens[p], ()):
            w = forms[0]
            if tuple(tokens[p : p + len(w)]) == w:
                for alt in forms[1:]:
                    walk(p + len(w), toks + alt, mask + (True,) * len(alt))

    walk(0, (), ())
    return out


def test_expansion_gives_every_reading(scorer: Scorer) -> None:
    alts = scorer.alternatives
    assert alts is not None
    forms = [" ".join(f) for r in alts.rules[:120] for f in r.forms]
    rng = random.Random(4)
    for _ in range(300):
        words = rng.choices(
            ["the", "cat", "to", "i", "am", "a", "hundred", "and"] + forms, k=rng.randint(0, 8)
        )
        tokens = " ".join(words).split()
        found = alts.split(tokens)
        expected = _readings(alts, tokens)
        if found is None:
            assert expected == {(tuple(tokens), (False,) * len(tokens))}
            continue
        runs, slots = found
        got = set()
        for combo in itertools.product(*(range(len(x.forms)) for x in slots)):
            toks, mask = tuple(runs[0]), (False,) * len(runs[0])
            for slot, i, run in zip(slots, combo, runs[1:], strict=True):
                toks += slot.forms[i] + tuple(run)
                mask += slot.mask(i) + (False,) * len(run)
            got.add((toks, mask))
        assert got == expected, tokens


def _strict_count(
    ref: list[str], lines: list[tuple[tuple[str, ...], tuple[bool, ...]]]
) -> tuple[int, int, int]:
    """(E, S, I) of the rule by brute force: over every reading, the best alignment in which
    every strict word is matched, by a plain dynamic programme over (E, S, I)."""
    best = None
    for toks, mask in lines:
        n, m = len(ref), len(toks)
        inf = (math.inf, 0, 0)
        d = [[inf] * (m + 1) for _ in range(n + 1)]
        d[0][0] = (0, 0, 0)
        for i in range(n + 1):
            for j in range(m + 1):
                if i == j == 0:
                    continue
                cands = []
                if i and j and ref[i - 1] == toks[j - 1]:
                    cands.append(d[i - 1][j - 1])
                elif i and j and not mask[j - 1]:
                    e, s, k = d[i - 1][j - 1]
                    cands.append((e + 1, s + 1, k))
                if i:
                    e, s, k = d[i - 1][j]
                    cands.append((e + 1, s, k))
                if j and not mask[j - 1]:
                    e, s, k = d[i][j - 1]
                    cands.append((e + 1, s, k + 1))
                d[i][j] = min(cands, default=inf)
        if best is None or d[n][m] < best:
            best = d[n][m]
    return best


def test_scorer_counts_equal_a_brute_force_of_the_rule(scorer: Scorer) -> None:
    # Random hypotheses full of rule forms against references that hold some forms, some
    # of their words in another order, and other words: both engines equal the brute force.
    alts = scorer.alternatives
    rules = [r.forms for r in alts.rules[:60]] + [r.forms for r in alts.rules[-40:]]
    rng = random.Random(9)
    vocab = ["the", "cat", "sat", "and", "a", "will", "all", "are", "is"]
    refs, hyps = {}, {}
    for n in range(250):
        ref, hyp = rng.choices(vocab, k=rng.randint(0, 5)), rng.choices(vocab, k=rng.randint(0, 5))
        for _ in range(rng.randint(1, 3)):
            forms = rng.choice(rules)
            hyp.insert(rng.randint(0, len(hyp)), " ".join(rng.choice(forms)))
            words = list(rng.choice(forms))
            if rng.random() < 0.4:
                rng.shuffle(words)
            ref.insert(rng.randint(0, len(ref)), " ".join(words))
        refs[f"u{n}"], hyps[f"u{n}"] = " ".join(ref), " ".join(hyp)
    fst = Scorer(ScorerConfig(nsw=False, bootstrap=0, engine="fst"))
    auto, via_fst = scorer.score(refs, hyps), fst.score(refs, hyps)
    for u, v in zip(auto.utterances, via_fst.utterances, strict=True):
        expected = _strict_count(u.ref, sorted(_readings(alts, scorer.normalize(hyps[u.id]))))
        assert (u.errors, u.sub, u.ins) == expected, (u.id, u.ref, hyps[u.id], u.ops)
        assert (v.errors, v.sub, v.ins) == expected, (v.id, v.ops)


@pytest.mark.parametrize(
    ("ref", "hyp"),
    [
        ("he was here", "he's here"),  # SpeechColab's HE'S,HE IS,HE WAS: 's never contracts was
        ("we were here", "we're here"),
        ("twenty", "two thousand"),  # TWO THOUSAND AND,TWENTY,TWO THOUSAND
        ("she misses him", "she mrs him"),  # MRS,MISSES,MISSUS
        ("my brother", "my bro"),  # BRO,BROTHER
        ("the dinning", "the dining"),  # DINING,DINNING
        ("a chicken coop", "a chicken co op"),  # COOP,CO OP
    ],
)
def test_rejected_speechcolab_lines_stay_errors(scorer: Scorer, ref: str, hyp: str) -> None:
    # Each rejection in alternatives_en.rejected.tsv is a pair of different spoken words.
    assert scorer.score({"u": ref}, {"u": hyp}).utterances[0].errors > 0


def test_rejected_list_is_well_formed() -> None:
    rows = [
        line.split("\t")
        for line in (DATA / "alternatives_en.rejected.tsv").read_text(encoding="utf-8").splitlines()
        if line[:1].isdigit()
    ]
    assert len(rows) == 26 and all(len(r) == 3 and r[2] for r in rows)
    adopted = {
        int(line.rsplit("glm_en.csv:", 1)[1].split()[0])
        for line in (DATA / "alternatives_en.txt").read_text(encoding="utf-8").splitlines()
        if "glm_en.csv:" in line
    }
    assert not adopted & {int(r[0]) for r in rows}  # never both adopted and rejected


def test_compiled_rules_kept_elsewhere_give_the_same_alternatives(scorer: Scorer) -> None:
    """A store (scoring.dae.Store) hands back the compiled rules it kept, through marshal as
    asrbench.scorers keeps them: the same index, classes, rules and splits as compiled
    without one; an entry of another layout is compiled again."""
    import marshal

    fresh = scorer.alternatives
    assert fresh is not None
    kept: list[bytes] = []

    def store(build):
        if not kept:
            kept.append(marshal.dumps(build()))
        return marshal.loads(kept[0])

    def alternatives(store) -> Alternatives:
        alts = Scorer(ScorerConfig(nsw=False, bootstrap=200), dae_store=store).alternatives
        assert alts is not None
        return alts

    tokens = "i am gonna call you at a hundred and five ok".split()
    for alts in [alternatives(store), alternatives(store)] + [
        alternatives(lambda build, s=stale: s)
        for stale in [("dae-compiled-0", [], [], {}, {}, 0), (), None]
    ]:
        assert alts._index == fresh._index and alts._firsts == fresh._firsts
        assert alts.classes == fresh.classes and alts.rules == fresh.rules
        assert (alts.first_words, alts.max_len) == (fresh.first_words, fresh.max_len)
        assert alts.split(tokens) == fresh.split(tokens) is not None
        assert alts.split(tokens, tokens) == fresh.split(tokens, tokens)
    assert len(kept) == 1
