"""Write tests/durations.json from a whole run's JUnit XML: seconds per scheduling group.

`make test` hands test files to its two workers longest first (tests/conftest.py); the order
comes from this file. After a whole run with `--junitxml=RUN.xml`:

    .venv/bin/python scripts/test_durations.py RUN.xml

A testcase's time is setup, call and teardown (pytest's default `junit_duration_report`), so a
module fixture's cost counts in its file. Groups are the scheduler's own (`xdist_group`).
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asrbench.fsio import atomic_write_text  # noqa: E402
from tests.conftest import DURATIONS, xdist_group  # noqa: E402


def test_file(classname: str) -> str:
    """`tests.ray.test_x.TestY` -> `tests/ray/test_x.py` (the last `test_` part is the module)."""
    parts = classname.split(".")
    last = max(k for k, part in enumerate(parts) if part.startswith("test_"))
    return "/".join(parts[: last + 1]) + ".py"


def group_seconds(junit: Path) -> dict[str, float]:
    """Seconds per scheduling group, summed over the run's testcases."""
    seconds: Counter[str] = Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        seconds[xdist_group(test_file(case.get("classname", "")))] += float(case.get("time", 0))
    return {group: round(s, 1) for group, s in sorted(seconds.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("junit", type=Path, help="JUnit XML of a whole run (pytest --junitxml)")
    ap.add_argument("-o", "--out", type=Path, default=DURATIONS)
    args = ap.parse_args(argv)
    seconds = group_seconds(args.junit)
    total = round(sum(seconds.values()), 1)
    doc = {"source": args.junit.name, "total_s": total, "seconds": seconds}
    atomic_write_text(args.out, json.dumps(doc, indent=1) + "\n")
    print(f"{args.out}: {len(seconds)} group(s), {doc['total_s']} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
