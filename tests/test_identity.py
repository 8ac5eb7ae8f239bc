"""The identity module and every cache keyed by it: each declared input moves its key."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from asrbench import identity
from asrbench.identity import (
    KINDS,
    IdentityError,
    digest,
    file_sha256,
    files_sha256,
    hash_file,
)

BASE = {
    "metadata": "m",
    "audio": [["u1", "a"]],
    "files": [["a.py", "1"]],
    "source": "s",
    "base": "b",
    "mode": "wheelhouse",
    "ca_bundle": None,
    "build_args": {},
    "template": "t",
    "requirements": "r",
    "python": "3.11",
    "environment": "e",
    "model": "img",
    "dataset": "d",
    "runtime": {"env": {}},
    "utterances": ["u1"],
    "jobs": 1,
    "spec": "gsm",
    "seed": 0,
    "utterance": "u1",
    "code": "c",
    "assets": "x",
    "libraries": {"numpy": "2"},
    "sox": "v14",
    "shipped": [],
    "moh": [],
    "overrides": {},
    "rir": {"simulated": "p"},
    "babble_dataset": "d",
    "sr": 16000,
    "bin": 1,
    "reference": "r",
    "degraded": "g",
    "config": {"a": 1},
    "entry_kind": "dataset",
    "id": "mini_en",
    "meta": {},
    "image": None,
    "hyps": "h",
    "selection": {"n": 1},
    "scorer": {"c": 1},
    "shards": [["u1"]],
    "round": 0,
    "scorer_options": {},
    "rate": 16000,
    "segmentation": {"method": "vad"},
    "cut": ["r1"],
    "whole": [],
    "target": {"model": "m"},
    "dev": [["u1", "a"]],
    "settings": {"snr": 30},
}


def _changed(value: object) -> object:
    if isinstance(value, str):
        return value + "'"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, list):
        return [*value, "more"]
    if isinstance(value, dict):
        return {**value, "more": 1}
    return "set"  # None


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_declared_input_moves_the_key(kind: str) -> None:
    inputs = {name: BASE[name] for name in KINDS[kind]}
    key = digest(kind, **inputs)
    assert key == digest(kind, **dict(reversed(list(inputs.items()))))  # order-free
    for name in inputs:
        assert digest(kind, **{**inputs, name: _changed(inputs[name])}) != key, name
    others = [k for k in KINDS if k != kind and set(KINDS[k]) == set(KINDS[kind])]
    for other in others:  # the kind itself is part of the key
        assert digest(other, **inputs) != key


def test_missing_or_undeclared_inputs_are_refused() -> None:
    with pytest.raises(IdentityError, match="missing inputs"):
        digest("hyps", model="m", dataset="d")
    with pytest.raises(IdentityError, match="undeclared"):
        digest("hyps", model="m", dataset="d", runtime={}, extra=1)
    with pytest.raises(IdentityError, match="unknown identity kind"):
        digest("nope", a=1)


def test_file_memo_sees_changes_and_survives_processes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "x.bin"
    f.write_bytes(b"one")
    first = file_sha256(f)
    assert first == hash_file(f)
    f.write_bytes(b"two")  # same size, new content and mtime
    os.utime(f, ns=(1, 1))
    assert file_sha256(f) == hash_file(f) != first
    assert (tmp_path / "cache" / "identity" / "files.sqlite").is_file()


@pytest.mark.parametrize("fresh", [0, 3, 12])
def test_many_files_hashed_memo_hits_first(tmp_path: Path, monkeypatch, fresh: int) -> None:
    # `files_sha256` takes the memo's hits itself and hashes only the rest (in threads from 8
    # on): every digest the file's bytes', in the order given, changed files among the hits
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    files = [tmp_path / f"f{i}.bin" for i in range(20)]
    for i, f in enumerate(files):
        f.write_bytes(b"x%d" % i)
    files_sha256(files[fresh:])  # memoised: all but the first `fresh`
    for f in files[fresh : fresh + 2]:
        f.write_bytes(f.read_bytes() + b"!")  # changed since
        os.utime(f, ns=(7, 7))
    assert files_sha256(files) == [hash_file(f) for f in files]
    with pytest.raises(FileNotFoundError):
        files_sha256([*files, tmp_path / "missing.bin"])


def test_dataset_hash_moves_with_metadata_audio_and_order(tmp_path: Path, mini_en: Path) -> None:
    from asrbench.dataset import load_dataset

    copy = tmp_path / "ds"
    shutil.copytree(mini_en, copy)
    base = load_dataset(copy).content_hash()
    assert base == load_dataset(mini_en).content_hash()  # by content, not by location
    meta = copy / "metadata.tsv"
    text = meta.read_text()
    meta.write_text(text.replace("in being comparatively modern.", "in being modern."))
    assert load_dataset(copy).content_hash() != base
    meta.write_text(text)
    assert load_dataset(copy).content_hash() == base
    ds = load_dataset(copy)
    wav = copy / ds.utterances[0].audio
    x, sr = sf.read(wav)
    sf.write(wav, np.clip(x * 0.5, -1, 1), sr, subtype="PCM_16")
    assert load_dataset(copy).content_hash() != base


def test_hypothesis_cache_and_attempt_keys() -> None:
    from asrbench.benchmark.cache import HypCache, cache_key

    runtime = {"env": {}, "gpus": None}
    base = cache_key("sha256:img", "sha256:data", runtime)[0]
    assert base == cache_key("sha256:img", "sha256:data", dict(runtime))[0]
    assert base != cache_key("sha256:img2", "sha256:data", runtime)[0]
    assert base != cache_key("sha256:img", "sha256:data2", runtime)[0]
    assert base != cache_key("sha256:img", "sha256:data", {"env": {"K": "v"}, "gpus": None})[0]
    assert base != cache_key("sha256:img", "sha256:data", {"env": {}, "gpus": "all"})[0]
    c = HypCache(Path("/nonexistent"), base, {})
    a = c.attempt_dir([["u1"], ["u2"]], 0)
    assert a == c.attempt_dir([["u1"], ["u2"]], 0)
    assert a != c.attempt_dir([["u1"], ["u3"]], 0) and a != c.attempt_dir([["u1", "u2"]], 0)
    assert a != c.attempt_dir([["u1"], ["u2"]], 1)


def test_perturbation_key_covers_audio_spec_seed_utterance_code_and_assets(monkeypatch) -> None:
    from asrbench.perturb import bank

    key = bank.perturb_key("sha-a", "gsm", 0, "u1", "assets-1")
    for changed in (
        ("sha-b", "gsm", 0, "u1", "assets-1"),
        ("sha-a", "mp3:2", 0, "u1", "assets-1"),
        ("sha-a", "gsm", 1, "u1", "assets-1"),
        ("sha-a", "gsm", 0, "u2", "assets-1"),
        ("sha-a", "gsm", 0, "u1", "assets-2"),
    ):
        assert bank.perturb_key(*changed) != key
    # The bank's code identity covers its sources, library versions and the sox binary.
    ident = bank.code_identity()
    assert any(name == "derive.py" for name, _ in ident["files"])
    assert set(ident["libraries"]) == set(bank.LIBRARIES) and "SoX" in ident["sox"]
    monkeypatch.setattr(bank, "code_digest", lambda: "another-code")
    assert bank.perturb_key("sha-a", "gsm", 0, "u1", "assets-1") != key


def test_asset_identity_covers_noise_overrides_rirs_and_babble(tmp_path: Path) -> None:
    from asrbench.perturb.bank import asset_identity, assets_digest
    from asrbench.settings import Settings

    def key(env: dict[str, str], babble: str = "sha256:d") -> str:
        return assets_digest(asset_identity(Settings.from_env(env), babble))

    base = key({})
    assert key({}) == base
    noise = tmp_path / "noise"
    noise.mkdir()
    sf.write(noise / "a.wav", np.zeros(160), 16000)
    with_override = key({"ASRBENCH_NOISE_ENV": str(noise)})
    assert with_override != base
    sf.write(noise / "a.wav", np.ones(160) * 0.1, 16000)  # same file name, new bytes
    os.utime(noise / "a.wav", ns=(2, 2))
    assert key({"ASRBENCH_NOISE_ENV": str(noise)}) != with_override
    rirs = tmp_path / "rirs" / "bin1"
    rirs.mkdir(parents=True)
    sf.write(rirs / "r.wav", np.r_[1.0, np.zeros(99)], 16000)
    assert key({"ASRBENCH_RIR_DIR": str(tmp_path / "rirs")}) != base
    assert key({}, babble="sha256:other") != base
    # Shipped assets enter by content: the listing names every shipped noise file.
    shipped = asset_identity(Settings.from_env({}), None)["shipped"]["noise"]
    assert {name for name, _ in shipped} >= {"doing_the_dishes.wav", "exercise_bike.wav"}


def test_changed_noise_file_is_never_served_from_the_cache(
    tmp_path: Path, monkeypatch, mini_en: Path
) -> None:
    """The reported bug: change a noise pool's file and the cache returned stale audio."""
    from asrbench.perturb.derive import derive_dataset

    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    noise = tmp_path / "noise"
    noise.mkdir()
    rng = np.random.default_rng(0)
    sf.write(noise / "n.wav", 0.3 * rng.standard_normal(32000), 16000, subtype="PCM_16")
    monkeypatch.setenv("ASRBENCH_NOISE_ENV", str(noise))
    utt = ["LJ001-0013"]
    first = derive_dataset(mini_en, "env_noise:3", out=tmp_path / "a", utt_ids=utt)
    a = hash_file(first.path / "audio" / "LJ001-0013.wav")
    again = derive_dataset(mini_en, "env_noise:3", out=tmp_path / "b", utt_ids=utt)
    assert again.cached == 1 and hash_file(again.path / "audio" / "LJ001-0013.wav") == a
    sf.write(noise / "n.wav", 0.3 * rng.standard_normal(32000), 16000, subtype="PCM_16")
    os.utime(noise / "n.wav", ns=(3, 3))
    changed = derive_dataset(mini_en, "env_noise:3", out=tmp_path / "c", utt_ids=utt)
    assert changed.cached == 0
    assert hash_file(changed.path / "audio" / "LJ001-0013.wav") != a
    import yaml

    prov = yaml.safe_load((changed.path / "dataset.yaml").read_text())["derived_from"]
    assert prov["asset_files"]["overrides"]["env"][0][0] == "n.wav"
    assert (
        prov["assets"]
        != yaml.safe_load((first.path / "dataset.yaml").read_text())["derived_from"]["assets"]
    )


