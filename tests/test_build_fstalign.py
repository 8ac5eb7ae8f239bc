"""scripts/build_fstalign.sh (make fstalign): its strtk stand-in splits as strtk does, and a bad
source is one line naming it, exit 2."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# strtk::split(delimiters, text, ..., compress_delimiters) as strtk.hpp's loop gives it: a
# leading delimiter makes an empty first token, a run of delimiters one cut, a trailing
# delimiter an empty last token (fstalign trims its texts first).
CASES = [
    (" ", "a b  c", ["a", "b", "c"]),
    ("|", "hello|hi;hey", ["hello", "hi;hey"]),
    (";", "a b;c d", ["a b", "c d"]),
    ("-", "long-term", ["long", "term"]),
    ("-", "-x--y-", ["", "x", "y", ""]),
    (" ", "", []),
]


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler (make apt)")
def test_the_strtk_stand_in_splits_as_strtk(tmp_path: Path) -> None:
    body = "".join(
        f'  {{ std::vector<std::string> v; strtk::split("{d}", std::string("{t}"), '
        "strtk::range_to_type_back_inserter(v), strtk::split_options::compress_delimiters); "
        'for (auto &x : v) std::cout << "[" << x << "]"; std::cout << "\\n"; }\n'
        for d, t, _ in CASES
    )
    src = tmp_path / "t.cpp"
    src.write_text("#include <iostream>\n#include <strtk/strtk.hpp>\nint main() {\n" + body + "}\n")
    shim = tmp_path / "include" / "strtk"
    shim.mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "fstalign_shim" / "strtk.hpp", shim / "strtk.hpp")
    exe = tmp_path / "t"
    cmd = ["g++", "-std=c++14", "-I", str(tmp_path / "include"), str(src), "-o", str(exe)]
    subprocess.run(cmd, check=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert lines.splitlines() == ["".join(f"[{x}]" for x in want) for _, _, want in CASES]


def test_a_folder_that_is_not_fstalign_is_one_line(tmp_path: Path) -> None:
    run = subprocess.run(
        [str(ROOT / "scripts" / "build_fstalign.sh"), str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "FSTALIGN_HOME": str(tmp_path / "home")},
    )
    assert run.returncode == 2
    # a machine without the packages is told which to install; one with them, what is wrong
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("build_fstalign: ")
    assert "not an fstalign source tree" in run.stderr or "make apt" in run.stderr
    assert not (tmp_path / "home").exists()
