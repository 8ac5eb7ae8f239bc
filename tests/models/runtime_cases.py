"""What the card-only runtime tests share (sherpa-onnx, onnx-asr): a runtime's template card
pointed at a tiny model folder, benchmarked in Docker on real mini_en utterances.

A test file names its runtime once (`RuntimeTemplate`) and gets its `weights` fixture from
`weights_fixture`; the cases are `bench` (a cell, checked) and `refusal` (the message of a run
the runtime stops). Importable: pytest puts this folder on sys.path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from models_support import require
from tiny_onnx import bench_docker, check_cell, template_copy

from asrbench.errors import AsrbenchError
from asrbench.images import engine_available

N_UTTS = 3


@dataclass(frozen=True)
class RuntimeTemplate:
    """A runtime's template model folder and the variable its card's `weights.dir` names."""

    template: str  # models/<template>
    variable: str  # the environment variable of the template's weights.dir

    def folder(self, weights: Path, tmp_path: Path, monkeypatch, **copy: Any) -> Path:
        """A copy of the template pinned to `weights` (tiny_onnx.template_copy's options)."""
        require("docker", engine_available(), "no Docker Engine answers")
        monkeypatch.setenv(self.variable, str(weights))
        return template_copy(self.template, tmp_path, weights, **copy)

    def bench(self, weights: Path, mini, tmp_path: Path, monkeypatch, **copy: Any) -> Path:
        """Benchmark the copy on N_UTTS mini_en utterances and check the cell; the copy."""
        folder = self.folder(weights, tmp_path, monkeypatch, **copy)
        cell = bench_docker(folder, tmp_path, N_UTTS)
        check_cell(cell, {u.id: u.duration for u in mini.utterances}, N_UTTS)
        return folder

    def refusal(self, weights: Path, tmp_path: Path, monkeypatch, **copy: Any) -> str:
        """The platform's message for a run of the copy that the runtime stops."""
        folder = self.folder(weights, tmp_path, monkeypatch, **copy)
        with pytest.raises(AsrbenchError) as err:
            bench_docker(folder, tmp_path, 1)
        return str(err.value)


def weights_fixture(make: Callable[[Path], Path], name: str):
    """A module-scoped `weights` fixture: the tiny model `make` writes into a folder `name`."""

    @pytest.fixture(scope="module")
    def weights(tmp_path_factory) -> Path:
        return make(tmp_path_factory.mktemp(name))

    return weights
