"""What `models/_common/contract.py` holds for the programs besides the loop: the timed output
writer, the card beside the program, the weights folder and the GPU choice (each written once,
used by whisper, pocketsphinx, sherpa-onnx, onnx-asr and transformers)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from asrbench.settings import REPO_ROOT
from tests.factories import write_card


@pytest.fixture
def contract(tmp_path: Path, monkeypatch):
    """contract.py copied beside a card, as the platform copies it beside a program."""
    shutil.copy(REPO_ROOT / "models" / "_common" / "contract.py", tmp_path / "contract.py")
    write_card(tmp_path, "tiny_card")
    spec = importlib.util.spec_from_file_location("_contract_under_test", tmp_path / "contract.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look themselves up
    spec.loader.exec_module(module)
    return module


def test_timed_output_has_a_line_per_id_of_the_wav(contract, tmp_path):
    (tmp_path / "wav.list").write_text("a\t/x/1.wav\nb\t/x/2.wav\nc\t/x/1.wav\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    timed = contract.TimedOut([str(tmp_path / "wav.list"), str(out)])
    segments = [{"start": 0.0, "end": 1.5, "text": "héllo"}]
    timed.write("/x/1.wav", segments)  # segments only (Whisper)
    timed.write("/x/2.wav", segments, [{"start": 0.1, "end": 0.5, "word": "héllo"}])
    lines = (out / "hyp.timed.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "c", "b"]
    assert json.loads(lines[0]) == {"id": "a", "segments": segments, "words": []}
    assert json.loads(lines[2])["words"][0]["word"] == "héllo"
    assert "héllo" in lines[0]  # written as UTF-8, not escaped


def test_a_streamed_wav_list_gets_no_timed_output(contract, tmp_path):
    timed = contract.TimedOut([str(tmp_path / "not-a-file"), str(tmp_path)])
    timed.write("/x/1.wav", [{"start": 0.0, "end": 1.0, "text": "x"}])
    assert not (tmp_path / "hyp.timed.jsonl").exists()


def test_the_card_beside_the_program_and_its_weights_folder(contract, tmp_path, monkeypatch):
    card = contract.load_card()
    assert card["id"] == "tiny_card" and contract.card_name(card) == "models/tiny_card/model.yaml"
    monkeypatch.delenv("ASRBENCH_WEIGHTS_DIR", raising=False)
    monkeypatch.delenv("ASRBENCH_WEIGHTS_SRC", raising=False)
    with pytest.raises(contract.ModelSetupError, match="models/tiny_card/model.yaml: no weights"):
        contract.weights_folder(card)
    monkeypatch.setenv("ASRBENCH_WEIGHTS_SRC", str(tmp_path / "missing"))
    with pytest.raises(contract.ModelSetupError, match="missing"):
        contract.weights_folder(card)
    monkeypatch.setenv("ASRBENCH_WEIGHTS_SRC", str(tmp_path))
    assert contract.weights_folder(card) == tmp_path
    monkeypatch.setenv("ASRBENCH_WEIGHTS_DIR", str(tmp_path / "missing"))  # the image's first
    with pytest.raises(contract.ModelSetupError):
        contract.weights_folder(card)


def test_the_gpu_only_in_the_cuda_image_and_only_when_one_is_visible(contract, monkeypatch, capsys):
    monkeypatch.delenv("ASRBENCH_DEVICE", raising=False)
    assert contract.use_cuda("m", lambda: True) is False
    monkeypatch.setenv("ASRBENCH_DEVICE", "cuda")
    assert contract.use_cuda("m", lambda: True) is True
    assert capsys.readouterr().err == ""
    assert contract.use_cuda("m", lambda: False) is False
    assert capsys.readouterr().err == (
        "m: ASRBENCH_DEVICE=cuda but no GPU is visible: running on the CPU\n"
    )


def test_look_ahead_batches_the_paths_still_to_do_in_list_order(contract, tmp_path):
    rows = [("a", "/x/1.wav"), ("b", "/x/2.wav"), ("c", "/x/3.wav"), ("d", "/x/1.wav")]
    rows += [("e", "/x/5.wav")]
    wav_list = tmp_path / "wav.list"
    wav_list.write_text("".join(f"{u}\t{p}\n" for u, p in rows), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "hyp.tsv").write_text("b\tdone before\n", encoding="utf-8")  # resumed: b is done
    ahead = contract.LookAhead([str(wav_list), str(out)], 3)
    assert ahead.batch_for("/x/1.wav") == ["/x/1.wav", "/x/3.wav"]  # the repeat goes once
    assert ahead.batch_for("/x/5.wav") == ["/x/5.wav"]
    assert ahead.batch_for("/x/9.wav") == ["/x/9.wav"]  # not in the list: alone
    # batch 1, or a named pipe (ops/serve): never ahead
    assert contract.LookAhead([str(wav_list), str(out)], 1).batch_for("/x/1.wav") == ["/x/1.wav"]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert contract.LookAhead([str(fifo), str(out)], 4).paths == []
