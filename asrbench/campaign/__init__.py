"""Campaigns: models run over derived datasets, analysed into one record (see `base`).

`base` is the skeleton every campaign uses and documents its contract; `robustness` is
ops/robustness's campaign. ops/fairness's lives with its analyses (`asrbench.fairness.pipeline`).
"""
