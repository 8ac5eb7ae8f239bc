"""Kaldi data dirs: wav.scp, text, optional utt2spk, spk2gender, segments.

Piped wav.scp entries (`cmd args |`) are refused unless `allow_pipes`: then each stage runs
as a plain process list (no shell), and anything needing a shell (redirects, `;`, `&&`,
`$`, backticks, subshells) is refused still.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

from asrbench.importers.common import ImportProblem, Item, decode_bytes, read_audio_file

PIPE_TIMEOUT_S = 600
_SHELL_TOKENS = {";", "&", "&&", "||", "<", ">", ">>", "<<", "(", ")", "`", "$", "|&", ">&"}


def read_table(path: Path, required: bool = True) -> dict[str, tuple[str, int]]:
    """`key rest-of-line` per line -> {key: (rest, line number)}; duplicates are errors."""
    if not path.is_file():
        if required:
            raise ImportProblem(f"{path}: not found (a Kaldi data dir needs it)")
        return {}
    out: dict[str, tuple[str, int]] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        key, _, rest = line.strip().partition(" ")
        if key in out:
            raise ImportProblem(f"{path}:{lineno}: {key!r} repeats line {out[key][1]}")
        out[key] = (rest.strip(), lineno)
    return out


def parse_pipe(command: str, where: str) -> list[list[str]]:
    """Split `a x | b y` into argv lists, refusing any shell feature beyond plain pipes."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars="|;&<>()`$")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise ImportProblem(f"{where}: cannot parse command ({exc})") from exc
    bad = [t for t in tokens if t in _SHELL_TOKENS or (set(t) <= set("|;&<>()`$") and t != "|")]
    if bad:
        raise ImportProblem(
            f"{where}: command uses shell features {bad}; only plain "
            "`prog args | prog args |` pipelines are run (without a shell)"
        )
    stages: list[list[str]] = [[]]
    for t in tokens:
        if t == "|":
            stages.append([])
        else:
            stages[-1].append(t)
    if any(not s for s in stages):
        raise ImportProblem(f"{where}: empty stage in pipeline")
    return stages


def run_pipe(stages: list[list[str]], where: str) -> bytes:
    """Run a pipeline of argv lists without a shell; return the last stage's stdout."""
    procs: list[subprocess.Popen] = []
    try:
        prev = None
        for argv in stages:
            p = subprocess.Popen(argv, stdin=prev, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if prev is not None:
                prev.close()  # the next stage holds it now; lets SIGPIPE reach the writer
            prev = p.stdout
            procs.append(p)
        out, err = procs[-1].communicate(timeout=PIPE_TIMEOUT_S)
        for p in procs[:-1]:
            p.wait(timeout=PIPE_TIMEOUT_S)
    except FileNotFoundError as exc:
        raise ImportProblem(f"{where}: program not found: {exc.filename}") from exc
    except subprocess.TimeoutExpired as exc:
        raise ImportProblem(f"{where}: command ran over {PIPE_TIMEOUT_S} s") from exc
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    failed = [(s[0], p.returncode) for s, p in zip(stages, procs, strict=True) if p.returncode]
    if failed:
        raise ImportProblem(
            f"{where}: {failed[0][0]} exited with {failed[0][1]}: "
            f"{err.decode(errors='replace').strip()[-300:]}"
        )
    return out


def _recording_loader(spec: str, base: Path, where: str, allow_pipes: bool):
    if spec.endswith("|"):
        if not allow_pipes:
            raise ImportProblem(
                f"{where}: piped command `{spec}` refused; rerun with --allow-pipes to run it "
                "(no shell, plain pipelines only), or convert the audio to files first"
            )
        stages = parse_pipe(spec[:-1], where)
        return lambda: decode_bytes(run_pipe(stages, where), where)
    if " " in spec or spec.count(":") and Path(spec.rsplit(":", 1)[0]).suffix == ".ark":
        raise ImportProblem(
            f"{where}: {spec!r} is not a plain file path (ark offsets and "
            "unquoted arguments are not supported)"
        )
    path = Path(spec) if Path(spec).is_absolute() else base / spec
    return lambda: read_audio_file(path, where)


def import_kaldi(
    data_dir: Path, allow_pipes: bool = False, path_base: Path | None = None
) -> Iterator[Item]:
    """Items of a Kaldi data dir; relative wav.scp paths resolve against `path_base` (default:
    the data dir's parent's parent, i.e. the recipe folder `data/x` lives in, as Kaldi runs)."""
    data_dir = Path(data_dir)
    base = path_base or data_dir.parent.parent
    wav = read_table(data_dir / "wav.scp")
    text = read_table(data_dir / "text")
    utt2spk = read_table(data_dir / "utt2spk", required=False)
    spk2gender = read_table(data_dir / "spk2gender", required=False)
    segments = read_table(data_dir / "segments", required=False)
    loaders = {}
    problems = []
    for rec, (spec, lineno) in wav.items():
        try:
            loaders[rec] = _recording_loader(
                spec, base, f"{data_dir / 'wav.scp'}:{lineno}", allow_pipes
            )
        except ImportProblem as exc:
            problems.append(str(exc))
    utts: dict[str, tuple[str, float | None, float | None]]  # recording, start, end (s)
    if segments:
        utts = {}
        for utt, (rest, lineno) in segments.items():
            parts = rest.split()
            where = f"{data_dir / 'segments'}:{lineno}"
            try:
                rec, start, end = parts[0], float(parts[1]), float(parts[2])
            except (IndexError, ValueError):
                problems.append(f"{where}: expected `utt recording start end`")
                continue
            if rec not in wav:
                problems.append(f"{where}: recording {rec!r} not in wav.scp")
                continue
            utts[utt] = (rec, start, end if end > 0 else None)
    else:
        utts = {rec: (rec, None, None) for rec in wav}
    for utt in utts:
        if utt not in text:
            problems.append(f"{data_dir / 'text'}: no transcript for {utt!r}")
    if problems:
        raise ImportProblem("\n".join(problems[:30]))
    for utt in sorted(utts):
        rec, seg_start, seg_end = utts[utt]  # the parse above bound start/end as floats
        extra: dict[str, str] = {}
        if utt2spk:
            spk = utt2spk.get(utt, ("", 0))[0]
            extra["SPEAKER"] = spk
            if spk2gender:
                g = spk2gender.get(spk, ("", 0))[0].upper()
                extra["GENDER"] = g if g in ("M", "F") else ""
        yield Item(
            id=utt,
            load=loaders[rec],
            key=rec,
            text=text[utt][0],
            start=seg_start,
            end=seg_end,
            extra=extra,
        )
