#!/usr/bin/env python3
"""Rebuild the embedded `mini_ru` dataset (Russian read speech) from Debian's packages.

Source: the Asterisk core sound prompts in Russian, provided by Maxim Topal (ivrvoice.ru, a
professional female voice), CC-BY-3.0, as Debian ships them: `asterisk-core-sounds-ru-wav`
(8 kHz mono 16-bit WAV, `/usr/share/asterisk/sounds/ru_RU_f_IvrvoiceRU/`) and
`asterisk-core-sounds-ru` (the transcript of every prompt, `core-sounds-ru.txt.gz`). Selection:
the rule every Asterisk set shares (../asterisk_prompts.py: spoken prompts of 5 to 25 words),
every 6th in name order: 27 utterances. Audio is kept as published (8 kHz: telephone prompts),
so models resample it themselves; transcripts are kept exactly as the source writes them
(digits where the voice says a number: `Нажмите 1`).

    .venv/bin/python datasets/mini_ru/build_mini_ru.py [--root /]   # with the packages installed
    .venv/bin/python datasets/mini_ru/build_mini_ru.py --download   # apt-get download + dpkg -x
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from asterisk_prompts import PromptSet, main  # noqa: E402

SET = PromptSet(
    lang="ru",
    voice="ru_RU_f_IvrvoiceRU",
    prefix="ru_ru_ivrvoice",
    speaker="ivrvoice_ru",
    gender="F",
    accent="ru-RU",
    step=6,
)

if __name__ == "__main__":
    main(SET, HERE, __doc__)
