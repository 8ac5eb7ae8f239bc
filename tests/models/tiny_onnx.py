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
- NeMo TDT and RNN-T for onnx-asr (`onnx_asr_nemo_tdt`, `onnx_asr_nemo_rnnt`: Parakeet TDT's
  and RNN-T's layout): `encoder-model.onnx` and `decoder_joint-model.onnx` (two
  prediction-network states; token logits, then duration logits for TDT only).
- NeMo Canary for onnx-asr (`onnx_asr_nemo_aed`, an attention encoder-decoder): an encoder
  giving `encoder_embeddings` and `encoder_mask`, a decoder taking the tokens so far and its
  cached states (`decoder_mems`), and a vocabulary with Canary's prompt tokens (`<|en|>`...).

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


def _tdt_modules(durations: int = DURATIONS):
    """NeMo's TDT export as onnx-asr reads it: the encoder, and prediction net + joint in one
    (`durations` 0: an RNN-T's, token logits only)."""
    import torch

    n_out = len(TOKENS) + durations

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
    return _onnx_asr_transducer(folder, "nemo-conformer-tdt", DURATIONS)


def onnx_asr_nemo_rnnt(folder: Path) -> Path:
    """The same files as `onnx_asr_nemo_tdt` for `nemo-conformer-rnnt` (Parakeet RNN-T,
    FastConformer transducers): the joint gives token logits only, blank last."""
    return _onnx_asr_transducer(folder, "nemo-conformer-rnnt", 0)


def _onnx_asr_transducer(folder: Path, model_type: str, durations: int) -> Path:
    import torch

    encoder, decoder_joint = _tdt_modules(durations)
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
        "model_type": model_type,
        "features_size": FEATURES,
        "subsampling_factor": SUBSAMPLING,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    return folder


