"""The embedded real-speech sets in languages other than English (issue 24, item 5).

Every set validates and is small; the shared Asterisk recipe's selection rule is checked on a
package tree written here (real WAV and gzip files); the `full` test rebuilds each Asterisk set
from Debian's packages and compares it byte for byte with the embedded one.
"""

from __future__ import annotations

import gzip
import importlib.util
import shutil
import wave
from pathlib import Path
from types import ModuleType

import pytest

from asrbench.dataset import load_dataset, validate
from asrbench.settings import REPO_ROOT

DATASETS = REPO_ROOT / "datasets"
ASTERISK = ("mini_fr", "mini_es", "mini_it", "mini_ru")
EMBEDDED = {"mini_fr": "fr", "mini_es": "es", "mini_it": "it", "mini_ru": "ru", "mini_zh": "zh"}
MAX_BYTES = 2_500_000


def _recipe(set_id: str) -> ModuleType:
    path = DATASETS / set_id / f"build_{set_id}.py"
    spec = importlib.util.spec_from_file_location(f"build_{set_id}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _helper() -> ModuleType:
    """datasets/asterisk_prompts.py, as the recipes import it (each puts datasets/ on sys.path)."""
    _recipe("mini_fr")
    return importlib.import_module("asterisk_prompts")


@pytest.mark.parametrize("set_id", sorted(EMBEDDED))
def test_embedded_set_is_valid_small_and_in_its_language(set_id: str) -> None:
    root = DATASETS / set_id
    problems = validate(root)
    assert problems == [], problems
    ds = load_dataset(root)
    assert ds.language == EMBEDDED[set_id]
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    assert size < MAX_BYTES, f"{set_id}: {size} bytes"
    assert (root / "ATTRIBUTION.md").is_file()


@pytest.mark.parametrize("set_id", ASTERISK)
def test_asterisk_rows_carry_their_recipe_labels(set_id: str) -> None:
    spec = _recipe(set_id).SET
    ds = load_dataset(DATASETS / set_id)
    assert 20 <= len(ds) <= 40
    for u in ds:
        assert u.id.startswith(spec.prefix + "_")
        assert (u.extra["SPEAKER"], u.extra["GENDER"], u.extra["ACCENT"]) == (
            spec.speaker,
            spec.gender,
            spec.accent,
        )
        assert spec.min_words <= len(u.text.split()) <= spec.max_words


def _wav(path: Path, seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x01\x00" * int(8000 * seconds))


def test_asterisk_selection_rule_on_a_package_tree(tmp_path: Path) -> None:
    helper = _helper()
    spec = helper.PromptSet(
        lang="xx", voice="xx_f_V", prefix="xx_v", speaker="v", gender="F", accent="xx", step=2
    )
    root = tmp_path / "root"
    lines = {
        "a-kept": ("Premere 1 per accettare questa chiamata", 2.0),
        "b-tones": ("[ascending tones] uno due tre quattro", 2.0),
        "c-sound": ("un suono di beep discendente", 0.38),  # a sound told in words
        "d-damaged": ("Il numero ? stato con successo", 2.0),  # ? for a lost è
        "e-kept": ("Casella di posta? Digitare il numero", 2.5),
        "f-short": ("Grazie mille", 1.0),
        "g-kept": ("Quell'operatore è già   loggato adesso", 2.0),
        "h-norecording": ("Questa voce non ha nessuna registrazione", 2.0),
    }
    for name, (_, seconds) in lines.items():
        if name != "h-norecording":
            _wav(root / spec.sounds / f"{name}.wav", seconds)
    text = "\ufeff; Core sounds\n\n" + "".join(f"{n}: {t}\n" for n, (t, _) in lines.items())
    (root / spec.transcripts).parent.mkdir(parents=True)
    with gzip.open(root / spec.transcripts, "wt", encoding="utf-8") as f:
        f.write(text)
    kept = [n for n, _ in helper.prompts(spec, root)]
    assert kept == ["a-kept", "e-kept", "g-kept"]
    out = tmp_path / "out"
    out.mkdir()
    assert helper.build(spec, root, out) == 2  # every 2nd: a-kept, g-kept
    rows = (out / "metadata.tsv").read_text(encoding="utf-8").splitlines()
    assert rows[2].split("\t")[:4] == [
        "xx_v_g-kept",
        "audio/xx_v_g-kept.wav",
        "2.000",
        "Quell'operatore è già loggato adesso",
    ]
    assert sorted(p.name for p in (out / "audio").iterdir()) == [
        "xx_v_a-kept.wav",
        "xx_v_g-kept.wav",
    ]


@pytest.mark.full
@pytest.mark.parametrize("set_id", ASTERISK)
def test_asterisk_recipe_rebuilds_the_embedded_set(set_id: str, tmp_path: Path) -> None:
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        pytest.skip("needs Debian's apt-get and dpkg")
    module, helper = _recipe(set_id), _helper()
    out = tmp_path / set_id
    out.mkdir()
    helper.build(module.SET, helper.download(module.SET, tmp_path), out)
    embedded = DATASETS / set_id
    assert (out / "metadata.tsv").read_bytes() == (embedded / "metadata.tsv").read_bytes()
    names = sorted(p.name for p in (out / "audio").iterdir())
    assert names == sorted(p.name for p in (embedded / "audio").iterdir())
    for name in names:
        assert (out / "audio" / name).read_bytes() == (embedded / "audio" / name).read_bytes()


@pytest.mark.full
def test_zh_recipe_rebuilds_the_embedded_set(tmp_path: Path) -> None:
    module = _recipe("mini_zh")
    out = tmp_path / "mini_zh"
    out.mkdir()
    assert module.build(module.fetch(tmp_path), out) == 2
    embedded = DATASETS / "mini_zh"
    assert (out / "metadata.tsv").read_bytes() == (embedded / "metadata.tsv").read_bytes()
    for wav in (embedded / "audio").iterdir():
        assert (out / "audio" / wav.name).read_bytes() == wav.read_bytes()
