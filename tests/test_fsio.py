"""asrbench.fsio: a file is replaced whole; a swapped folder never leaves its path empty."""

from __future__ import annotations

import os

import pytest

from asrbench import fsio


def _folder(path, text):
    path.mkdir(parents=True, exist_ok=True)
    (path / "f.txt").write_text(text)
    return path


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_replace_dir_never_leaves_the_target_missing(tmp_path, monkeypatch, exchange):
    """Every rename and the delete of the old folder are watched: at each step the target holds
    the old folder or the new one, never a mix; with renameat2 it is never missing, with two
    renames the old folder is then at `.cell.old<PID>`, which `clean_stale` moves back."""
    target = _folder(tmp_path / "cell", "old")
    stage = _folder(fsio.stage_dir(target), "new")
    seen: list[str] = []

    aside = tmp_path / f".cell.old{os.getpid()}"

    def look() -> None:
        if not exchange and not target.exists():
            assert (aside / "f.txt").read_text() == "old"
            return
        assert target.is_dir(), "the target went missing during the swap"
        seen.append((target / "f.txt").read_text())

    real_replace, real_remove = os.replace, fsio._remove

    def replace(a, b):
        look()
        real_replace(a, b)
        look()

    def remove(path):
        look()
        real_remove(path)
        look()

    real_exchange = fsio._exchange

    def swap(a, b):
        if not exchange:
            return False
        look()
        assert real_exchange(a, b), "renameat2 is not available here"
        look()
        return True

    monkeypatch.setattr(fsio, "_exchange", swap)
    monkeypatch.setattr(fsio.os, "replace", replace)
    monkeypatch.setattr(fsio, "_remove", remove)
    fsio.replace_dir(stage, target)
    assert (target / "f.txt").read_text() == "new"
    assert set(seen) == {"old", "new"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cell"]  # nothing left beside it


def test_a_failed_delete_of_the_old_folder_keeps_the_new_one(tmp_path, monkeypatch):
    target = _folder(tmp_path / "d", "old")
    stage = _folder(fsio.stage_dir(target), "new")

    def fail(path):
        assert (target / "f.txt").read_text() == "new"  # in place before the old one goes
        raise OSError("delete failed")

    monkeypatch.setattr(fsio, "_remove", fail)
    with pytest.raises(OSError):
        fsio.replace_dir(stage, target)
    assert (target / "f.txt").read_text() == "new"


def test_a_failed_rename_in_puts_the_old_folder_back(tmp_path, monkeypatch):
    target = _folder(tmp_path / "d", "old")
    stage = tmp_path / "missing-stage"  # the rename in fails: nothing to move
    monkeypatch.setattr(fsio, "_exchange", lambda a, b: False)
    with pytest.raises(FileNotFoundError):
        fsio.replace_dir(stage, target)
    assert (target / "f.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_a_kill_between_the_two_renames_is_undone_by_the_next_stage(tmp_path):
    target = _folder(tmp_path / "d", "old")
    dead = 2**22 + 12345  # above the default pid_max: no such process
    os.rename(target, tmp_path / f".d.old{dead}")
    fsio.stage_dir(target)
    assert (target / "f.txt").read_text() == "old"


def test_replace_dir_keeps_the_old_folder_where_asked(tmp_path):
    target = _folder(tmp_path / "cell", "old")
    stage = _folder(fsio.stage_dir(target), "new")
    kept = tmp_path / "cell~old"
    fsio.replace_dir(stage, target, keep_old=kept)
    assert (target / "f.txt").read_text() == "new"
    assert (kept / "f.txt").read_text() == "old"


def test_atomic_file_replaces_whole_or_not_at_all(tmp_path):
    path = tmp_path / "a" / "x.bin"
    with fsio.atomic_file(path) as f:
        f.write(b"one")
    with pytest.raises(RuntimeError), fsio.atomic_file(path) as f:
        f.write(b"half")
        raise RuntimeError("stopped half way")
    assert path.read_bytes() == b"one"
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.bin"]  # no temp file left


def test_atomic_file_exclusive_keeps_what_is_there(tmp_path):
    path = tmp_path / "x.bin"
    with fsio.atomic_file(path, exclusive=True) as f:
        f.write(b"first")
    with pytest.raises(FileExistsError), fsio.atomic_file(path, exclusive=True) as f:
        f.write(b"second")
    assert path.read_bytes() == b"first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.bin"]
