"""Chinese helpers: full-width to half-width (the FW step) and character tokenisation."""

from __future__ import annotations

import re
from functools import lru_cache

# Full-width ASCII variants U+FF01..U+FF5E map to U+0021..U+007E; U+3000 is a full-width space.
_FW = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}
_FW[0x3000] = 0x20
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af\U00020000-\U0002ffff"


@lru_cache(maxsize=1)
def _char_token() -> re.Pattern[str]:
    # compiled where first used (~3 ms at every start otherwise, for Chinese text only)
    return re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


class FullWidth:
    """Map full-width Latin letters, digits and punctuation to their half-width forms."""

    name = "FW"

    def __call__(self, text: str) -> str:
        return text.translate(_FW)


def char_tokens(text: str) -> list[str]:
    """Split CJK text into characters; runs of other non-space characters stay words."""
    return _char_token().findall(text)
