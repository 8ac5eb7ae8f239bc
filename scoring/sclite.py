"""Running NIST sclite (Debian `sctk`) for parity checks: write trn files, parse `pra` scores."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

_SCTK_BIN = Path(
    "/usr/lib/sctk/bin"
)  # Debian installs sclite here and only a `sctk` wrapper on PATH
_SCORES = re.compile(r"^Scores: \(#C #S #D #I\) (\d+) (\d+) (\d+) (\d+)")
_ID = re.compile(r"^id: \((.*)\)")


def find_sclite() -> str | None:
    """Path of the sclite binary, or None."""
    found = shutil.which("sclite")
    if found:
        return found
    cand = _SCTK_BIN / "sclite"
    return str(cand) if cand.is_file() else None


def write_trn(path: Path, texts: dict[str, str]) -> None:
    """sclite `trn`: `TEXT (ID)` per line."""
    path.write_text("".join(f"{t} ({k})\n" for k, t in texts.items()), encoding="utf-8")


def run_sclite(
    refs: dict[str, list[str]], hyps: dict[str, list[str]], workdir: Path
) -> dict[str, tuple[int, int, int, int]]:
    """Score tokenised texts with sclite; returns {id: (C, S, D, I)} parsed from its pra output."""
    exe = find_sclite()
    if exe is None:
        raise FileNotFoundError("sclite not found: apt-get install sctk")
    workdir.mkdir(parents=True, exist_ok=True)
    write_trn(workdir / "ref.trn", {k: " ".join(v) for k, v in refs.items()})
    write_trn(workdir / "hyp.trn", {k: " ".join(v) for k, v in hyps.items()})
    cmd = [
        exe,
        "-r",
        "ref.trn",
        "trn",
        "-h",
        "hyp.trn",
        "trn",
        "-i",
        "spu_id",
        "-e",
        "utf-8",
        "-o",
        "pra",
        "-O",
        str(workdir),
        "-n",
        "out",
    ]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"sclite failed ({proc.returncode}): {proc.stderr[-2000:]}")
    out: dict[str, tuple[int, int, int, int]] = {}
    current = None
    for line in (workdir / "out.pra").read_text(encoding="utf-8", errors="replace").splitlines():
        m = _ID.match(line)
        if m:
            current = m.group(1)
            continue
        m = _SCORES.match(line)
        if m and current is not None:
            out[current] = tuple(int(x) for x in m.groups())  # type: ignore[assignment]
            current = None
    return out
