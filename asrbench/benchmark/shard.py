"""Which utterances run, and how they are split across parallel jobs.

Both functions are pure: the same inputs give the same output on every machine, which is what
makes `--max-utts` samples reproducible and resumed runs land on the same shard folders.
"""

from __future__ import annotations

from collections.abc import Sequence

from asrbench.dataset import Utterance
from asrbench.errors import InputError
from asrbench.identity import seed_digest


def sample_utterances(utts: Sequence[Utterance], n: int | None, seed: int = 0) -> list[Utterance]:
    """A seeded sample of `n` utterances, kept in dataset order; all of them when n is None.

    Each utterance is ranked by SHA-256(seed, ID) rather than by a PRNG stream, so the sample does
    not depend on Python's random module, and growing n only adds utterances (nested samples).
    """
    if n is not None and n < 1:
        raise InputError(f"--max-utts {n}: give at least 1 utterance (or leave it out for all)")
    if n is None or n >= len(utts):
        return list(utts)

    def rank(u: Utterance) -> bytes:
        return seed_digest(seed, u.id)

    chosen = {u.id for u in sorted(utts, key=rank)[:n]}
    return [u for u in utts if u.id in chosen]


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
