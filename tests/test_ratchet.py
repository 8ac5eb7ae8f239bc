"""The complexity ratchet (scripts/ratchet.py): new or worse offenders fail, improvements must be
recorded, and offenders are keyed by qualified function name."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from asrbench.settings import REPO_ROOT

spec = importlib.util.spec_from_file_location("ratchet", REPO_ROOT / "scripts" / "ratchet.py")
ratchet = importlib.util.module_from_spec(spec)
sys.modules["ratchet"] = ratchet
spec.loader.exec_module(ratchet)


def test_qualified_names_of_functions_methods_and_nested_defs(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "def a():\n    def inner():\n        pass\n\n\nclass K:\n    async def b(self):\n"
        "        pass\n"
    )
    names = {line: name for line, (name, _) in ratchet._functions(src).items()}
    assert names == {1: "a", 2: "a.inner", 7: "K.b"}


def test_new_or_worse_offenders_fail_and_improvements_are_reported() -> None:
    base = {"x.py::f::C901": 12, "x.py::g::PLR0913": 8, "x.py::h::C901": 11}
    now = {"x.py::f::C901": 13, "x.py::g::PLR0913": 7, "y.py::k::PLR0915": 60}
    worse, better = ratchet.compare(base, now)
    assert worse == ["x.py::f::C901: 13 (was 12)", "y.py::k::PLR0915: 60 (new)"]
    assert better == ["x.py::g::PLR0913: 7 (was 8)", "x.py::h::C901: gone (was 11)"]
    assert ratchet.compare(base, dict(base)) == ([], [])


def test_typer_commands_are_not_counted_for_arguments_but_plain_helpers_are(
    tmp_path: Path,
) -> None:
    src = tmp_path / "cmd.py"
    src.write_text(
        "import typer\n\n"
        "def command(a: int = typer.Option(1), b: int = typer.Argument(...)):\n    pass\n\n"
        "def aliased(x: AddressOpt = None, y: int = 2):\n    pass\n\n"
        "def helper(a, b, c, d, e, f, g):\n    pass\n"
    )
    commands = {line for line, (_, command) in ratchet._functions(src).items() if command}
    assert commands == {3, 6}


def test_long_functions_are_measured_by_lines_nested_ones_on_their_own(tmp_path: Path) -> None:
    src = tmp_path / "long.py"
    body = "".join(f"    x{i} = {i}\n" for i in range(5))
    inner = "".join(f"        y{i} = {i}\n" for i in range(10))
    src.write_text(
        f"def short():\n{body}\n"
        f"def outer():\n{body}    def inner():\n{inner}        return 1\n    return inner\n"
    )
    # outer: def + 5 + def inner + 10 + return 1 + return = 19 lines; inner: 12
    assert ratchet._lengths(src, limit=10) == {"outer": 19, "outer.inner": 12}
    assert ratchet._lengths(src, limit=19) == {}


def test_the_length_rule_is_part_of_the_measure_and_recorded() -> None:
    now = ratchet.measure()
    longs = {k: v for k, v in now.items() if k.endswith(f"::{ratchet.LENGTH}")}
    assert longs and all(v > ratchet.MAX_LINES for v in longs.values())
    # a new long function fails the check like any other new offender
    worse, _ = ratchet.compare(now, {**now, f"asrbench/x.py::f::{ratchet.LENGTH}": 101})
    assert worse == [f"asrbench/x.py::f::{ratchet.LENGTH}: 101 (new)"]
    # and a recorded long function may not grow, not even by one line
    key = next(iter(longs))
    worse, _ = ratchet.compare(now, {**now, key: now[key] + 1})
    assert worse == [f"{key}: {now[key] + 1} (was {now[key]})"]
