"""The import graph of the platform, from the code: `make architecture` rewrites the picture in
docs/ARCHITECTURE.md, and tests/test_architecture.py checks the rules it shows.

    python scripts/import_graph.py            # print the generated section (graph, counts, cycles)
    python scripts/import_graph.py --write    # regenerate the generated part of the doc

What counts as an import of one project module by another: every `import` and `from ... import`
statement naming a module of `asrbench/` or `scoring/`, wherever it stands: at module level, in
a class body, under `if`/`try`, and inside functions. An import inside a function runs when the
function is first called, and a cycle through it is a cycle all the same: the two modules cannot
be understood, tested or moved apart. Only `if TYPE_CHECKING:` blocks are left out (they never
run). `from pkg import name` is an import of the submodule `pkg.name` when that module exists,
else of `pkg` (Python loads a module's parent packages first either way; that alone is no edge).

Declared lazy, by one mechanical rule: an import inside a function of a module under
`asrbench/cli/`. A subcommand imports the code it drives only when it runs, so `asrbench score`
starts without Docker, boto3 or the DSP stack. Declared-lazy imports are still edges (they count
for cycles); they are counted apart so that the other imports inside functions stay visible. In
the picture an arrow drawn dashed exists only through imports inside functions.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("asrbench", "scoring")
LAZY_PREFIX = "asrbench.cli."  # imports inside functions of these modules are declared lazy
DOC = ROOT / "docs" / "ARCHITECTURE.md"
BEGIN, END = "<!-- import-graph:begin -->", "<!-- import-graph:end -->"


@dataclass(frozen=True)
class Import:
    """One import statement's edge: `source` imports project module `target` at `line`."""

    source: str
    target: str
    line: int
    in_function: bool

    @property
    def lazy(self) -> bool:
        """Declared lazy: inside a function of a CLI module (see the module docstring)."""
        return self.in_function and (self.source + ".").startswith(LAZY_PREFIX)


def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(
    node: ast.Import | ast.ImportFrom, mod: str, is_pkg: bool, known: set[str]
) -> set[str]:
    """The project modules one import statement loads (unknown names: third-party, dropped)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known}
    if node.level:
        base = mod.split(".")
        base = base[: len(base) - node.level + (1 if is_pkg else 0)]
        package = ".".join(base + ([node.module] if node.module else []))
    else:
        package = node.module or ""
    out = set()
    for alias in node.names:
        sub = f"{package}.{alias.name}"
        if sub in known:
            out.add(sub)
        elif package in known:
            out.add(package)
    return out


def parse_imports(source: str, mod: str, is_pkg: bool, known: set[str]) -> list[Import]:
    """Every import of a module in `known` by module `mod` (whose text is `source`)."""
    out: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.orelse:
                    visit_stmt(stmt, in_function)
                continue
            visit_stmt(child, in_function)

    def visit_stmt(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in sorted(_targets(node, mod, is_pkg, known) - {mod}):
                out.append(Import(mod, target, node.lineno, in_function))
            return
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        visit(node, inner)

    visit(ast.parse(source), False)
    return out


def scan(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[Import]:
    """Every project import under `root`'s `packages`, in file and line order."""
    files = sorted(
        p for pkg in packages for p in (root / pkg).rglob("*.py") if "__pycache__" not in p.parts
    )
    mods = {module_name(p, root): p for p in files}
    known = set(mods)
    out: list[Import] = []
    for mod, path in sorted(mods.items()):
        text = path.read_text(encoding="utf-8")
        out += parse_imports(text, mod, path.name == "__init__.py", known)
    return out


def graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """module -> the project modules it imports, every module of `packages` a key."""
    files = [
        p for pkg in packages for p in (root / pkg).rglob("*.py") if "__pycache__" not in p.parts
    ]
    edges: dict[str, set[str]] = {module_name(p, root): set() for p in files}
    for imp in scan(root, packages):
        edges[imp.source].add(imp.target)
    return edges


