"""Issue 40 item 4: one home per idea (path containment, staged writes): the edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from asrbench.dataset import _inside as audio_inside
from asrbench.errors import InputError
from asrbench.ids import contained, inside
from asrbench.importers.common import ImportProblem
from asrbench.importers.common import inside as import_inside
from asrbench.importers.recipes.openslr import parse_stm
from scoring.sclite_timed import read_stm_ctm
from tests.conftest import require
from tests.scoring.sclite import find_sclite, run_sclite_timed


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.wav").write_bytes(b"")
    (tmp_path / "outside.wav").write_bytes(b"")
    (root / "out").symlink_to(tmp_path / "outside.wav")
    (root / "in").symlink_to(root / "a" / "x.wav")
    (root / "self").symlink_to(root)
    return root


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("a/x.wav", True),
        ("a", True),
        (".", False),  # the root itself is not inside it
        ("self", False),  # nor is a symlink back to the root
        ("a/..", False),
        ("a/../a/x.wav", True),  # `..` that stays within is fine
        ("../outside.wav", False),
        ("../root/a/x.wav", True),  # climbs out and back in: the resolved path decides
        ("out", False),  # symlink that leaves
        ("in", True),  # symlink that stays
        ("missing/file.wav", True),  # not there yet: still decided by where it would be
    ],
)
def test_contained_rule(tree: Path, rel: str, expected: bool) -> None:
    assert contained(tree, tree / rel) is expected


def test_root_through_a_symlinked_root(tree: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(tree)
    assert contained(alias, tree / "a" / "x.wav")
    assert not contained(alias, tree)


def test_every_caller_refuses_the_root_itself(tree: Path) -> None:
    with pytest.raises(InputError, match="not inside"):
        inside(tree, tree, "result folder")
    with pytest.raises(ImportProblem, match="points outside"):
        import_inside(tree, ".", "manifest.tsv:2")
    ok, why = audio_inside(tree, ".")
    assert not ok and "dataset folder itself" in why


def test_every_caller_agrees_inside(tree: Path) -> None:
    assert inside(tree, tree / "a", "result folder") == tree / "a"
    assert import_inside(tree, "in", "manifest.tsv:2") == tree / "in"
    assert audio_inside(tree, "a/x.wav") == (True, "")
    assert not audio_inside(tree, "out")[0]
    with pytest.raises(ImportProblem):
        import_inside(tree, "out", "manifest.tsv:2")


# ---- STM: one reader, sclite's rule for IGNORE_TIME_SEGMENT_IN_SCORING ---------------------------

IGNORE_SPELLINGS = [
    "IGNORE_TIME_SEGMENT_IN_SCORING",
    "ignore_time_segment_in_scoring",  # as TED-LIUM writes it
    "<o,f0,male> ignore_time_segment_in_scoring",
    "IgnoreTimeSegmentInScoring",
    "extra IgNoRe_TiMe_SeGmEnT_iN_sCoRiNg words",
    "fooIGNORE_TIME_SEGMENT_IN_SCORINGbar",
]
SCORED_SPELLINGS = ["extra words", "IGNORE_TIME_SEGMENT", "ignore time segment in scoring"]
CTM = "".join(
    f"rec 1 {t} 0.3 {w}\n"
    for t, w in [(0.1, "hello"), (0.5, "world"), (1.2, "extra"), (1.6, "words"), (2.1, "good")]
)


def _stm(tmp_path: Path, middle: str) -> Path:
    path = tmp_path / "ref.stm"
    path.write_text(
        f"rec 1 spk 0.0 1.0 hello world\nrec 1 spk 1.0 2.0 {middle}\nrec 1 spk 2.0 3.0 good\n",
        encoding="utf-8",
    )
    (tmp_path / "hyp.ctm").write_text(CTM, encoding="utf-8")
    return path


@pytest.mark.parametrize("middle", IGNORE_SPELLINGS + SCORED_SPELLINGS)
def test_stm_ignore_rule_is_sclites(tmp_path: Path, middle: str) -> None:
    """The scorer and the TED-LIUM importer leave out exactly the segments sclite leaves out,
    with the hypothesis words in their time region."""
    require("sclite", find_sclite() is not None, "apt-get install sctk")
    stm = _stm(tmp_path, middle)
    theirs = run_sclite_timed(stm, tmp_path / "hyp.ctm", tmp_path / "sclite")
    refs, hyps = read_stm_ctm(stm, tmp_path / "hyp.ctm")
    ignored = middle in IGNORE_SPELLINGS
    assert len(theirs) == len(refs) == (2 if ignored else 3)
    assert ("extra" in " ".join(hyps.values())) is not ignored
    imported = [(line, text) for line, *_, text in parse_stm(stm)]
    assert [line for line, _ in imported] == ([1, 3] if ignored else [1, 2, 3])


# ---- staged writes: fsio.atomic_link (the perturbation cache's links) ----------------------------


def test_atomic_link_places_a_link_over_an_old_file(tmp_path: Path) -> None:
    from asrbench.fsio import atomic_link

    src, dst = tmp_path / "cached.wav", tmp_path / "out" / "a.wav"
    dst.parent.mkdir()
    src.write_bytes(b"new")
    dst.write_bytes(b"old")
    atomic_link(src, dst)
    assert dst.read_bytes() == b"new" and dst.stat().st_ino == src.stat().st_ino
    assert sorted(p.name for p in dst.parent.iterdir()) == ["a.wav"]  # no temp file left
    with pytest.raises(FileNotFoundError):
        atomic_link(tmp_path / "missing.wav", dst)
    assert dst.read_bytes() == b"new" and sorted(p.name for p in dst.parent.iterdir()) == ["a.wav"]
