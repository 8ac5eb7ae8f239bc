"""Fixtures for the benchmark job: small real models (a fake local one, pocketsphinx in Docker)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT

FAKE_PROGRAM = textwrap.dedent('''
    """Fake ASR for tests: echoes the file name; fails on IDs listed in FAIL_IDS, or entirely."""
    import os, sys, time
    from pathlib import Path

    wav_list, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    if MODE == "broken":
        print("fake: cannot load weights from /nonexistent/model.bin", file=sys.stderr)
        sys.exit(3)
    crash_after = None
    if MODE == "crash_once" and not os.path.exists(MARKER):
        open(MARKER, "w").close()
        crash_after = 2
    with open(out / "hyp.tsv", "a") as hyp, open(out / "failed.tsv", "a") as failed, \\
         open(out / "timing.tsv", "a") as timing:
        for line in Path(wav_list).read_text().splitlines():
            uid, _, path = line.partition("\\t")
            if uid in FAIL_IDS:
                failed.write(f"{uid}\\tsimulated decoder crash\\n")
                continue
            if crash_after is not None and crash_after == 0:
                hyp.write(f"{uid}\\tin being compa")  # torn line, then a crash
                hyp.flush()
                os._exit(139)
            hyp.write(f"{uid}\\tin being comparatively modern\\n")
            timing.write(f"{uid}\\t0.0100\\t1.000\\n")
            hyp.flush()
            timing.flush()
            if crash_after is not None:
                crash_after -= 1
    print("fake: done; utt timeout", os.environ.get("ASRBENCH_UTT_TIMEOUT"), file=sys.stderr)
''')


def make_fake_model(root: Path, model_id: str, mode: str = "ok",
                    fail_ids: tuple[str, ...] = (), marker: Path | None = None) -> Path:
    """A model folder whose program needs no packages (fast with the local runner)."""
    folder = root / model_id
    folder.mkdir(parents=True)
    (folder / "model.yaml").write_text(textwrap.dedent(f"""\
        id: {model_id}
        name: Fake {mode}
        family: test
        architecture: none
        licence: MIT
        languages: [en]
        sample_rate: 16000
        program: fake.py
        """))
    (folder / "Dockerfile").write_text("FROM scratch\n")
    (folder / "requirements.txt").write_text("# none\n")
    head = (f"MODE = {mode!r}\nFAIL_IDS = {set(fail_ids)!r}\n"
            f"MARKER = {str(marker or root / 'crashed-once')!r}\n")
    (folder / "fake.py").write_text(head + FAKE_PROGRAM)
    return folder


@pytest.fixture
def fake_models(tmp_path: Path):
    """Factory: fake_models(id, mode, fail_ids) -> model folder under tmp_path/models."""
    return lambda *a, **k: make_fake_model(tmp_path / "models", *a, **k)


@pytest.fixture(scope="session")
def stateless_pocketsphinx() -> Path:
    """models/pocketsphinx_en, which resets its decoder's feature state before each utterance.

    PocketSphinx otherwise carries live cepstral-mean statistics from one utterance to the next,
    so sharding or resuming would change results through the model, not the platform.
    """
    src = REPO_ROOT / "models" / "pocketsphinx_en"
    assert "reinit_feat" in (src / "transcribe.py").read_text()
    return src
