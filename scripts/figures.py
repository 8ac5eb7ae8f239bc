#!/usr/bin/env python3
"""Figures that reproduce: collect stored results into docs/figures/NAME.json, render the marked
blocks of README.md and docs/*.md from them (the logic is asrbench/figures.py).

    .venv/bin/python scripts/figures.py collect mini_en_models -d mini_en \\
        -m pocketsphinx_en -m whisper_tiny_en [--results results]
    .venv/bin/python scripts/figures.py render            # rewrite the blocks
    .venv/bin/python scripts/figures.py render --check    # exit 1 when a block is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asrbench import figures
from asrbench.errors import AsrbenchError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="stored results -> docs/figures/NAME.json")
    c.add_argument("name")
    c.add_argument("-d", "--dataset", required=True)
    c.add_argument("-m", "--model", action="append", required=True)
    c.add_argument("--results", type=Path, default=Path("results"))
    c.add_argument("--out", type=Path, default=figures.FIGURES)
    r = sub.add_parser("render", help="rewrite the marked blocks of README.md and docs/*.md")
    r.add_argument("--check", action="store_true", help="change nothing; exit 1 if any is stale")
    r.add_argument("--root", type=Path, default=figures.REPO_ROOT)
    r.add_argument("--figures", type=Path, default=figures.FIGURES)
    args = ap.parse_args(argv)
    try:
        return _run(args, argv if argv is not None else sys.argv[1:])
    except AsrbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.cmd == "collect":
        # recorded in the figure, so the text under the table names the command that made it
        cmd = ["python", "scripts/figures.py", *argv]
        path = figures.collect(args.name, args.dataset, args.model, args.results, args.out, cmd)
        print(f"wrote {path}")
        return 0
    docs = figures.documents(args.root)
    if args.check:
        stale = figures.stale(docs, args.figures)
        for b in stale:
            print(f"{b.path}: figure {b.name} differs from its data; run {figures.RENDER}")
        return 1 if stale else 0
    for path in docs:
        if figures.rewrite(path, args.figures):
            print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
