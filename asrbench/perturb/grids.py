"""Named perturbation grids for `ops/robustness`; a grid may also be a file or a `;` list."""

from __future__ import annotations

from pathlib import Path

GRIDS: dict[str, list[str]] = {
    "srb-small": [
        "gaussian_noise:2",
        "gaussian_noise:4",
        "env_noise:3",
        "music:3",
        "crosstalk:3",
        "rir:3",
        "echo:2",
        "speed_up:2",
        "pitch_down:2",
        "lowpass:3",
        "gsm",
        "mp3:4",
    ],
    "srb": [
        f"{n}:{s}"
        for n in (
            "gaussian_noise",
            "env_noise",
            "music",
            "crosstalk",
            "rir",
            "echo",
            "bass",
            "treble",
            "phaser",
            "tempo_up",
            "tempo_down",
            "speed_up",
            "speed_down",
            "pitch_up",
            "pitch_down",
            "chorus",
            "tremolo",
            "resample",
            "gain",
            "lowpass",
            "highpass",
        )
        for s in (1, 2, 3, 4)
    ],
    "aequevox": [
        f"{n}:{s}"
        for n in (
            "amplitude",
            "clipping",
            "drop_chunks",
            "frame_drop",
            "av_highpass",
            "av_lowpass",
            "av_noise",
            "freq_scale",
        )
        for s in (1, 2, 3, 4, 5)
    ]
    + ["amplify:1"],
    "channels": ["gsm", "narrowband", "mp3:1", "mp3:2", "mp3:3", "mp3:4", "g712", "mirs"],
}


def grid_specs(grid: str) -> list[str]:
    """Specs of a named grid, `aurora[:SETS]`, a file (one spec per line) or `a:1;b:2`."""
    if grid in GRIDS:
        return list(GRIDS[grid])
    if grid.startswith("aurora"):
        from asrbench.perturb.aurora import aurora_grid

        sets = grid.partition(":")[2] or "ABC"
        return aurora_grid(sets)
    path = Path(grid)
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
        return [s.strip() for s in lines if s.strip() and not s.startswith("#")]
    return [s.strip() for s in grid.split(";") if s.strip()]


def grid_name(grid: str) -> str:
    """A folder-safe name for a grid (a file's name, or the named grid)."""
    return Path(grid).name if Path(grid).is_file() else grid.replace(";", "+").replace("/", "_")
