"""Ways in and out of the dataset format.

In: recipes for the standard test sets (`recipes/`, downloads in `download.py`), and one module
per format: Kaldi data dirs (`kaldi.py`), NeMo manifests (`nemo.py`), lhotse manifests
(`lhotse_io.py`), Hugging Face datasets on disk (`hf.py`), Common Voice (`commonvoice.py`), a
generic CSV/JSONL manifest (`manifest.py`) and a folder + table (`folder.py`). Every importer
yields `Item`s; `common.build_dataset` converts the audio to 16-bit mono WAV at the dataset's
rate, measures durations, validates the result and moves it into place whole.
Out: `export.py` writes Kaldi, NeMo and lhotse manifests of any dataset.
"""

from asrbench.importers.common import ImportProblem, Item, build_dataset

__all__ = ["ImportProblem", "Item", "build_dataset"]
