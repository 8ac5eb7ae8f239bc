#!/usr/bin/env python3
"""Rebuild the embedded `mini_es` dataset (Mexican Spanish read speech) from Debian's packages.

Source: the Asterisk core sound prompts in Spanish, recorded by Allison Smith (a professional
voice), CC-BY-SA-3.0, as Debian ships them: `asterisk-core-sounds-es-wav` (8 kHz mono 16-bit
WAV, `/usr/share/asterisk/sounds/es_MX_f_Allison/`) and `asterisk-core-sounds-es` (the
transcript of every prompt, `core-sounds-es.txt.gz`). Selection: the rule every Asterisk set
shares (../asterisk_prompts.py: spoken prompts of 5 to 25 words), every 7th in name order: 27
utterances (every 6th would pass the 2.5 MB budget of an embedded set). Audio is kept as
published (8 kHz: telephone prompts), so models resample it themselves; transcripts are kept
exactly as the source writes them (most accents missing: `numero`, `contrasena`).

    .venv/bin/python datasets/mini_es/build_mini_es.py [--root /]   # with the packages installed
    .venv/bin/python datasets/mini_es/build_mini_es.py --download   # apt-get download + dpkg -x
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from asterisk_prompts import PromptSet, main  # noqa: E402

SET = PromptSet(
    lang="es",
    voice="es_MX_f_Allison",
    prefix="es_mx_allison",
    speaker="allison_smith",
    gender="F",
    accent="es-MX",
    step=7,
)

if __name__ == "__main__":
    main(SET, HERE, __doc__)