def _nemo_transducer_modules(durations: int):
    """NeMo's transducer export as sherpa-onnx reads it: encoder, prediction net, joint."""
    import torch

    encoder, _ = _tdt_modules(durations)

    class Decoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(len(TOKENS), HIDDEN)

        def forward(self, targets, target_length, states_1, states_2):
            state = torch.tanh(self.embed(targets.long())[:, 0] + states_1[0])  # (B, H)
            return state[:, :, None], target_length, state[None], states_2  # (B, H, 1)

    class Joiner(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.enc = torch.nn.Linear(DIM, HIDDEN)
            self.out = torch.nn.Linear(HIDDEN, len(TOKENS) + durations)

        def forward(self, encoder_outputs, decoder_outputs):  # (B, DIM, 1), (B, H, 1)
            hidden = torch.tanh(self.enc(encoder_outputs[:, :, 0]) + decoder_outputs[:, :, 0])
            return self.out(hidden)[:, None, None, :]  # (B, 1, 1, tokens [+ durations])

    torch.manual_seed(0)
    return encoder, Decoder().eval(), Joiner().eval()


def sherpa_nemo_transducer(folder: Path, tdt: bool = False) -> Path:
    """`encoder.onnx`, `decoder.onnx`, `joiner.onnx`, `tokens.txt` as sherpa-onnx's NeMo
    transducer (`from_transducer(model_type="nemo_transducer")`) reads them: NeMo's export of
    an RNN-T (or, `tdt`, a TDT: duration logits after the tokens, "tdt" in the `url` metadata),
    with the encoder metadata sherpa-onnx's export scripts add (`vocab_size` without the blank,
    `subsampling_factor`, `normalize_type`, `pred_rnn_layers`, `pred_hidden`), blank last."""
    import torch

    encoder, decoder, joiner = _nemo_transducer_modules(DURATIONS if tdt else 0)
    meta = {
        "vocab_size": str(len(TOKENS) - 1),
        "subsampling_factor": str(SUBSAMPLING),
        "normalize_type": "per_feature",
        "pred_rnn_layers": "1",
        "pred_hidden": str(HIDDEN),
        "model_type": "EncDecRNNTBPEModel",
        "url": "tiny-nemo-tdt" if tdt else "tiny-nemo-rnnt",
    }
    export(
        encoder,
        (torch.randn(1, FEATURES, 100), torch.tensor([100], dtype=torch.int64)),
        folder / "encoder.onnx",
        {
            "inputs": ["audio_signal", "length"],
            "outputs": ["outputs", "encoded_lengths"],
            "axes": {"audio_signal": {0: "B", 2: "T"}, "length": {0: "B"}, "outputs": {2: "T"}},
        },
        meta,
    )
    state = torch.zeros(1, 1, HIDDEN)
    export(
        decoder,
        (torch.zeros(1, 1, dtype=torch.int32), torch.ones(1, dtype=torch.int32), state, state),
        folder / "decoder.onnx",
        {
            "inputs": ["targets", "target_length", "states_1", "states_2"],
            "outputs": ["outputs", "prednet_lengths", "next_states_1", "next_states_2"],
            "axes": {},
        },
        {},
    )
    export(
        joiner,
        (torch.randn(1, DIM, 1), torch.randn(1, HIDDEN, 1)),
        folder / "joiner.onnx",
        {"inputs": ["encoder_outputs", "decoder_outputs"], "outputs": ["outputs"], "axes": {}},
        {},
    )
    (folder / "tokens.txt").write_text(_token_lines(), encoding="utf-8")
    return folder


# Canary's prompt (onnx-asr's NemoConformerAED reads these tokens from the vocabulary), and the
# end of text; `<|...|>` tokens never reach the transcript.
AED_SPECIALS = [
    "<|endoftext|>",
    "<|startofcontext|>",
    "<|startoftranscript|>",
    "<|emo:undefined|>",
    "<|en|>",
    "<|pnc|>",
    "<|nopnc|>",
    "<|noitn|>",
    "<|notimestamp|>",
    "<|nodiarize|>",
]
AED_MAX_LEN = 40  # config.json's max_sequence_length: the 10-token prompt and 30 more


def _aed_modules():
    """An attention encoder-decoder in the layout of NeMo Canary's ONNX export: the encoder's
    embeddings and mask, a decoder over the tokens so far that caches its states (`decoder_mems`,
    (layers, batch, tokens so far, width)), attending to the utterance's frames (one
    dot-product head, masked); the end-of-text logit is held down so that a random model
    writes tokens up to `AED_MAX_LEN`."""
    import torch

    vocab = len(TOKENS) - 1 + len(AED_SPECIALS)

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(FEATURES, DIM)

        def forward(self, audio_signal, length):  # (B, 80, T), (B,)
            x = torch.tanh(self.proj(audio_signal[:, :, ::SUBSAMPLING].transpose(1, 2)))
            frames = torch.arange(x.shape[1]).unsqueeze(0)
            mask = frames < ((length - 1) // SUBSAMPLING + 1).unsqueeze(1)
            return x, mask.to(torch.int64)  # (B, T', DIM), (B, T')

    class Decoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, DIM)
            self.position = torch.nn.Embedding(AED_MAX_LEN + 1, DIM)
            self.out = torch.nn.Linear(DIM, vocab)
            eos = torch.zeros(vocab)
            eos[len(TOKENS) - 1] = -1e4  # <|endoftext|>, the first special
            self.register_buffer("eos", eos)

        def forward(self, input_ids, encoder_embeddings, encoder_mask, decoder_mems):
            positions = torch.arange(input_ids.shape[1]) + decoder_mems.shape[2]
            query = self.embed(input_ids) + self.position(positions)[None]  # (B, L, DIM)
            scores = query @ encoder_embeddings.transpose(1, 2)  # (B, L, T')
            scores = scores.masked_fill(encoder_mask.unsqueeze(1) == 0, -1e4)
            context = scores.softmax(-1) @ encoder_embeddings  # (B, L, DIM)
            hidden = torch.tanh(query + 4.0 * context)
            states = torch.cat([decoder_mems, hidden[None]], dim=2)
            return self.out(hidden) + self.eos, states  # (B, L, vocab), (1, B, past + L, DIM)

    torch.manual_seed(0)
    return Encoder().eval(), Decoder().eval()


def onnx_asr_nemo_aed(folder: Path) -> Path:
    """`encoder-model.onnx`, `decoder-model.onnx`, `vocab.txt`, `config.json` as onnx-asr's
    `nemo-conformer-aed` (Canary) reads them: the names of every input and output, the cached
    decoder states' shape, the prompt tokens in the vocabulary."""
    import torch

    encoder, decoder = _aed_modules()
    audio = {"audio_signal": {0: "B", 2: "T"}, "length": {0: "B"}}
    export(
        encoder,
        (torch.randn(1, FEATURES, 100), torch.tensor([100], dtype=torch.int64)),
        folder / "encoder-model.onnx",
        {
            "inputs": ["audio_signal", "length"],
            "outputs": ["encoder_embeddings", "encoder_mask"],
            "axes": {**audio, "encoder_embeddings": {0: "B", 1: "T"}},
        },
        {},
    )
    export(
        decoder,
        (
            torch.zeros(1, 10, dtype=torch.int64),
            torch.randn(1, 25, DIM),
            torch.ones(1, 25, dtype=torch.int64),
            torch.zeros(1, 1, 3, DIM),
        ),
        folder / "decoder-model.onnx",
        {
            "inputs": ["input_ids", "encoder_embeddings", "encoder_mask", "decoder_mems"],
            "outputs": ["logits", "decoder_hidden_states"],
            "axes": {
                "input_ids": {0: "B", 1: "L"},
                "encoder_embeddings": {0: "B", 1: "T"},
                "encoder_mask": {0: "B", 1: "T"},
                "decoder_mems": {1: "B", 2: "P"},
            },
        },
        {},
    )
    tokens = [*TOKENS[:-1], *AED_SPECIALS]  # no CTC blank
    (folder / "vocab.txt").write_text(
        "".join(f"{t} {i}\n" for i, t in enumerate(tokens)), encoding="utf-8"
    )
    config = {
        "model_type": "nemo-conformer-aed",
        "features_size": FEATURES,
        "subsampling_factor": SUBSAMPLING,
        "max_sequence_length": AED_MAX_LEN,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    return folder


# sherpa-onnx's Canary prompt also names these languages (its canary recognizer looks them up).
CANARY_SPECIALS = [*AED_SPECIALS, "<|es|>", "<|de|>", "<|fr|>"]


def _canary_modules(vocab: int):
    """NeMo Canary's export as sherpa-onnx's `nemo_canary` reads it: the encoder takes (1, T, 80)
    features and gives states, lengths and mask; the decoder takes one `[token, position]` pair,
    one cached state per layer (1, tokens so far, width), the encoder's states and mask, and
    gives the next token's logits (special tokens held down: they would be text) and states."""
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(FEATURES, DIM)

        def forward(self, x, x_length):  # (1, T, 80), (1,)
            states = torch.tanh(self.proj(x[:, ::SUBSAMPLING]))
            lengths = (x_length - 1) // SUBSAMPLING + 1
            mask = torch.arange(states.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
            return states, lengths, mask.to(torch.int64)

    class Decoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, DIM)
            self.out = torch.nn.Linear(DIM, vocab)
            self.register_buffer("freqs", torch.linspace(0.05, 1.0, DIM))
            bias = torch.zeros(vocab)
            bias[len(TOKENS) - 1 :] = -1e4  # every <|...|> token, <|endoftext|> included
            self.register_buffer("bias", bias)

        def forward(self, decoder_input, states, enc_states, enc_mask):
            token, position = decoder_input[:, 0].long(), decoder_input[:, 1:].float()
            query = self.embed(token) + torch.sin(position * self.freqs)  # (1, DIM)
            scores = query[:, None] @ enc_states.transpose(1, 2)  # (1, 1, T')
            scores = scores.masked_fill(enc_mask.unsqueeze(1) == 0, -1e4)
            hidden = torch.tanh(query[:, None] + 4.0 * (scores.softmax(-1) @ enc_states))
            return self.out(hidden) + self.bias, torch.cat([states, hidden], dim=1)

    torch.manual_seed(0)
    return Encoder().eval(), Decoder().eval()


def sherpa_nemo_canary(folder: Path) -> Path:
    """`encoder.onnx`, `decoder.onnx`, `tokens.txt` as sherpa-onnx's `from_nemo_canary` reads
    them (`offline-canary-model.cc`, `offline-recognizer-canary-impl.h`): the encoder's metadata
    (`model_type` EncDecMultiTaskModel, `vocab_size`, `normalize_type`, `subsampling_factor`,
    `feat_dim`, `num_decoder_layers`, `decoder_hidden_size`), the prompt tokens in tokens.txt."""
    import torch

    tokens = [*TOKENS[:-1], *CANARY_SPECIALS]
    encoder, decoder = _canary_modules(len(tokens))
    meta = {
        "model_type": "EncDecMultiTaskModel",
        "vocab_size": str(len(tokens)),
        "normalize_type": "per_feature",
        "subsampling_factor": str(SUBSAMPLING),
        "feat_dim": str(FEATURES),
        "num_decoder_layers": "1",
        "decoder_hidden_size": str(DIM),
    }
    export(
        encoder,
        (torch.randn(1, 100, FEATURES), torch.tensor([100], dtype=torch.int64)),
        folder / "encoder.onnx",
        {
            "inputs": ["x", "x_length"],
            "outputs": ["enc_states", "enc_length", "enc_mask"],
            "axes": {"x": {1: "T"}, "enc_states": {1: "T"}, "enc_mask": {1: "T"}},
        },
        meta,
    )
    export(
        decoder,
        (
            torch.tensor([[3, 0]], dtype=torch.int32),
            torch.zeros(1, 2, DIM),
            torch.randn(1, 25, DIM),
            torch.ones(1, 25, dtype=torch.int64),
        ),
        folder / "decoder.onnx",
        {
            "inputs": ["decoder_input", "states", "enc_states", "enc_mask"],
            "outputs": ["logits", "next_states"],
            "axes": {"states": {1: "P"}, "enc_states": {1: "T"}, "enc_mask": {1: "T"}},
        },
        {},
    )
    (folder / "tokens.txt").write_text(
        "".join(f"{t} {i}\n" for i, t in enumerate(tokens)), encoding="utf-8"
    )
    return folder


def template_copy(template: str, dest: Path, weights: Path, weight_files=None, **runtime) -> Path:
    """models/<template> beside a copy of _common, pinned to the files in `weights` (what a user
    does with a template: `weights.files`, `weights.sha256`), `runtime` updated. The card's
    `weights.dir` is left as it is (a variable the test sets), so the card, and so the image
    tag, is the same on every run."""
    from asrbench.identity import file_sha256
    from tests.factories import copy_model

    def pinned(card: dict) -> None:
        if weight_files is not None:
            card["weights"]["files"] = {name: name for name in weight_files}
        files = card["weights"]["files"]
        card["weights"]["sha256"] = {n: file_sha256(weights / n) for n in files}
        card["runtime"].update(runtime)

    return copy_model(template, dest, pinned)


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
