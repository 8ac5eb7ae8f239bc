"""Fairness: whom a recogniser fails, with honest statistics (docs/FAIRNESS.md).

groups.py        speaker groups from a metadata column, units, small-group flags
stats.py         stratified speaker bootstrap, permutation tests (exact when few), FDR/FWER
accuracy.py      per-group TER/mTER with intervals, disparity to the best group, LWERR
robustness.py    SRB robustness disparity: WERD per group and severity, slope of the gap
differential.py  AequeVox differential testing (two recognisers, or one vs itself)
localiser.py     AequeVox fault localiser, validated against references where they exist
tokens.py        hypotheses as token arrays, word-level edit distances
inputs.py        result cells (utterances.jsonl) into arrays; model-rate copies of datasets
pipeline.py      `run_fairness`: the runs `ops/fairness` needs, then every analysis
report.py        fairness.json (asrbench-fairness-v1), Markdown, localiser TSV
"""
