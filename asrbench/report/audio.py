"""Audio for the utterance players: copied into the site, linked, embedded, or left out.

The dataset folder comes from the cell's run.json; its content is checked against the dataset
hash the result was computed on (file hashes are memoised), so the audio a reader hears is the
audio that was scored. A file the browser can play and no larger than `max_bytes` is copied as
it is (hard-linked when on the same file system: the same bytes, no copy time); a larger one,
or a format browsers do not play, is re-encoded by ffmpeg to mono Ogg Opus with bit-exact flags
(the same input gives the same bytes). Each dataset's audio is stored once, under
`audio/<first 12 hex of the dataset hash>/`, whatever the number of models.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

PLAYABLE = {
    ".wav": "audio/wav",
    ".flac": "audio/flac",
    ".ogg": "audio/ogg",
    ".opus": "audio/ogg",
    ".mp3": "audio/mpeg",
    ".m4a": "audio/mp4",
    ".webm": "audio/webm",
}
MODES = ("copy", "link", "embed", "none")
_SAFE = re.compile(r"[A-Za-z0-9._-]{1,120}")


@dataclass
class DatasetAudio:
    """Audio of one dataset content: utterance ID -> href (relative to the site root)."""

    href: dict[str, str] = field(default_factory=dict)
    note: str | None = None  # why audio is missing, when it is


def _file_name(uid: str, ext: str) -> str:
    if _SAFE.fullmatch(uid) and not uid.startswith("."):
        return uid + ext
    from asrbench.identity import bytes_sha256

    return "u" + bytes_sha256(uid.encode())[:20] + ext


def _transcode(src: Path, dst: Path) -> None:
    subprocess.run(
        [
            "ffmpeg",
            "-nostdin",
            "-v",
            "error",
            "-y",
            "-i",
            str(src),
            "-map_metadata",
            "-1",
            "-fflags",
            "+bitexact",
            "-flags:a",
            "+bitexact",
            "-ac",
            "1",
            "-c:a",
            "libopus",
            "-b:a",
            "32k",
            str(dst),
        ],
        check=True,
        capture_output=True,
    )


def dataset_audio(
    folder: str | None,
    dataset_hash: str | None,
    ids: list[str],
    out: Path,
    mode: str,
    max_bytes: int,
) -> DatasetAudio:
    """Place the audio of `ids` for the site in `out`: hrefs, or why there are none."""
    from asrbench.dataset import load_dataset
    from asrbench.errors import AsrbenchError

    if mode == "none":
        return DatasetAudio(note="audio left out (--audio none)")
    if not folder:
        return DatasetAudio(note="the cell's run.json does not name the dataset folder")
    root = Path(folder)
    if not (root / "metadata.tsv").is_file():
        return DatasetAudio(note=f"dataset folder {root} not found on this machine")
    try:
        ds = load_dataset(root, check_audio=False)
        now = ds.content_hash()
    except (AsrbenchError, OSError) as exc:
        return DatasetAudio(note=f"dataset folder {root} unreadable ({exc})")
    if dataset_hash and now != dataset_hash:
        return DatasetAudio(
            note=f"dataset folder {root} now holds other content ({now}) than "
            f"the result was computed on ({dataset_hash}): not played"
        )
    by_id = {u.id: ds.audio_path(u) for u in ds.utterances}
    sub = Path("audio") / (dataset_hash or now).split(":")[-1][:12]
    res = DatasetAudio()
    for uid in ids:
        src = by_id.get(uid)
        if src is None or not src.is_file():
            continue
        ext = src.suffix.lower()
        big = src.stat().st_size > max_bytes or ext not in PLAYABLE
        if mode == "link" and not big:
            res.href[uid] = os.path.relpath(src.resolve(), out.resolve())
            continue
        dst_rel = sub / _file_name(uid, ".ogg" if big else ext)
        dst = out / dst_rel
        if not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            if big:
                _transcode(src, dst)
            else:
                _place(src, dst)
        res.href[uid] = dst_rel.as_posix()
    return res


def _place(src: Path, dst: Path) -> None:
    """The same bytes in the site: a hard link where the file system allows, else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def data_uri(path: Path) -> str:
    """A `data:` URI of an audio file (single-file sites)."""
    mime = PLAYABLE.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")
