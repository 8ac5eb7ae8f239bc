#!/usr/bin/env python3
"""Rebuild the embedded `mini_it` dataset (Italian read speech) from Debian's packages.

Source: the Asterisk core sound prompts in Italian, recorded by Carlo Flora (a professional
voice), CC-BY-3.0, as Debian ships them: `asterisk-core-sounds-it-wav` (8 kHz mono 16-bit WAV,
`/usr/share/asterisk/sounds/it_IT_m_Carlo/`) and `asterisk-core-sounds-it` (the transcript of
every prompt, `core-sounds-it.txt.gz`). Selection: the rule every Asterisk set shares
(../asterisk_prompts.py: spoken prompts of 5 to 25 words; here it also drops three beeps told in
words and eight transcripts whose accented letters the source lost), every 6th in name order:
30 utterances. Audio is kept as published (8 kHz: telephone prompts), so models resample it
themselves; transcripts are kept exactly as the source writes them.

    .venv/bin/python datasets/mini_it/build_mini_it.py [--root /]   # with the packages installed
    .venv/bin/python datasets/mini_it/build_mini_it.py --download   # apt-get download + dpkg -x
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from asterisk_prompts import PromptSet, main  # noqa: E402

SET = PromptSet(
    lang="it",
    voice="it_IT_m_Carlo",
    prefix="it_it_carlo",
    speaker="carlo_flora",
    gender="M",
    accent="it-IT",
    step=6,
)

if __name__ == "__main__":
    main(SET, HERE, __doc__)
