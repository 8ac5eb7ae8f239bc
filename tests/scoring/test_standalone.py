"""`scoring/` is a library on its own: it imports nothing from the platform, its modules import
each other without cycles, and it writes no files (the platform does, atomically)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import scoring

ROOT = Path(scoring.__file__).resolve().parent
SOURCES = sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every module an import statement names, wherever it sits (functions, TYPE_CHECKING)."""
    out = []
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            out.append((base, node.lineno))
            # `from scoring import report` names the module scoring.report
            out += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
    return out


def test_scoring_imports_nothing_from_asrbench() -> None:
    assert len(SOURCES) > 10
    found = [
        f"{p.relative_to(ROOT.parent)}:{line}: {name}"
        for p in SOURCES
        for name, line in _imports(p)
        if name == "asrbench" or name.startswith("asrbench.")
    ]
    assert not found


def test_importing_scoring_loads_no_asrbench_module() -> None:
    code = (
        "import sys, scoring, scoring.report, scoring.io, scoring.stats, scoring.wfst, "
        "scoring.normalize\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'asrbench'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT.parent, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_no_import_cycles_between_scoring_modules() -> None:
    modules = {_module(p): p for p in SOURCES}
    graph = {
        m: {name for name, _ in _imports(p) if name in modules and name != m}
        for m, p in modules.items()
    }
    # A package's __init__ re-exports its modules (an edge downwards only); every other edge
    # between modules must leave the graph acyclic.
    for m in graph:
        graph[m] = {d for d in graph[m] if not m.startswith(d + ".") or d == "scoring"} - {
            "scoring"
        }
    state: dict[str, int] = {}

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            assert state.get(d) != 1, " -> ".join([*stack, m, d])
            if d not in state:
                visit(d, [*stack, m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    assert "scoring.scorer" not in graph["scoring.report"]
    assert "scoring.report" not in graph["scoring.scorer"]


def test_scoring_writes_no_files() -> None:
    # Text producers only. The files scoring keeps are NSW's caches: its own SQLite result cache,
    # and the compacted English tagger that nemo_tagger.py writes beside nemo's grammar archive
    # (a grammar derived from a grammar, like the .far files nemo itself writes there; never a
    # result). Nothing else may write.
    writers = ("write_text", "write_bytes", "os.replace", "tempfile", "atomic_write", "fsync")
    grammar_cache = {"nemo_tagger.py": {"write_text", "os.replace"}}
    found = [
        f"{p.relative_to(ROOT.parent)}: {w}"
        for p in SOURCES
        for w in writers
        if w in p.read_text(encoding="utf-8") and w not in grammar_cache.get(p.name, set())
    ]
    assert not found
    opened = [
        f"{p.relative_to(ROOT.parent)}:{node.lineno}"
        for p in SOURCES
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open"
    ]
    assert not opened
