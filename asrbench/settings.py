"""Every host-side `ASRBENCH_*` setting, read in one place (docs/SETTINGS.md lists them all).

`settings()` reads the environment each time it is called (cheap), so a test or a caller that
changes a variable sees the change; nothing else in the platform reads `ASRBENCH_*` directly.
Variables read inside model containers (`ASRBENCH_UTT_TIMEOUT`, `ASRBENCH_CPU_THREADS`,
`ASRBENCH_API_*`) belong to the model contract (models/README.md), not to this object.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PREFIX = "ASRBENCH_"
BASE_IMAGE = "asrbench/base:bookworm"

# name (without the prefix) -> what it sets; the documentation table is generated from this.
VARIABLES: dict[str, str] = {
    "CACHE": "local cache root (hypotheses, images' wheelhouses, perturbed audio, zoo objects); "
    "default <repo>/.cache",
    "RESULTS": "results root; default <repo>/results",
    "STREAM_CACHE": "stream cells' cache (each utterance kept as it is done, so a rerun "
    "resumes; docs/STREAMING.md); default <cache>/streams",
    "DATASETS_DIR": "where datasets live and are pulled to; default <repo>/datasets",
    "MODELS_DIR": "where model folders live and are pulled to; default <repo>/models",
    "ZOO_CONFIG": "the zoo configuration file; default <repo>/zoo.yaml",
    "MIN_FREE_MB": "refuse to start a run with less free disk than this (MiB); default 200",
    "BASE_IMAGE": f"base image of model images; default {BASE_IMAGE} (built with debootstrap)",
    "BUILD_MODE": "wheelhouse (default: pip downloads on the host, hermetic build) or network",
    "CA_BUNDLE": "extra CA bundle for network builds behind a TLS-intercepting proxy",
    "NOISE_<KIND>": "a folder of audio replacing a noise pool (ENV, MUSIC, BABBLE, SUBWAY...)",
    "RIR_DIR": "a folder with bin<k>/*.wav real room impulse responses",
    "REQUIRE": "tests: services whose absence fails instead of skipping (docker,s3,...,all)",
    "ATTACK_BATCH": "utterances an attack with a batch hook (pgd) runs at once; default 4, 1 = "
    "one by one; the cache keys and bytes do not depend on it",
    "SHARD_HOLD": "tests: a Ray node holds each shard it starts while this file exists (after "
    "the shard's .owner is written), so a test can kill the node mid-shard on a state",
}


@dataclass(frozen=True)
class Settings:
    """Paths and build choices shared by every command."""

    cache: Path
    results: Path
    datasets_dir: Path
    models_dir: Path
    zoo_config: Path
    min_free_mb: int
    base_image: str
    build_mode: str
    ca_bundle: Path | None
    rir_dir: Path | None
    stream_cache: Path  # stream cells' cache (streaming/cache.py)
    shard_hold: Path | None = None  # tests: hold node shards while this file exists
    attack_batch: int = 4  # utterances a batched attack (pgd) runs at once
    noise: dict[str, Path] = field(default_factory=dict)  # KIND (lower case) -> folder

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env

        def path(name: str, default: Path) -> Path:
            value = env.get(PREFIX + name)
            return Path(value).expanduser().resolve() if value else default

        def opt_path(name: str) -> Path | None:
            value = env.get(PREFIX + name)
            return Path(value).expanduser() if value else None

        try:
            min_free = int(env.get(PREFIX + "MIN_FREE_MB", "200"))
        except ValueError:
            from asrbench.errors import InputError

            raise InputError(
                f"${PREFIX}MIN_FREE_MB={env[PREFIX + 'MIN_FREE_MB']!r} is not an "
                "integer number of MiB"
            ) from None
        raw_batch = env.get(PREFIX + "ATTACK_BATCH", "").strip() or "4"
        if not raw_batch.isdigit() or int(raw_batch) < 1:
            from asrbench.errors import InputError

            raise InputError(
                f"${PREFIX}ATTACK_BATCH={raw_batch!r} is not a positive integer; set it to the "
                "number of utterances an attack runs at once (1: one by one; unset: 4)"
            )
        noise = {
            k[len(PREFIX) + 6 :].lower(): Path(v)
            for k, v in env.items()
            if k.startswith(PREFIX + "NOISE_") and v
        }
        return cls(
            cache=path("CACHE", REPO_ROOT / ".cache"),
            results=path("RESULTS", REPO_ROOT / "results"),
            datasets_dir=path("DATASETS_DIR", REPO_ROOT / "datasets"),
            models_dir=path("MODELS_DIR", REPO_ROOT / "models"),
            zoo_config=path("ZOO_CONFIG", REPO_ROOT / "zoo.yaml"),
            min_free_mb=min_free,
            base_image=env.get(PREFIX + "BASE_IMAGE") or BASE_IMAGE,
            build_mode=env.get(PREFIX + "BUILD_MODE") or "wheelhouse",
            ca_bundle=opt_path("CA_BUNDLE"),
            rir_dir=opt_path("RIR_DIR"),
            stream_cache=path("STREAM_CACHE", path("CACHE", REPO_ROOT / ".cache") / "streams"),
            shard_hold=opt_path("SHARD_HOLD"),
            attack_batch=int(raw_batch),
            noise=noise,
        )


def settings() -> Settings:
    """The current settings (from the environment)."""
    return Settings.from_env()
