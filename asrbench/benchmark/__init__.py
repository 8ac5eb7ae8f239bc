"""ops/benchmark: run models on datasets (sharded, cached, resumable), score, keep provenance."""

from asrbench.benchmark.errors import BenchmarkError
from asrbench.benchmark.request import JobSpec
from asrbench.benchmark.run import run_benchmark

__all__ = ["BenchmarkError", "JobSpec", "run_benchmark"]