class _Tarjan:
    """Tarjan's strongly connected components over `edges`, visited in sorted order."""

    def __init__(self, edges: dict[str, set[str]]) -> None:
        self.edges = edges
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.stack: list[str] = []
        self.on: set[str] = set()
        self.found: list[list[str]] = []

    def visit(self, v: str) -> None:
        self.index[v] = self.low[v] = len(self.index)
        self.stack.append(v)
        self.on.add(v)
        for w in sorted(self.edges.get(v, ())):
            if w not in self.index:
                self.visit(w)
                self.low[v] = min(self.low[v], self.low[w])
            elif w in self.on:
                self.low[v] = min(self.low[v], self.index[w])
        if self.low[v] == self.index[v]:
            comp = self._pop(v)
            if len(comp) > 1:
                self.found.append(sorted(comp))

    def _pop(self, v: str) -> list[str]:
        comp = []
        while True:
            w = self.stack.pop()
            self.on.discard(w)
            comp.append(w)
            if w == v:
                return comp


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node: the import cycles."""
    sys.setrecursionlimit(10000)
    tarjan = _Tarjan(edges)
    for v in sorted(edges):
        if v not in tarjan.index:
            tarjan.visit(v)
    return sorted(tarjan.found)


def package_of(mod: str) -> str:
    """Group modules by concern: asrbench.<sub> for sub-packages, else the module."""
    parts = mod.split(".")
    if parts[0] == "scoring":
        return "scoring"
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]


def package_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for a, targets in edges.items():
        pa = package_of(a)
        out.setdefault(pa, set())
        for b in targets:
            pb = package_of(b)
            if pb != pa:
                out[pa].add(pb)
    return out


def _load_time(imports: list[Import], edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The package edges that exist through module-level imports (the rest: inside functions)."""
    top = {m: set() for m in edges}
    for imp in imports:
        if not imp.in_function:
            top[imp.source].add(imp.target)
    return package_edges(top)


def mermaid(pkg: dict[str, set[str]], at_load: dict[str, set[str]]) -> str:
    def node(p: str) -> str:
        return p.replace(".", "_")

    lines = ["```mermaid", "flowchart LR"]
    for p in sorted(pkg):
        lines.append(f'  {node(p)}["{p}"]')
    for a in sorted(pkg):
        for b in sorted(pkg[a]):
            arrow = "-->" if b in at_load.get(a, ()) else "-.->"
            lines.append(f"  {node(a)} {arrow} {node(b)}")
    lines.append("```")
    return "\n".join(lines)


def counts(imports: list[Import]) -> dict[str, int]:
    """Import statements naming project modules: at load time, inside functions, declared lazy."""
    stmts = {(i.source, i.line): i for i in imports}.values()
    inside = [i for i in stmts if i.in_function]
    return {
        "total": len(stmts),
        "load_time": len(stmts) - len(inside),
        "in_functions": len(inside),
        "lazy": sum(i.lazy for i in inside),
    }


def _cycle_text(found: list[list[str]]) -> str:
    return "\n".join(f"- {' <-> '.join(c)}" for c in found) if found else "- none"


def generated_section(root: Path = ROOT) -> str:
    """The generated part of docs/ARCHITECTURE.md, from the code under `root`."""
    imports, edges = scan(root), graph(root)
    pkg = package_edges(edges)
    at_load = _load_time(imports, edges)
    n = counts(imports)
    table = ["| package | imports at load time | imports only inside functions |", "|---|---|---|"]
    for p in sorted(pkg):
        now = sorted(pkg[p] & at_load.get(p, set()))
        later = sorted(pkg[p] - at_load.get(p, set()))
        table.append(
            f"| `{p}` | {', '.join(f'`{q}`' for q in now) or '-'} "
            f"| {', '.join(f'`{q}`' for q in later) or '-'} |"
        )
    summary = (
        f"Project imports counted: {n['total']} import statements, {n['load_time']} at load time "
        f"and {n['in_functions']} inside functions, of which {n['lazy']} are declared lazy "
        f"(inside functions of `asrbench/cli/`) and {n['in_functions'] - n['lazy']} are not. "
        "Every one of them is an edge of the graph; a dashed arrow exists only through imports "
        "inside functions."
    )
    return (
        f"{BEGIN}\n<!-- generated by `make architecture` (scripts/import_graph.py); "
        f"do not edit by hand -->\n\n{mermaid(pkg, at_load)}\n\n"
        + "\n".join(table)
        + f"\n\n{summary}\n\n"
        + "Import cycles between modules (imports inside functions counted):\n\n"
        + f"{_cycle_text(cycles(edges))}\n\n"
        + "Import cycles between packages:\n\n"
        + f"{_cycle_text(cycles(pkg))}\n{END}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"rewrite the section of {DOC}")
    args = ap.parse_args()
    section = generated_section()
    if args.write:
        text = DOC.read_text(encoding="utf-8")
        start, end = text.index(BEGIN), text.index(END) + len(END)
        DOC.write_text(text[:start] + section + text[end:], encoding="utf-8")
        print(f"wrote {DOC.relative_to(ROOT)}")
    else:
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
