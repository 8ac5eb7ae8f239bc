"""Tiny ONNX speech models made by the tests, in the formats real runtimes load (no download),
and the steps every runtime test takes with them (a template card pointed at them, a Docker
benchmark of real mini_en utterances, the checks on the cell and the image).

Randomly initialised torch modules (seeded: the same bytes on every run) exported with torch's
TorchScript ONNX exporter, each in the layout its runtime's loader reads (names of inputs and
outputs, metadata, side files), as read in the runtimes' source:

- NeMo CTC (`sherpa_nemo_ctc`, `onnx_asr_nemo_ctc`): what NeMo's `export()` writes for an
  `EncDecCTCModel`: inputs `audio_signal` (batch, 80 log-Mel features, frames) and `length`,
  output `logprobs` (batch, frames / 4, vocabulary), the CTC blank `<blk>` last. sherpa-onnx
  (`nemo_ctc`) also wants `tokens.txt` (`TOKEN ID` per line) and metadata in the model
  (`vocab_size`, `subsampling_factor`, `normalize_type`: its `offline-nemo-enc-dec-ctc-model.cc`);
  onnx-asr (`nemo-conformer-ctc`) wants `vocab.txt` (same format) and `config.json`
  (`model_type`, `features_size`, `subsampling_factor`: its `resolver.py`, `models/nemo.py`).
- icefall transducer for sherpa-onnx (`sherpa_transducer`): encoder, stateless decoder and
  joiner, `vocab_size` and `context_size` in the decoder's metadata, blank first.
- NeMo TDT for onnx-asr (`onnx_asr_nemo_tdt`, Parakeet TDT's layout): `encoder-model.onnx` and
  `decoder_joint-model.onnx` (two prediction-network states, token then duration logits).

Random weights transcribe nothing real: the tests check that the runtime loads the model, runs
it on real audio and writes the contract's files, not what it hears.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

FEATURES = 80  # NeMo's usual log-Mel size; both runtimes compute these features themselves
SUBSAMPLING = 4
# Characters, `▁` starting a word (SentencePiece's marker, which both runtimes turn into a
# space), the CTC blank last.
TOKENS = ["▁", *"abcdefghijklmnopqrstuvwxyz", "'", "<blk>"]


def _module():
    import torch

    class TinyCtc(torch.nn.Module):
        """Subsample by SUBSAMPLING, one hidden layer, log-softmax; frames past `length` blank."""

        def __init__(self) -> None:
            super().__init__()
            self.hidden = torch.nn.Linear(FEATURES, 32)
            self.out = torch.nn.Linear(32, len(TOKENS))

        def forward(self, audio_signal, length):
            x = audio_signal[:, :, ::SUBSAMPLING].transpose(1, 2)
            logits = self.out(torch.tanh(self.hidden(x)))
            frames = torch.arange(x.shape[1]).unsqueeze(0)
            valid = frames < ((length - 1) // SUBSAMPLING + 1).unsqueeze(1)
            blank = torch.full_like(logits, -1e4)
            blank[..., -1] = 0.0
            return torch.where(valid.unsqueeze(2), logits, blank).log_softmax(-1)

    torch.manual_seed(0)
    return TinyCtc().eval()


def export(module, example: tuple, path: Path, names: dict, meta: dict[str, str]) -> Path:
    """`module` as ONNX at `path`: `names` gives `inputs`, `outputs` and `axes` (the dynamic
    ones), `meta` goes into the model's metadata properties (what sherpa-onnx reads)."""
    import onnx
    import torch

    buf = io.BytesIO()
    with warnings.catch_warnings():  # torch's notice that this is its TorchScript exporter
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            example,
            buf,
            dynamo=False,
            input_names=names["inputs"],
            output_names=names["outputs"],
            dynamic_axes=names["axes"],
            opset_version=17,
        )
    model = onnx.load_from_string(buf.getvalue())
    for key, value in meta.items():
        model.metadata_props.add(key=key, value=value)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def export_ctc(path: Path, meta: dict[str, str] | None = None) -> Path:
    """The tiny NeMo-style CTC model as ONNX at `path`, with `meta` in its properties."""
    import torch

    example = (torch.randn(1, FEATURES, 100), torch.tensor([100], dtype=torch.int64))
    names = {
        "inputs": ["audio_signal", "length"],
        "outputs": ["logprobs"],
        "axes": {"audio_signal": {0: "B", 2: "T"}, "length": {0: "B"}},
    }
    return export(_module(), example, path, names, meta or {})


CONTEXT = 2  # the transducer decoder's context: the last two tokens (icefall's stateless decoder)
DIM = 16


