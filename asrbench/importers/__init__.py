"""Importers: Kaldi data dirs, NeMo JSONL manifests and audio folders into the dataset format.

Every importer yields `Item`s; `common.write_dataset` converts the audio to 16-bit mono WAV
at the dataset's rate, measures durations, validates the result and moves it into place whole.
"""

from asrbench.importers.common import ImportProblem, Item, write_dataset

__all__ = ["ImportProblem", "Item", "write_dataset"]
