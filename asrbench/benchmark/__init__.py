"""ops/benchmark: run a model on a dataset, keep the raw hypotheses, score them."""

from asrbench.benchmark.run import BenchmarkError, run_benchmark

__all__ = ["BenchmarkError", "run_benchmark"]
