"""asrbench: the platform library (datasets, runners, benchmark, zoo, perturbations)."""

__version__ = "0.1.0"
