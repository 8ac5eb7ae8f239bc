"""Matrix runs: several models x several datasets, from the command line or a YAML request.

# request.yaml
models: [pocketsphinx_en, whisper_tiny]
datasets: [mini_en, mini_en_noisy]
options: {jobs: 2, max_utts: 20, seed: 0, runner: docker, results: results}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from asrbench.benchmark.errors import RequestError

OPTION_KEYS = {
    "jobs",
    "max_utts",
    "seed",
    "utt_timeout_s",
    "gpus",
    "runner",
    "results",
    "cache",
    "timeout_s",
    "memory",
    "cpus",
    "scorer",
}


@dataclass
class Request:
    """The cells to run and the options they share."""

    models: list[str]
    datasets: list[str]
    options: dict = field(default_factory=dict)

    def cells(self) -> list[tuple[str, str]]:
        return [(m, d) for m in self.models for d in self.datasets]


def load_request(path: Path) -> Request:
    """Parse and check a request file; errors name the file and the field."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RequestError(f"request {path}: cannot read it: {exc}") from None
    if not isinstance(raw, dict):
        raise RequestError(f"request {path}: top level must be a mapping with models, datasets")
    unknown = set(raw) - {"models", "datasets", "options"}
    if unknown:
        raise RequestError(
            f"request {path}: unknown field(s) {sorted(unknown)}; use models, datasets, options"
        )
    lists = {}
    for key in ("models", "datasets"):
        value = raw.get(key)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise RequestError(f"request {path}: {key} must be a non-empty list of IDs/paths")
        lists[key] = value
    options = raw.get("options") or {}
    if not isinstance(options, dict):
        raise RequestError(f"request {path}: options must be a mapping")
    bad = set(options) - OPTION_KEYS
    if bad:
        raise RequestError(
            f"request {path}: unknown option(s) {sorted(bad)}; known: "
            f"{', '.join(sorted(OPTION_KEYS))}"
        )
    return Request(lists["models"], lists["datasets"], options)