def test_scorer_identity_moves_with_options_and_data_files(tmp_path: Path) -> None:
    from asrbench.scorers import get_scorer, scorer_identity

    base = scorer_identity(get_scorer("en", {"nsw": False}))
    assert scorer_identity(get_scorer("en", {"nsw": False})) == base
    assert (
        scorer_identity(get_scorer("en", {"nsw": False, "punc": False})).config_hash
        != base.config_hash
    )
    alt = tmp_path / "alts.txt"
    alt.write_text("okay|ok\n")
    one = scorer_identity(get_scorer("en", {"nsw": False, "alternatives": str(alt)}))
    alt2 = tmp_path / "alts2.txt"
    alt2.write_text("okay|ok|o.k.\n")
    two = scorer_identity(get_scorer("en", {"nsw": False, "alternatives": str(alt2)}))
    assert len({base.config_hash, one.config_hash, two.config_hash}) == 3
    copy = tmp_path / "same.txt"
    copy.write_text("okay|ok\n")  # same content elsewhere: the same identity
    assert (
        scorer_identity(get_scorer("en", {"nsw": False, "alternatives": str(copy)})).config_hash
        == one.config_hash
    )
    assert base.code.startswith("sha256:")


def test_compiled_dae_rules_kept_by_what_compiling_them_reads(tmp_path: Path, monkeypatch) -> None:
    """<cache>/dae keeps each configuration's compiled DAE rules (asrbench.scorers): read back
    while its key holds, compiled again when the file is unreadable, and the key moves with
    the alternatives file's content, the options and the scoring code."""
    from asrbench import scorers
    from scoring import ScorerConfig

    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    alt = tmp_path / "alts.txt"
    alt.write_text("okay|ok\n")
    cfg = ScorerConfig(nsw=False, alternatives=str(alt))
    calls: list[int] = []

    def build() -> tuple:
        calls.append(1)
        return ("compiled", len(calls))

    assert scorers._kept_rules(cfg, build) == ("compiled", 1)
    assert scorers._kept_rules(cfg, build) == ("compiled", 1) and len(calls) == 1
    (kept,) = (tmp_path / "cache" / "dae").iterdir()
    kept.write_bytes(b"\x00cut short")
    assert scorers._kept_rules(cfg, build) == ("compiled", 2)
    assert scorers._kept_rules(cfg, build) == ("compiled", 2)
    key = scorers.dae_rules_key(cfg)
    alt.write_text("okay|ok|o.k.\n")
    assert scorers.dae_rules_key(cfg) != key
    alt.write_text("okay|ok\n")
    assert scorers.dae_rules_key(cfg) == key
    assert scorers.dae_rules_key(ScorerConfig(nsw=False, alternatives=str(alt), punc=False)) != key
    monkeypatch.setattr(scorers, "code_digest", lambda: "sha256:other")
    assert scorers.dae_rules_key(cfg) != key
    monkeypatch.setattr(scorers, "_KEPT_RULES", 2)  # the oldest entries go past the limit
    for n in range(3):
        scorers._kept_rules(ScorerConfig(nsw=False, alternatives=str(alt), bootstrap=n), build)
    assert len(list((tmp_path / "cache" / "dae").iterdir())) == 2


