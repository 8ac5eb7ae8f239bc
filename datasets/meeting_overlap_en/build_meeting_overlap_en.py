#!/usr/bin/env python3
"""Rebuild the composed meeting set `meeting_overlap_en` (deterministic, byte for byte).

The design (sessions, speakers, overlap bins, pauses, noise bed, seed) is in
asrbench/importers/meeting_overlap.py; the same code composes the audio on first use from a
clone (asrbench/importers/composed.py), so only the references and composed.json are committed.

    .venv/bin/python datasets/meeting_overlap_en/build_meeting_overlap_en.py [--out FOLDER]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from asrbench.importers import composed, meeting_overlap  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=HERE, help="folder to write (default: this one)")
    args = ap.parse_args()
    composed.build(meeting_overlap.NAME, args.out)


if __name__ == "__main__":
    main()
