"""Whisper's encoder-decoder Transformer in torch, holding a CTranslate2 model's weights.

The architecture of openai-whisper (Radford et al. 2022) as CTranslate2's `WhisperSpec` stores it:
two GELU convolutions (the second with stride 2) and sinusoidal positions, pre-norm encoder
blocks, a final LayerNorm; the decoder has learnt positions, pre-norm blocks of causal
self-attention, cross-attention and a GELU MLP, a final LayerNorm and logits tied to the token
embedding. CTranslate2 fuses the self-attention projections (q|k|v; its key bias is all zeros)
and the cross-attention key/value (k|v): the port keeps them fused the same way, so its
parameters are CTranslate2's variables one to one (`from_ct2`). Weights are float32 (the files
hold float16, converted exactly); `.double()` gives a float64 model for gradient checks.
"""

from __future__ import annotations

import re
from typing import cast

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["Whisper"]

KV = tuple[torch.Tensor, torch.Tensor]


def _heads(x: torch.Tensor, n: int) -> torch.Tensor:
    b, t, d = x.shape
    return x.view(b, t, n, d // n).transpose(1, 2)


def _merge(x: torch.Tensor) -> torch.Tensor:
    b, n, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, n * d)


class SelfAttention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.layer_norm = nn.LayerNorm(width)
        self.linear_0 = nn.Linear(width, 3 * width)  # q | k | v
        self.linear_1 = nn.Linear(width, width)

    def forward(
        self, x: torch.Tensor, causal: bool, cache: KV | None = None
    ) -> tuple[torch.Tensor, KV]:
        q, k, v = self.linear_0(self.layer_norm(x)).chunk(3, dim=-1)
        k, v = _heads(k, self.heads), _heads(v, self.heads)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        # A cached step has one query that sees every key: no mask. A full pass is causal.
        out = F.scaled_dot_product_attention(_heads(q, self.heads), k, v, is_causal=causal)
        return x + self.linear_1(_merge(out)), (k, v)


class CrossAttention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.layer_norm = nn.LayerNorm(width)
        self.linear_0 = nn.Linear(width, width)  # q
        self.linear_1 = nn.Linear(width, 2 * width)  # k | v of the encoder output
        self.linear_2 = nn.Linear(width, width)

    def memory(self, enc: torch.Tensor) -> KV:
        k, v = self.linear_1(enc).chunk(2, dim=-1)
        return _heads(k, self.heads), _heads(v, self.heads)

    def forward(self, x: torch.Tensor, memory: KV) -> torch.Tensor:
        q = _heads(self.linear_0(self.layer_norm(x)), self.heads)
        out = F.scaled_dot_product_attention(q, memory[0], memory[1])
        return x + self.linear_2(_merge(out))


