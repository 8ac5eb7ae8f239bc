"""asrbench/resumable.py, the one home of partial downloads: resume points, the chunk journal,
and the verify-then-rename that keeps a rejected file out (the importer's HTTP fetch and the
zoo's pull run through it in tests/importers/test_download.py and tests/zoo/test_zoo_faults.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from asrbench.errors import AsrbenchError
from asrbench.identity import bytes_sha256, hash_file
from asrbench.resumable import ChunkedPart, InOrderPart

DATA = bytes(range(256)) * 40  # 10240 bytes: three chunks of 4096, the last one short


class Mismatch(AsrbenchError):
    pass


def _same(want: str):
    def check(got: str) -> str:
        if got != want:
            raise Mismatch(f"expected {want}, got {got}")
        return got

    return check


def test_in_order_resumes_from_its_size_and_restarts_a_part_too_long(tmp_path: Path) -> None:
    part = InOrderPart(tmp_path / "dl", "a.tar")
    assert part.resume_from(len(DATA)) == 0
    part.write([DATA[:1000], DATA[1000:3000]], 0, lambda n: None)
    assert part.part.name == "a.tar.part" and part.resume_from(len(DATA)) == 3000
    advanced: list[int] = []
    part.write([DATA[3000:]], 3000, advanced.append)  # appended, not rewritten
    assert advanced == [len(DATA) - 3000] and part.resume_from(len(DATA)) is None
    assert part.resume_from(100) == 0 and not part.part.exists()  # longer than expected: dropped


def test_a_part_the_check_rejects_is_removed_and_one_it_accepts_renamed(tmp_path: Path) -> None:
    part = InOrderPart(tmp_path, "a.tar")
    part.write([DATA], 0, lambda n: None)
    final = tmp_path / "out" / "a.tar"
    with pytest.raises(Mismatch):
        part.commit(final, lambda p: _same("0" * 64)(hash_file(p)))
    assert not part.part.exists() and not final.exists()  # never kept, nor resumed
    part.write([DATA], 0, lambda n: None)
    got = part.commit(final, lambda p: _same(bytes_sha256(DATA))(hash_file(p)))
    assert got == bytes_sha256(DATA) and final.read_bytes() == DATA and not part.part.exists()
    assert os.access(final, os.W_OK)  # read_only is the zoo's choice, not the default


def test_chunks_are_journalled_and_a_rerun_fetches_only_the_others(tmp_path: Path) -> None:
    first = ChunkedPart(tmp_path, "obj", len(DATA), 4096)
    assert first.todo == [0, 4096, 8192] and first.resumed_bytes == 0
    assert first.write_chunk(8192, DATA[8192:]) is False
    assert first.write_chunk(0, DATA[:4096]) is False
    first.close()  # interrupted here
    assert (tmp_path / "obj.done").read_text() == "8192\n0\n"
    again = ChunkedPart(tmp_path, "obj", len(DATA), 4096)
    assert again.todo == [4096] and again.resumed_bytes == 4096 + len(DATA) - 8192
    assert again.write_chunk(4096, DATA[4096:8192]) is True
    final = tmp_path / "objects" / "obj"
    again.commit(final, lambda p: _same(bytes_sha256(DATA))(hash_file(p)), read_only=True)
    assert final.read_bytes() == DATA and not stat.S_IMODE(final.stat().st_mode) & 0o222
    assert sorted(p.name for p in tmp_path.iterdir()) == ["objects"]  # part and journal gone


def test_a_journal_beside_a_part_of_the_wrong_size_is_not_trusted(tmp_path: Path) -> None:
    (tmp_path / "obj.part").write_bytes(DATA[:10])
    (tmp_path / "obj.done").write_text("0\n4096\n")
    part = ChunkedPart(tmp_path, "obj", len(DATA), 4096)
    assert part.todo == [0, 4096, 8192] and not (tmp_path / "obj.done").exists()
    part.close()


def test_a_whole_object_is_checked_in_memory_before_it_is_written(tmp_path: Path) -> None:
    part = ChunkedPart(tmp_path, "obj", 100, 4096)
    final = tmp_path / "objects" / "obj"
    with pytest.raises(Mismatch):
        part.commit_whole(b"x" * 100, final, lambda b: _same("0" * 64)(bytes_sha256(b)))
    assert list(tmp_path.iterdir()) == []
    part = ChunkedPart(tmp_path, "obj", 100, 4096)
    part.commit_whole(b"y" * 100, final, lambda b: _same(bytes_sha256(b"y" * 100))(bytes_sha256(b)))
    assert final.read_bytes() == b"y" * 100 and sorted(p.name for p in tmp_path.iterdir()) == [
        "objects"
    ]