def _transducer_modules():
    """Encoder, stateless decoder and joiner, as icefall exports a transducer (blank is 0)."""
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(FEATURES, DIM)

        def forward(self, x, x_lens):  # (N, T, 80) features, (N,) frames
            return torch.tanh(self.proj(x[:, ::SUBSAMPLING])), (x_lens - 1) // SUBSAMPLING + 1

    class Decoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(len(TRANSDUCER_TOKENS), DIM)

        def forward(self, y):  # (N, CONTEXT) previous tokens
            return torch.tanh(self.embed(y).mean(dim=1))

    class Joiner(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.out = torch.nn.Linear(DIM, len(TRANSDUCER_TOKENS))

        def forward(self, encoder_out, decoder_out):  # (N, DIM) each
            return self.out(torch.tanh(encoder_out + decoder_out))

    torch.manual_seed(0)
    return Encoder().eval(), Decoder().eval(), Joiner().eval()


TRANSDUCER_TOKENS = ["<blk>", *TOKENS[:-1]]  # icefall's order: the blank first


def sherpa_transducer(folder: Path) -> Path:
    """`encoder.onnx`, `decoder.onnx`, `joiner.onnx`, `tokens.txt` as sherpa-onnx's
    `from_transducer` reads them (`vocab_size` and `context_size` in the decoder's metadata,
    `model_type` in the encoder's: sherpa-onnx's `offline-transducer-model.cc`)."""
    import torch

    encoder, decoder, joiner = _transducer_modules()
    n = torch.tensor([100], dtype=torch.int64)
    export(
        encoder,
        (torch.randn(1, 100, FEATURES), n),
        folder / "encoder.onnx",
        {
            "inputs": ["x", "x_lens"],
            "outputs": ["encoder_out", "encoder_out_lens"],
            "axes": {"x": {0: "N", 1: "T"}, "x_lens": {0: "N"}, "encoder_out": {0: "N", 1: "T"}},
        },
        {"model_type": "zipformer"},
    )
    export(
        decoder,
        (torch.zeros(1, CONTEXT, dtype=torch.int64),),
        folder / "decoder.onnx",
        {"inputs": ["y"], "outputs": ["decoder_out"], "axes": {"y": {0: "N"}}},
        {"vocab_size": str(len(TRANSDUCER_TOKENS)), "context_size": str(CONTEXT)},
    )
    export(
        joiner,
        (torch.randn(1, DIM), torch.randn(1, DIM)),
        folder / "joiner.onnx",
        {
            "inputs": ["encoder_out", "decoder_out"],
            "outputs": ["logit"],
            "axes": {"encoder_out": {0: "N"}, "decoder_out": {0: "N"}},
        },
        {"joiner_dim": str(DIM)},
    )
    lines = "".join(f"{token} {i}\n" for i, token in enumerate(TRANSDUCER_TOKENS))
    (folder / "tokens.txt").write_text(lines, encoding="utf-8")
    return folder


def _token_lines() -> str:
    return "".join(f"{token} {i}\n" for i, token in enumerate(TOKENS))


def sherpa_nemo_ctc(folder: Path) -> Path:
    """`model.onnx` + `tokens.txt` as sherpa-onnx's `from_nemo_ctc` reads them."""
    meta = {
        "vocab_size": str(len(TOKENS)),
        "subsampling_factor": str(SUBSAMPLING),
        "normalize_type": "per_feature",
        "model_type": "EncDecCTCModelBPE",
    }
    export_ctc(folder / "model.onnx", meta)
    (folder / "tokens.txt").write_text(_token_lines(), encoding="utf-8")
    return folder


def onnx_asr_nemo_ctc(folder: Path) -> Path:
    """`model.onnx` + `vocab.txt` + `config.json` as onnx-asr's `nemo-conformer-ctc` reads them."""
    export_ctc(folder / "model.onnx")
    (folder / "vocab.txt").write_text(_token_lines(), encoding="utf-8")
    config = {
        "model_type": "nemo-conformer-ctc",
        "features_size": FEATURES,
        "subsampling_factor": SUBSAMPLING,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    return folder


HIDDEN = 8  # the TDT prediction network's state
DURATIONS = 5  # TDT's duration classes: 0..4 frames, as Parakeet TDT has


def _tdt_modules():
    """NeMo's TDT export as onnx-asr reads it: the encoder, and prediction net + joint in one."""
    import torch

    n_out = len(TOKENS) + DURATIONS

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(FEATURES, DIM)

        def forward(self, audio_signal, length):  # (B, 80, T), (B,)
            x = torch.tanh(self.proj(audio_signal[:, :, ::SUBSAMPLING].transpose(1, 2)))
            return x.transpose(1, 2), (length - 1) // SUBSAMPLING + 1  # (B, DIM, T')

    class DecoderJoint(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(len(TOKENS), HIDDEN)
            self.enc = torch.nn.Linear(DIM, HIDDEN)
            self.out = torch.nn.Linear(HIDDEN, n_out)

        def forward(self, encoder_outputs, targets, target_length, input_states_1, input_states_2):
            state = torch.tanh(self.embed(targets.long())[:, 0] + input_states_1[0])  # (B, H)
            hidden = torch.tanh(self.enc(encoder_outputs[:, :, 0]) + state)
            logits = self.out(hidden)[:, None, None, :]  # (B, 1, 1, tokens + durations)
            return logits, target_length, state[None], input_states_2

    torch.manual_seed(0)
    return Encoder().eval(), DecoderJoint().eval()


def onnx_asr_nemo_tdt(folder: Path) -> Path:
    """`encoder-model.onnx`, `decoder_joint-model.onnx`, `vocab.txt`, `config.json` as onnx-asr's
    `nemo-conformer-tdt` reads them (its `models/nemo.py`: the names of every input and output,
    the prediction net's two states, token logits then duration logits)."""
    import torch

    encoder, decoder_joint = _tdt_modules()
    export(
        encoder,
        (torch.randn(1, FEATURES, 100), torch.tensor([100], dtype=torch.int64)),
        folder / "encoder-model.onnx",
        {
            "inputs": ["audio_signal", "length"],
            "outputs": ["outputs", "encoded_lengths"],
            "axes": {"audio_signal": {0: "B", 2: "T"}, "length": {0: "B"}},
        },
        {},
    )
    state = torch.zeros(1, 1, HIDDEN)
    export(
        decoder_joint,
        (
            torch.randn(1, DIM, 1),
            torch.zeros(1, 1, dtype=torch.int32),
            torch.ones(1, dtype=torch.int32),
            state,
            state,
        ),
        folder / "decoder_joint-model.onnx",
        {
            "inputs": [
                "encoder_outputs",
                "targets",
                "target_length",
                "input_states_1",
                "input_states_2",
            ],
            "outputs": ["outputs", "prednet_lengths", "output_states_1", "output_states_2"],
            "axes": {},
        },
        {},
    )
    (folder / "vocab.txt").write_text(_token_lines(), encoding="utf-8")
    config = {
        "model_type": "nemo-conformer-tdt",
        "features_size": FEATURES,
        "subsampling_factor": SUBSAMPLING,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    return folder


def template_copy(template: str, dest: Path, weights: Path, weight_files=None, **runtime) -> Path:
    """models/<template> beside a copy of _common, pinned to the files in `weights` (what a user
    does with a template: `weights.files`, `weights.sha256`), `runtime` updated. The card's
    `weights.dir` is left as it is (a variable the test sets), so the card, and so the image
    tag, is the same on every run."""
    import shutil

    import yaml

    from asrbench.identity import file_sha256
    from asrbench.settings import REPO_ROOT

    shutil.copytree(REPO_ROOT / "models" / "_common", dest / "_common", dirs_exist_ok=True)
    folder = dest / template
    shutil.copytree(REPO_ROOT / "models" / template, folder)
    card = yaml.safe_load((folder / "model.yaml").read_text(encoding="utf-8"))
    if weight_files is not None:
        card["weights"]["files"] = {name: name for name in weight_files}
    card["weights"]["sha256"] = {n: file_sha256(weights / n) for n in card["weights"]["files"]}
    card["runtime"].update(runtime)
    (folder / "model.yaml").write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
    return folder


def bench_docker(folder: Path, work: Path, n_utts: int):
    """`ops/benchmark -m FOLDER -d mini_en --max-utts N` in Docker, results and cache in `work`."""
    from asrbench.benchmark import JobSpec, run_benchmark

    spec = JobSpec(
        runner="docker",
        results_root=work / "results",
        cache_root=work / "cache",
        max_utts=n_utts,
        progress=False,
        scorer_options={"nsw": False},
    )
    return run_benchmark(folder, "mini_en", spec)


def check_cell(cell, durations: dict[str, float], n_utts: int) -> dict[str, str]:
    """The cell holds a hypothesis in the model's own tokens, a timing and a score for every
    utterance, and different audio gave different text; returns the hypotheses."""
    from asrbench.runners import read_tsv_pairs

    hyps = read_tsv_pairs(cell.out_dir / "hyp.raw.tsv")  # the program's hyp.tsv, as written
    assert len(hyps) == n_utts and cell.summary.n_failed == 0, hyps
    assert set(hyps) <= set(durations)
    alphabet = set("".join(TOKENS[:-1]).replace("▁", " "))
    assert all(text and set(text) <= alphabet for text in hyps.values()), hyps
    assert len(set(hyps.values())) == n_utts, hyps  # the samples reached the network
    rows = [line.split("\t") for line in (cell.out_dir / "timing.tsv").read_text().splitlines()]
    assert {uid for uid, _, _ in rows} == set(hyps)
    for uid, processing, audio in rows:
        assert abs(float(audio) - durations[uid]) < 1e-3, (uid, audio)
        assert 0 < float(processing) < float(audio)
    assert cell.metrics.n_utts == n_utts and cell.metrics.ter > 0.5  # random weights
    return hyps


def image_tools(folder: Path) -> str:
    """What the model's image holds of a compiler or a package installer (`command -v`)."""
    import docker

    from asrbench.images import build_model_image
    from asrbench.modelcard import load_model

    tag, _ = build_model_image(load_model(folder))  # built by the run before: found by its tag
    tools = "cc gcc c++ g++ clang make pip pip3 /opt/venv/bin/pip"
    probe = f"for t in {tools}; do command -v $t; done; true"  # dash's -v stops at a miss
    out = docker.from_env().containers.run(tag, [probe], entrypoint=["/bin/sh", "-c"], remove=True)
    return out.decode().strip()