class FFN(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.layer_norm = nn.LayerNorm(width)
        self.linear_0 = nn.Linear(width, 4 * width)
        self.linear_1 = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.linear_1(F.gelu(self.linear_0(self.layer_norm(x))))


class EncoderLayer(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.self_attention = SelfAttention(width, heads)
        self.ffn = FFN(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ffn(self.self_attention(x, causal=False)[0])


class DecoderLayer(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.self_attention = SelfAttention(width, heads)
        self.attention = CrossAttention(width, heads)
        self.ffn = FFN(width)

    def forward(self, x: torch.Tensor, memory: KV, cache: KV | None) -> tuple[torch.Tensor, KV]:
        x, kv = self.self_attention(x, causal=cache is None, cache=cache)
        return self.ffn(self.attention(x, memory)), kv


class Encoder(nn.Module):
    position_encodings: torch.Tensor  # a buffer: CTranslate2's sinusoids, loaded as stored

    def __init__(self, n_mels: int, width: int, heads: int, layers: int, ctx: int):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, width, 3, padding=1)
        self.conv2 = nn.Conv1d(width, width, 3, stride=2, padding=1)
        self.register_buffer("position_encodings", torch.zeros(ctx, width))
        self.layers = nn.ModuleList(EncoderLayer(width, heads) for _ in range(layers))
        self.layer_norm = nn.LayerNorm(width)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).transpose(1, 2)
        x = x + self.position_encodings[: x.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.layer_norm(x)


class Decoder(nn.Module):
    position_encodings: torch.Tensor  # a buffer: the learnt positions

    def __init__(self, vocab: int, width: int, heads: int, layers: int, ctx: int):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, width)
        self.register_buffer("position_encodings", torch.zeros(ctx, width))
        self.layers = nn.ModuleList(DecoderLayer(width, heads) for _ in range(layers))
        self.layer_norm = nn.LayerNorm(width)

    def memory(self, enc: torch.Tensor) -> list[KV]:
        """Each layer's cross-attention keys and values of the encoder output (computed once)."""
        return [cast(DecoderLayer, layer).attention.memory(enc) for layer in self.layers]

    def forward(
        self, tokens: torch.Tensor, memory: list[KV], cache: list[KV] | None = None
    ) -> tuple[torch.Tensor, list[KV]]:
        """Logits [B, T, vocab] of `tokens` [B, T] and the new self-attention cache; with a
        cache, `tokens` continue the cached ones."""
        offset = 0 if cache is None else cache[0][0].shape[2]
        x = self.embeddings(tokens) + self.position_encodings[offset : offset + tokens.shape[1]]
        new_cache = []
        for i, layer in enumerate(self.layers):
            x, kv = layer(x, memory[i], None if cache is None else cache[i])
            new_cache.append(kv)
        return self.layer_norm(x) @ self.embeddings.weight.T, new_cache


def _count(variables: dict[str, np.ndarray], side: str) -> int:
    return len({m.group(1) for k in variables if (m := re.match(rf"{side}/layer_(\d+)/", k))})


class Whisper(nn.Module):
    """One Whisper model: `encode(mel [B, 80, 3000])`, then `decoder(tokens, memory, cache)`."""

    def __init__(self, variables: dict[str, np.ndarray]):
        super().__init__()
        vocab, width = variables["decoder/embeddings/weight"].shape
        audio_ctx = variables["encoder/position_encodings/encodings"].shape[0]
        text_ctx = variables["decoder/position_encodings/encodings"].shape[0]
        n_mels = variables["encoder/conv1/weight"].shape[1]
        self.encoder = Encoder(
            n_mels,
            width,
            int(variables["encoder/num_heads"]),
            _count(variables, "encoder"),
            audio_ctx,
        )
        self.decoder = Decoder(
            vocab,
            width,
            int(variables["decoder/num_heads"]),
            _count(variables, "decoder"),
            text_ctx,
        )
        self.vocab_size = int(vocab)
        self.text_ctx = int(text_ctx)
        self.multilingual = vocab >= 51865

    @classmethod
    def from_ct2(cls, variables: dict[str, np.ndarray]) -> Whisper:
        """The model holding CTranslate2's variables (names map one to one: `/` -> `.`,
        LayerNorm gamma/beta -> weight/bias, position `encodings` -> the buffer)."""
        model = cls(variables)
        state = {}
        for name, array in variables.items():
            if array.ndim == 0 or name == "decoder/projection/weight":
                continue  # scalar settings; the projection is tied to the embedding
            key = (
                re.sub(r"/layer_(\d+)/", r"/layers/\1/", name)
                .replace("/", ".")
                .replace(".gamma", ".weight")
                .replace(".beta", ".bias")
            )
            key = key.replace("position_encodings.encodings", "position_encodings")
            state[key] = torch.from_numpy(np.asarray(array, dtype=np.float32).copy())
        model.load_state_dict(state, strict=True)
        return model

    @property
    def device(self) -> torch.device:
        return self.decoder.embeddings.weight.device

    @property
    def dtype(self) -> torch.dtype:
        """float32 as loaded; float64 after `.double()` (for gradient checks)."""
        return self.decoder.embeddings.weight.dtype

    def encode(self, mel: torch.Tensor) -> torch.Tensor:
        """Encoder output [B, 1500, width] of log-Mel windows [B, 80, 3000]."""
        return self.encoder(mel.to(self.dtype))
