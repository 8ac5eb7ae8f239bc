"""White-box adversarial attacks on a differentiable Whisper (issue 28).

`target.py` is the contract the attacks code against: `load_target(model_id)` gives a
`WhiteBoxTarget` whose `loss` is differentiable with respect to the waveform. The port itself:
`ct2.py` (the cards' CTranslate2 weights, checked by SHA-256), `mel.py` (the log-Mel front end),
`whisper_torch.py` (the network), `decode.py` (prompt, greedy decoding, teacher-forced loss).
The attacks built on it live beside them (`pgd.py`, `universal.py`, `artifact.py`).
`scoring/` never imports this package. docs/ROBUSTNESS.md, "Adversarial attacks: the
differentiable Whisper".
"""
