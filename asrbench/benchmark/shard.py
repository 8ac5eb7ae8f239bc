"""How the selected utterances are split across parallel jobs.

Pure: the same inputs give the same split on every machine, so resumed runs land on the same
shard folders. Which utterances run (`--max-utts`) is `asrbench.dataset.sample_utterances`.
"""

from __future__ import annotations

from collections.abc import Sequence

from asrbench.dataset import Utterance
from asrbench.errors import InputError


def split_shards(utts: Sequence[Utterance], jobs: int) -> list[list[Utterance]]:
    """Split into at most `jobs` non-empty shards of near-equal audio duration.

    Longest-first greedy assignment (LPT) balances the shards' audio so parallel jobs finish
    together; ties break on dataset position so the split is deterministic. Each shard keeps
    dataset order.
    """
    if jobs < 1:
        raise InputError(f"--jobs {jobs}: give at least 1")
    jobs = min(jobs, len(utts)) or 1
    order = sorted(range(len(utts)), key=lambda i: (-utts[i].duration, i))
    load = [0.0] * jobs
    members: list[list[int]] = [[] for _ in range(jobs)]
    for i in order:
        k = min(range(jobs), key=lambda j: (load[j], j))
        load[k] += utts[i].duration
        members[k].append(i)
    return [[utts[i] for i in sorted(m)] for m in members if m]
