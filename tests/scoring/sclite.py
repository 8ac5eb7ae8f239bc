"""Test helpers: run NIST sclite (Debian `sctk`) for the parity tests; write trn and GLM files,
parse `pra` scores. Only the tests use them, so they live here, not in `scoring/`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

# Debian installs sclite here and only a `sctk` wrapper on PATH.
_SCTK_BIN = Path("/usr/lib/sctk/bin")
_SCORES = re.compile(r"^Scores: \(#C #S #D #I\) (\d+) (\d+) (\d+) (\d+)")
_ID = re.compile(r"^id: \((.*)\)")


def find_sclite() -> str | None:
    """Path of the sclite binary, or None."""
    found = shutil.which("sclite")
    if found:
        return found
    cand = _SCTK_BIN / "sclite"
    return str(cand) if cand.is_file() else None


def find_csrfilt() -> str | None:
    """Path of csrfilt.sh, or None (it needs sctk's rfilter1 on PATH: see `_env`)."""
    found = shutil.which("csrfilt.sh")
    if found:
        return found
    cand = _SCTK_BIN / "csrfilt.sh"
    return str(cand) if cand.is_file() else None


def _env() -> dict[str, str]:
    # csrfilt.sh calls rfilter1 by name, which Debian keeps beside it, off PATH.
    env = dict(os.environ)
    env["PATH"] = f"{_SCTK_BIN}:{env.get('PATH', '')}"
    return env


def write_glm(rules: list[tuple[tuple[str, ...], ...]], path: Path) -> None:
    """A NIST GLM that turns every form of each rule into the alternation of all its forms."""
    lines = [
        ";;",
        '* name "asrbench-dae"',
        '* desc "DAE alternatives exported for sclite parity"',
        "* format = 'NIST1'",
        f"* max_nrules = '{10 * sum(len(r) for r in rules) + 100}'",
        "* copy_no_hit = 'T'",
        "* case_sensitive = 'T'",
        ";;",
    ]
    for forms in rules:
        alts = " / ".join(" ".join(f) for f in forms)
        for f in forms:
            lines.append(f"{' '.join(f)} => {{{alts}}} / [ ] __ [ ]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_trn(path: Path, texts: dict[str, str]) -> None:
    """sclite `trn`: `TEXT (ID)` per line."""
    path.write_text("".join(f"{t} ({k})\n" for k, t in texts.items()), encoding="utf-8")


def write_deletion_glm(tokens: list[str], path: Path) -> None:
    """A NIST GLM that deletes each of `tokens` (non-speech tags, as NIST filters them)."""
    lines = [
        ";;",
        '* name "asrbench-nonspeech"',
        '* desc "non-speech tags deleted for sclite parity"',
        "* format = 'NIST1'",
        f"* max_nrules = '{len(tokens) + 100}'",
        "* copy_no_hit = 'T'",
        "* case_sensitive = 'F'",
        ";;",
    ]
    lines += [f"{t} => / [ ] __ [ ]" for t in tokens]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _filter(glm: Path, side: str, src_path: Path, dst_path: Path) -> None:
    filt = find_csrfilt()
    if filt is None:
        raise FileNotFoundError("csrfilt.sh not found: apt-get install sctk")
    with src_path.open("rb") as src, dst_path.open("wb") as dst:
        proc = subprocess.run(
            [filt, "-s", "-i", "trn", "-t", side, str(glm)],
            stdin=src,
            stdout=dst,
            stderr=subprocess.PIPE,
            env=_env(),
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"csrfilt.sh failed ({proc.returncode}): {proc.stderr[-2000:]!r}")


def run_sclite(
    refs: dict[str, list[str]],
    hyps: dict[str, list[str]],
    workdir: Path,
    glm: Path | None = None,
    ref_glm: Path | None = None,
    optional: bool = False,
    fragments: bool = False,
    extra: tuple[str, ...] = (),
) -> dict[str, tuple[int, int, int, int]]:
    """Score tokenised texts with sclite; returns {id: (C, S, D, I)} parsed from its pra output.

    With `glm`, the hypothesis is first filtered by `csrfilt.sh -t hyp` (alternations); with
    `ref_glm`, the reference by `csrfilt.sh -t ref`. With `optional`, sclite's `-D`: reference
    words in parentheses are optionally deletable (scored correct when deleted). With
    `fragments`, sclite's `-F`: a fragment (`th-`, `-ing`) is correct against a word it begins
    or ends. `extra`: further sclite options (`-s`: case-sensitive)."""
    exe = find_sclite()
    if exe is None:
        raise FileNotFoundError("sclite not found: apt-get install sctk")
    workdir.mkdir(parents=True, exist_ok=True)
    write_trn(workdir / "ref.trn", {k: " ".join(v) for k, v in refs.items()})
    write_trn(workdir / "hyp.trn", {k: " ".join(v) for k, v in hyps.items()})
    hyp_file, ref_file = "hyp.trn", "ref.trn"
    if glm is not None:
        _filter(glm, "hyp", workdir / "hyp.trn", workdir / "hyp.glm.trn")
        hyp_file = "hyp.glm.trn"
    if ref_glm is not None:
        _filter(ref_glm, "ref", workdir / "ref.trn", workdir / "ref.glm.trn")
        ref_file = "ref.glm.trn"
    cmd = (
        [
            exe,
            "-r",
            ref_file,
            "trn",
            "-h",
            hyp_file,
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
        + (["-D"] if optional else [])
        + (["-F"] if fragments else [])
        + list(extra)
    )
    return _run(cmd, workdir)


def run_sclite_timed(
    stm: Path, ctm: Path, workdir: Path, fragments: bool = False
) -> dict[str, tuple[int, int, int, int]]:
    """`sclite -r STM stm -h CTM ctm -D`: {sclite's segment ID (`SPEAKER-NNN`): (C, S, D, I)}."""
    exe = find_sclite()
    if exe is None:
        raise FileNotFoundError("sclite not found: apt-get install sctk")
    workdir.mkdir(parents=True, exist_ok=True)
    cmd = [exe, "-r", str(stm), "stm", "-h", str(ctm), "ctm", "-e", "utf-8", "-D"]
    cmd += ["-o", "pra", "-O", str(workdir), "-n", "out"] + (["-F"] if fragments else [])
    return _run(cmd, workdir)


def _run(cmd: list[str], workdir: Path) -> dict[str, tuple[int, int, int, int]]:
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