def test_zoo_version_covers_kind_id_meta_image_and_files() -> None:
    from asrbench.zoo.manifest import FileEntry, compute_version

    files = [FileEntry("a.wav", 3, "s1", False)]
    v = compute_version("dataset", "x", files, {"k": 1}, None)
    assert v != compute_version("model", "x", files, {"k": 1}, None)
    assert v != compute_version("dataset", "y", files, {"k": 1}, None)
    assert v != compute_version("dataset", "x", files, {"k": 2}, None)
    assert v != compute_version("dataset", "x", files, {"k": 1}, {"sha256": "i"})
    assert v != compute_version(
        "dataset", "x", [FileEntry("a.wav", 3, "s2", False)], {"k": 1}, None
    )
    assert v != compute_version("dataset", "x", [FileEntry("a.wav", 3, "s1", True)], {"k": 1}, None)


def test_quality_and_rir_keys_are_identities() -> None:
    """The remaining caches use the module, not a hand-bumped version string."""
    import inspect
    import re

    from asrbench.perturb import quality, rooms

    # however the formatter wraps the call
    assert re.search(r'digest\(\s*"quality"', inspect.getsource(quality.cached_quality))
    assert re.search(r'digest\(\s*"rir-bank"', inspect.getsource(rooms.rir_bank))
    assert not hasattr(quality, "QUALITY_VERSION") and not hasattr(rooms, "BANK_VERSION")


def test_no_other_sha256_formula_in_the_platform() -> None:
    """Every key goes through asrbench.identity: no module but it builds SHA-256 digests."""
    import re

    root = Path(identity.__file__).parent
    # seeds too: apply.py and shard.py derive theirs through identity.seed_digest
    allowed = {"identity.py"}
    uses = re.compile(r"^\s*(import hashlib|from hashlib import)", re.M)
    offenders = [
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if p.name not in allowed and uses.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
