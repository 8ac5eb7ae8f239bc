#!/usr/bin/env python3
"""Rebuild the embedded `mini_fr` dataset (Canadian French read speech) from Debian's packages.

Source: the Asterisk core sound prompts in French, recorded by June Wallack (a professional
voice), CC-BY-SA-3.0, as Debian ships them: `asterisk-core-sounds-fr-wav` (8 kHz mono 16-bit
WAV, `/usr/share/asterisk/sounds/fr_CA_f_June/`) and `asterisk-core-sounds-fr` (the transcript
of every prompt, `core-sounds-fr.txt.gz`). Selection (../asterisk_prompts.py, shared by every
Asterisk set): prompts of 5 to 25 words whose transcript is speech (no `[tones]` or `(sound)`
entries), every 6th in name order: 34 utterances. Audio is kept as published (8 kHz: telephone
prompts), so models resample it themselves; transcripts are kept exactly as the source writes
them (including its typos).

    .venv/bin/python datasets/mini_fr/build_mini_fr.py [--root /]   # with the packages installed
    .venv/bin/python datasets/mini_fr/build_mini_fr.py --download   # apt-get download + dpkg -x
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from asterisk_prompts import PromptSet, main  # noqa: E402

SET = PromptSet(
    lang="fr",
    voice="fr_CA_f_June",
    prefix="fr_ca_june",
    speaker="june_wallack",
    gender="F",
    accent="fr-CA",
    step=6,
)

if __name__ == "__main__":
    main(SET, HERE, __doc__)
