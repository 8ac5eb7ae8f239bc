"""A generated 10,000-word pair (an hour-long call's length; the scale benchmark's corpus:
common words, ~10% word errors, phrases only DAE reconciles) scored with the default steps
and with none: every output file pinned, byte for byte, to what the scorer wrote before the
long-pair speed-ups (issue 43), so a faster aligner cannot move an edit or a count."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT

# sha256 of each file; summary.json without its two code digests (`result_key`, `scorer.code`),
# which change with any edit of the scoring code, and its input files' paths (a temporary folder)
PINNED = {
    "default": {
        "alignment.txt": "6ce73565ae9d5645316c3832864cb2aed0f4c8f2b68a57fc36b7444c40b911ea",
        "hyp.pra": "bea41aa6f1d9c559f6b2bf6c970488814cca0c85f1a95cedee9c90316c53ebcc",
        "hyp.sys": "b554cdce83fe6e5041227bad6c2a388ca4e330c54e9c1c0dfdf8d8df4ec0e74d",
        "table.txt": "ff2670c681fd820301373a8be963e7d9535b97d0cb8eed3cc6bfcc84a0a182de",
        "utterances.jsonl": "aa15e057eccf56820104669e5e62993cfa7f48151e629243abbd9a8d2e06f346",
        "summary.json": "bb58e822a145370ec225fcbbe42f18a5c257f41a241945646c67079d1e6a4c2c",
    },
    "raw": {
        "alignment.txt": "9b6d569861d0f848c103331254386df3c877de36056e3eaa67841a21ef0a0066",
        "hyp.pra": "b3f9b29a8948d1acedabebf3710ef4a23651e2670d86a2de5e868b44ceff06e4",
        "hyp.sys": "ab9fe8878e1b68acad765925ab243cb6462d4b4e80d607b2406f98e3c98baf06",
        "table.txt": "8c2f57f82ecc44a1bb7b0b8e76f2049bfdb8a96f278c0e6f251284ac3952f7af",
        "utterances.jsonl": "e5dbc51361cf941958c33fe78daed241376171a539ca066b57eef7462d648091",
        "summary.json": "f3d59c9da2b93c305bd483bb9ff798cacedc7cbf214e37bedeff6a1be24cc4f7",
    },
}


def _benchmark(name: str):
    path = REPO_ROOT / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _long_pair(words: int) -> tuple[dict[str, str], dict[str, str]]:
    return _benchmark("scoring_scale").long_pair(words)


# one definition of "the same outputs", shared with the before/after script
output_digests = _benchmark("score_outputs").output_digests


@pytest.mark.parametrize("steps", ["default", "raw"])
def test_a_long_pair_scores_byte_for_byte_as_before(cli, tmp_path: Path, steps: str) -> None:
    refs, hyps = _long_pair(10_000)
    for name, texts in (("ref.tsv", refs), ("hyp.tsv", hyps)):
        (tmp_path / name).write_text(
            "".join(f"{k}\t{v}\n" for k, v in texts.items()), encoding="utf-8"
        )
    out = tmp_path / "out"
    args = ["score", tmp_path / "ref.tsv", tmp_path / "hyp.tsv", "-o", out, "--reports", "all"]
    code, _, err = cli(*args, *(["--preset", "raw"] if steps == "raw" else []))
    assert code == 0, err
    assert output_digests(out) == PINNED[steps]
