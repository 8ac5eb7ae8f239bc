"""One folder walk behind every tree identity, and every digest built on it unchanged.

The scorer's code identity, the perturbation bank's code, the Ray node's code check, a model's
source hash and a zoo entry's file list each walked their folder with their own rules before
`identity.tree_paths` was their one walk. The values below were computed on `_tree` with the
code as it was before that change: these digests are in image tags, cache keys and stored
summaries, so a change to any of them would invalidate every user's caches and results.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from asrbench.identity import bytes_sha256, canonical

CARD = """\
id: tree_model
name: test model
family: test
architecture: none
licence: MIT
languages: [en]
sample_rate: 16000
program: run.py
image:
  shared: [helper.py]
"""

# Files of every kind the five walks treat differently: hidden files and folders, build
# products, skipped folder names, suffixes in two cases, nesting, an executable.
FILES = {
    "model.yaml": CARD,
    "run.py": "print('hi')\n",
    "conf.yaml": "a: 1\n",
    "notes.txt": "notes\n",
    "data/lexicon.txt": "a a\n",
    "data/.hidden.txt": "hidden\n",
    ".cache/x.py": "x = 1\n",
    "__pycache__/run.cpython-311.pyc": "\0pyc",
    "sub/__pycache__/y.py": "y = 1\n",
    "sub/z.pyc": "\0pyc",
    "sub/Upper.PY": "u = 1\n",
    "sub/mod.py": "m = 1\n",
    "sub/deep/w.yaml": "w: 1\n",
    ".venv/lib.py": "v = 1\n",
    ".git/HEAD": "ref\n",
    ".DS_Store": "ds\n",
    ".pytest_cache/v": "v\n",
    "_shared/helper.py": "VALUE = 1\n",
}


def _tree(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755 if rel == "run.py" else 0o644)
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return _tree(tmp_path / "tree_model")


def scorer_code(tree: Path, monkeypatch) -> str:
    import scoring
    from asrbench import scorers

    monkeypatch.setattr(scoring, "__file__", str(tree / "__init__.py"))
    scorers.code_digest.cache_clear()
    try:
        return scorers.code_digest()
    finally:
        scorers.code_digest.cache_clear()


def perturb_code(tree: Path, monkeypatch) -> str:
    from asrbench.perturb import bank

    monkeypatch.setattr(bank, "PACKAGE_DIR", tree)
    bank.code_identity.cache_clear()
    try:
        return bytes_sha256(canonical(bank.code_identity()["files"]))
    finally:
        bank.code_identity.cache_clear()


def node_code(tree: Path, monkeypatch) -> str:
    import asrbench.settings
    from asrbench.executors import worker

    monkeypatch.setattr(asrbench.settings, "REPO_ROOT", tree.parent)
    monkeypatch.setattr(
        worker, "NODE_CODE", ("tree_model/run.py", "tree_model/sub", "tree_model/.cache")
    )
    return bytes_sha256(canonical(worker.code_files()))


def model_source(tree: Path, monkeypatch) -> str:
    from asrbench.modelcard import load_model

    return load_model(tree).source_hash()


def zoo_files(tree: Path, monkeypatch) -> str:
    from asrbench.zoo.manifest import scan_folder

    return bytes_sha256(canonical([list(vars(e).values()) for e in scan_folder(tree)]))


# Computed with the walks as they were before tree_paths (see the module docstring).
BEFORE = {
    scorer_code: "sha256:360d58c9f6821287dc94160e96da7d0a51490c86a5ef65691901171bcb6c3add",
    perturb_code: "835e6a52b09f7535c89a5e06955e61e5dcc73dd739dc8334cea6eb8c611ee7f3",
    node_code: "12becd07ece798448b6d915d1e63e2b2ab7912401fc4981b7f51c94bae17d6b2",
    model_source: "c7dbdb0b713b77e7fb03991e71caa0923a90d5e3a791f507c5f1cc29590bea39",
    zoo_files: "7233c0c34f0ac251ea2adb05d3cefc25e2a5715b76ceab6f02d9057b9116c82d",
}


@pytest.mark.parametrize("walk", list(BEFORE), ids=lambda f: f.__name__)
def test_every_tree_digest_is_unchanged(walk, tree: Path, monkeypatch) -> None:
    assert walk(tree, monkeypatch) == BEFORE[walk]


def test_the_scorer_code_leaves_out_the_compiled_dp_s_build(tree: Path, monkeypatch) -> None:
    # scoring/_dp.pyx and _fast.pyx are source; the C Cython writes beside them and the .so
    # are built there by `pip install -e` or not at all (no compiler): the same key either way
    (tree / "_dp.pyx").write_text("# cython\n")
    (tree / "_fast.pyx").write_text("# cython\n")
    with_source = scorer_code(tree, monkeypatch)
    for name in ("_dp", "_fast"):
        (tree / f"{name}.c").write_text("/* generated */\n")
        (tree / f"{name}.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    assert scorer_code(tree, monkeypatch) == with_source != BEFORE[scorer_code]
