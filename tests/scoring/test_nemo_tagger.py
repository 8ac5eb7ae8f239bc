"""nemo's English tagger compacted (scoring/normalize/nemo_tagger.py): every path keeps its
weight, the kept file is reused only for the archive it was built from, and NSW's readings
through it equal nemo's own on real text (an Earnings-21 excerpt's pieces, the embedded
English references, and the kinds of token nemo's classes read)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT
from scoring.nlp import hypothesis_text, read_nlp
from scoring.normalize import nemo_tagger
from scoring.normalize.nsw import NEEDS_NSW, PIECE_MIN_WORDS, Nsw, piece_spans

pynini = pytest.importorskip("pynini")
pynutil = pytest.importorskip("pynini.lib.pynutil")

E21 = REPO_ROOT / "tests" / "fixtures" / "earnings21"

# One of each kind of token nemo's English classes read, with the words around it.
KINDS = [
    "revenue was $5 million in 2020, up 12.5% from 2019",
    "on March 3, 2020 at 3 p.m. EST we met Mr. Smith",
    "call 1-800-555-0199 or write to info@example.com or www.example.org/path",
    "it weighs 25 kg and runs 60 mph, 3/4 full, the 21st time",
    "World War II and Henry VIII, chapter IV, in the 1990s and the 30S",
    "Q3 fiscal 2021 EPS of $0.45, a 10-to-1 split, 24/7 and 2x faster",
    "from 9:30 to 10:45 a.m., 5'10\" tall, #1 seed & 100° heat",
    'he said "the 3 of us" were there (about 40 people)',
]


def _as_read(text: str) -> list[str]:
    """The strings NSW hands nemo for a text: its pieces when it is long, else the text."""
    words = text.split()
    if len(words) <= PIECE_MIN_WORDS:
        return [text]
    return [" ".join(words[a:b]) for a, b in piece_spans(words, NEEDS_NSW)]


def _english_references() -> list[str]:
    """What NSW reads of the embedded English datasets' references."""
    out = []
    for meta in sorted((REPO_ROOT / "datasets").glob("*/metadata.tsv")):
        card = (meta.parent / "dataset.yaml").read_text(encoding="utf-8")
        if "language: en" not in card:
            continue
        with meta.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        out += [s for r in rows if NEEDS_NSW.search(r["TEXT"]) for s in _as_read(r["TEXT"])]
    return out


def _excerpt_pieces() -> list[str]:
    """The pieces NSW reads of the Earnings-21 excerpt, reference and Google's output."""
    paths = (E21 / "4320211.nlp", E21 / "google" / "4320211.nlp")
    return [s for path in paths for s in _as_read(hypothesis_text(read_nlp(path)))]


@pytest.fixture(scope="module")
def grammars(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder holding only the checkout's compiled English grammars."""
    root = tmp_path_factory.mktemp("nsw")
    (root / "nemo_tn").mkdir()
    for path in (cache_dir / "nemo_tn").glob("en_*.far"):
        shutil.copy2(path, root / "nemo_tn" / path.name)
    return root


def _toy() -> object:
    """A small tagger in nemo's style: markup inserted byte by byte around classes, weights."""
    digit = pynini.string_map([("1", "one"), ("2", "two"), ("12", "twelve")])
    word = pynini.closure(pynini.union(*"abc12"), 1)
    cardinal = pynutil.insert('cardinal { integer: "') + digit + pynutil.insert('" }')
    name = pynutil.insert('name: "') + word + pynutil.insert('"')
    token = (
        pynutil.insert("tokens { ")
        + (cardinal | pynutil.add_weight(name, 100))
        + pynutil.insert(" }")
    )
    sep = pynini.cross(" ", " ") | pynutil.add_weight(pynini.cross(" ", "  "), 0.5)
    return (token + pynini.closure(sep + token)).optimize()


@pytest.mark.parametrize("text", ["1", "12", "a 12 b", "ab1 2 c", "12 12 12", "c"])
def test_compact_keeps_each_best_path_and_its_weight(text: str) -> None:
    toy = _toy()
    small, table = nemo_tagger.compact(toy)
    assert small.num_states() < toy.num_states()
    whole = pynini.compose(pynini.accep(text), toy)
    joined = pynini.compose(pynini.accep(text), small)
    assert float(pynini.shortestdistance(joined, reverse=True)[joined.start()]) == float(
        pynini.shortestdistance(whole, reverse=True)[whole.start()]
    )
    best = pynini.shortestpath(whole, nshortest=1, unique=True).string()
    assert (
        nemo_tagger.path_text(pynini.shortestpath(joined, nshortest=1, unique=True), table) == best
    )
    assert nemo_tagger.Compact(small, table).best(text).string() == best


def test_text_without_a_path_gives_the_empty_lattice() -> None:
    small, table = nemo_tagger.compact(_toy())
    assert nemo_tagger.Compact(small, table).best("zzz").num_states() == 0


def test_kept_file_serves_only_the_archive_it_was_built_from(tmp_path: Path) -> None:
    builds = []

    def tagger() -> object:
        builds.append(1)
        return _toy()

    far = tmp_path / "a" / "en_tagger.far"
    far.parent.mkdir()
    far.write_bytes(b"grammar one")
    first = nemo_tagger.load(far, tagger)
    again = nemo_tagger.load(far, tagger)
    assert len(builds) == 1 and again.best("12").string() == first.best("12").string()
    copy = tmp_path / "b"
    shutil.copytree(far.parent, copy)  # a copied grammar folder keeps its compacted tagger
    nemo_tagger.load(copy / far.name, tagger)
    assert len(builds) == 1
    far.write_bytes(b"grammar two")  # another archive under the same name: built again
    nemo_tagger.load(far, tagger)
    assert len(builds) == 2


def test_readings_equal_nemo_on_real_text(grammars: Path) -> None:
    from nemo_text_processing.text_normalization.normalize import Normalizer

    texts = list(dict.fromkeys(_excerpt_pieces() + _english_references() + KINDS))
    assert len(texts) > 20
    nsw = Nsw(grammars)
    compacted = nsw.normalizer()
    assert isinstance(compacted.find_tags.__self__, nemo_tagger.Compact)  # the new path
    nemo = Normalizer(input_case="cased", lang="en", cache_dir=str(grammars / "nemo_tn"))
    for text in texts:
        expected = nemo.normalize(text, verbose=False, punct_post_process=True)
        assert nsw._normalize(text) == expected, text


def test_a_folder_it_cannot_write_to_still_gets_the_compacted_tagger(tmp_path: Path) -> None:
    far = tmp_path / "en_tagger.far"
    far.write_bytes(b"grammar")
    (tmp_path / "en_tagger.compact.fst").mkdir()  # the file's name is taken: writing fails
    compacted = nemo_tagger.load(far, _toy)
    assert (
        compacted.best("12").string()
        == pynini.shortestpath(
            pynini.compose(pynini.accep("12"), _toy()), nshortest=1, unique=True
        ).string()
    )
