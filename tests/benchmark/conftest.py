"""Fixtures for the benchmark job: small real models (a fake local one, pocketsphinx in Docker)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from asrbench.settings import REPO_ROOT
from tests.factories import make_model

FAKE_PROGRAM = textwrap.dedent(r'''
    """Fake ASR for tests: one text for every utterance; fails on IDs in FAIL_IDS, or entirely.

    Modes: ok, broken (exits 3 at once), crash_once (dies after 2 utterances, first run only),
    poison (after a failure every later utterance of the process fails too), liar (writes its
    first ID twice with different texts and an ID it was not given), tabs (a tab in the text),
    gate (after its first utterance, waits until the MARKER file exists), costed (writes a
    cost.tsv line per utterance, as the API wrappers do).
    """
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
    poisoned = False
    lines = Path(wav_list).read_text().splitlines()
    first = lines[0].partition("\t")[0] if lines else None
    with open(out / "hyp.tsv", "a") as hyp, open(out / "failed.tsv", "a") as failed, \
         open(out / "timing.tsv", "a") as timing:
        for line in lines:
            uid, _, path = line.partition("\t")
            if MODE == "poison" and poisoned:
                failed.write(f"{uid}\tdecoder in a bad state\n")
                failed.flush()
                continue
            if uid in FAIL_IDS:
                failed.write(f"{uid}\tsimulated decoder crash\n")
                failed.flush()
                poisoned = True
                continue
            if crash_after is not None and crash_after == 0:
                hyp.write(f"{uid}\tin being compa")  # torn line, then a crash
                hyp.flush()
                os._exit(139)
            if MODE == "liar" and uid == first:
                hyp.write(f"{uid}\tone text\n{uid}\tanother text\nnot-given\tsurprise\n")
            elif MODE == "tabs":
                hyp.write(f"{uid}\tin being\tcomparatively modern\n")
            else:
                hyp.write(f"{uid}\tin being comparatively modern\n")
            timing.write(f"{uid}\t0.0100\t1.000\n")
            if MODE == "costed":  # an API model's per-utterance price estimate
                with open(out / "cost.tsv", "a") as cost:
                    cost.write(f"{uid}\t0.001250\n")
            hyp.flush()
            timing.flush()
            if crash_after is not None:
                crash_after -= 1
            while MODE == "gate" and not os.path.exists(MARKER):
                time.sleep(0.05)  # blocks after its first utterance until the test opens it
    print("fake: done; utt timeout", os.environ.get("ASRBENCH_UTT_TIMEOUT"), file=sys.stderr)
''')


def make_fake_model(
    root: Path,
    model_id: str,
    mode: str = "ok",
    fail_ids: tuple[str, ...] = (),
    marker: Path | None = None,
    **card: Any,
) -> Path:
    """A model folder whose program needs no packages (fast with the local runner); `card`
    adds or changes card fields (tests/factories.py)."""
    head = (
        f"MODE = {mode!r}\nFAIL_IDS = {set(fail_ids)!r}\n"
        f"MARKER = {str(marker or root / 'crashed-once')!r}\n"
    )
    folder = make_model(root, model_id, head + FAKE_PROGRAM, **{"name": f"Fake {mode}", **card})
    (folder / "Dockerfile").write_text("FROM scratch\n")
    return folder


def make_program_model(root: Path, model_id: str, program: str, card_extra: str = "") -> Path:
    """A model folder around a given stand-in program (`prog.py`, no packages needed);
    `card_extra` adds lines to model.yaml (secrets, network)."""
    return make_model(
        root, model_id, program, name=f"Stand-in {model_id}", program="prog.py", extra=card_extra
    )


CANNED_PROGRAM = textwrap.dedent(r'''
    """Stand-in ASR for tests: the canned answer of each ID (answers.json beside this file):
    its `text` to hyp.tsv and, where the answer has `segments` (speakers optional), a line of
    hyp.timed.jsonl (models/README.md, "Timed output")."""
    import json, sys
    from pathlib import Path

    answers = json.loads((Path(__file__).parent / "answers.json").read_text())
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "hyp.tsv", "a") as hyp, open(out / "hyp.timed.jsonl", "a") as timed:
        for line in Path(sys.argv[1]).read_text().splitlines():
            uid = line.partition("\t")[0]
            answer = answers.get(uid, {"text": ""})
            hyp.write(f"{uid}\t{answer['text']}\n")
            if "segments" in answer:
                timed.write(json.dumps({"id": uid, "segments": answer["segments"]}) + "\n")
''')


def make_canned_model(root: Path, model_id: str, answers: dict[str, dict]) -> Path:
    """A model folder whose program writes canned answers, ID -> {"text", "segments"?} (each
    segment {start, end, text, speaker?}): timed, speaker-attributed output without a model."""
    import json

    folder = make_program_model(root, model_id, CANNED_PROGRAM)
    (folder / "answers.json").write_text(json.dumps(answers, indent=1))
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
