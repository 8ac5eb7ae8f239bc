"""The complexity ratchet: functions too complex, too long or with too many arguments may exist
(they are listed in .ci/ratchet.json with their measure), but none may be added and none may get
worse; when one improves or disappears, the list must be tightened in the same change.

    python scripts/ratchet.py            # check (make lint runs this; CI fails on any change)
    python scripts/ratchet.py --update   # after making functions simpler: write the lower list

The measures are ruff's (C901 McCabe complexity, PLR0913 arguments, PLR0915 statements), with the
limits in pyproject.toml's [tool.ruff.lint.mccabe] and [tool.ruff.lint.pylint], and the ratchet's
own LENGTH: a function's lines, `def` to its last line, over MAX_LINES (statements alone let a
function of long expressions, a 268-line report builder, pass). Each offender is keyed by file,
rule and qualified function name, so moving code around a file does not trip it.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "ratchet.json"
RULES = ("C901", "PLR0913", "PLR0915")
# the code users run; tests are left out (a test function taking many fixtures is not a design)
TREES = ("asrbench", "scoring", "models", "benchmarks", "scripts")
# The argument count is not measured on typer commands: each option is a parameter of the
# command function, so it counts the options a command offers, not what a caller must pass.
# Their complexity and length still are, and so are the CLI's plain helper functions.
FORMAT = "asrbench.ratchet/1"
LENGTH = "LENGTH"
MAX_LINES = 100  # a function longer than a screen and a half is several steps without names
_MEASURE = re.compile(r"\((\d+) > \d+\)")


def _is_typer_param(arg: ast.arg, default: ast.expr | None) -> bool:
    text = ast.unparse(default) if default is not None else ""
    ann = ast.unparse(arg.annotation) if arg.annotation is not None else ""
    return text.startswith(("typer.Option", "typer.Argument")) or ann.endswith("Opt")


def _is_typer_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Its parameters are typer options: a default of `typer.Option(...)` or
    `typer.Argument(...)`, or an `...Opt` annotated alias."""
    args = node.args.args + node.args.kwonlyargs
    defaults: list[ast.expr | None] = [None] * (len(node.args.args) - len(node.args.defaults))
    defaults += node.args.defaults + node.args.kw_defaults
    return any(_is_typer_param(a, d) for a, d in zip(args, defaults, strict=True))


def _defs(tree: ast.AST) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a module with its qualified name (Class.method, outer.inner)."""
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.append((name, child))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _functions(path: Path) -> dict[int, tuple[str, bool]]:
    """Line of each `def` -> its qualified name (Class.method, outer.inner) and whether it is a
    typer command, from one parse of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.lineno: (name, _is_typer_command(node)) for name, node in _defs(tree)}


def _lengths(path: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """Qualified name -> lines, of the functions of `path` longer than `limit` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, int] = {}
    for name, node in _defs(tree):
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        if lines > limit:
            found[name] = lines
    return found


def _long_functions() -> dict[str, int]:
    """`path::Qual.name::LENGTH` -> lines, over the files ruff measures: those of TREES that git
    does not ignore (built virtualenvs and caches under models/ are not code of ours)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *TREES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    found: dict[str, int] = {}
    for rel in sorted(r for r in listed if r.endswith(".py") and (ROOT / r).is_file()):
        for name, lines in _lengths(ROOT / rel).items():
            found[f"{rel}::{name}::{LENGTH}"] = lines
    return found


def measure() -> dict[str, int]:
    """`path::Qual.name::RULE` -> the measure ruff reports, over the whole tree."""
    ruff = Path(sys.executable).with_name("ruff")
    cmd = [str(ruff) if ruff.exists() else "ruff", "check", "--select", ",".join(RULES)]
    proc = subprocess.run(
        [*cmd, "--output-format", "json", "--exit-zero", "--no-cache", *TREES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, int] = {}
    functions: dict[Path, dict[int, tuple[str, bool]]] = {}
    for item in json.loads(proc.stdout):
        path = Path(item["filename"])
        rel = path.relative_to(ROOT).as_posix()
        if path not in functions:
            functions[path] = _functions(path)
        row = item["location"]["row"]
        name, command = functions[path].get(row, (f"line{row}", False))
        if item["code"] == "PLR0913" and command:
            continue  # a typer command's parameters are its options, declared, not passed
        m = _MEASURE.search(item["message"])
        found[f"{rel}::{name}::{item['code']}"] = int(m.group(1)) if m else 1
    found.update(_long_functions())
    return dict(sorted(found.items()))


def compare(base: dict[str, int], now: dict[str, int]) -> tuple[list[str], list[str]]:
    """(worse: new offenders or higher measures, better: offenders gone or lower)."""
    worse = [
        f"{k}: {now[k]} (was {base[k]})" if k in base else f"{k}: {now[k]} (new)"
        for k in now
        if now[k] > base.get(k, 0)
    ]
    better = [f"{k}: {now.get(k, 'gone')} (was {base[k]})" for k in base if now.get(k, 0) < base[k]]
    return worse, better


def _refuse(title: str, lines: list[str]) -> int:
    """Say why on stderr, one offender a line; the exit status 1."""
    print(title, file=sys.stderr)
    print("\n".join(f"  {line}" for line in lines), file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="write the current list (tighten)")
    args = ap.parse_args(argv)
    now = measure()
    base: dict[str, int] = {}
    if BASELINE.exists():
        data = json.loads(BASELINE.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            print(f"{BASELINE}: not a {FORMAT} file", file=sys.stderr)
            return 2
        base = data["offenders"]
    worse, better = compare(base, now)
    if args.update:
        if worse and BASELINE.exists():
            return _refuse("refusing to loosen the ratchet; these got worse:", worse)
        text = json.dumps({"format": FORMAT, "offenders": now}, indent=1, ensure_ascii=False)
        BASELINE.write_text(text + "\n", encoding="utf-8")
        print(f"{BASELINE.relative_to(ROOT)}: {len(now)} offender(s)")
        return 0
    if worse:
        return _refuse(
            "complexity ratchet: new or worse offenders (split the function into named steps, or "
            "pass fewer arguments, e.g. one frozen spec):",
            worse,
        )
    if better:
        return _refuse(
            "complexity ratchet: these improved; tighten the list with "
            "`python scripts/ratchet.py --update` and commit .ci/ratchet.json:",
            better,
        )
    print(f"complexity ratchet: {len(now)} known offender(s), none new or worse")
    return 0


if __name__ == "__main__":
    sys.exit(main())
