"""A loopback stand-in for the Hugging Face Hub's file download API, and tiny models to serve.

`HubStub` answers what `huggingface_hub.hf_hub_download` asks (`file_download.py`:
`get_hf_file_metadata` then the download): `HEAD` and `GET` on
`/{org}/{name}/resolve/{revision}/{path}`, with the headers the library reads: `X-Repo-Commit`
(the commit the revision resolves to; the library refuses a server without it), `ETag` (the
file's SHA-256, quoted, as the Hub sends for LFS files; the cache names blobs by it) and
`Content-Length`. Unknown repositories, revisions and files get 404 with the Hub's
`X-Error-Code` (`RepoNotFound`, `RevisionNotFound`, `EntryNotFound`). Point the library at it
with `HF_ENDPOINT=stub.url`. It listens on 127.0.0.1 only and never contacts the Hub.

`tiny_wav2vec2` and `tiny_whisper` write randomly initialised models (seeded: the same bytes
every time) in the runtime's own format (`save_pretrained`), small enough to make in a test.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

__all__ = ["HubStub", "tiny_wav2vec2", "tiny_whisper"]


class HubStub:
    """Repositories as `{repo: {commit: {path: bytes}}}`, refs as `{repo: {name: commit}}`."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, dict[str, bytes]]] = {}
        self.refs: dict[str, dict[str, str]] = {}
        self.requests: list[tuple[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                stub.requests.append(("HEAD", self.path))
                self._answer(body=False)

            def do_GET(self) -> None:
                stub.requests.append(("GET", self.path))
                self._answer(body=True)

            def _answer(self, body: bool) -> None:
                status, headers, data = stub.resolve(unquote(self.path.split("?")[0]))
                self.send_response(status)
                for k, v in {**headers, "Content-Length": str(len(data))}.items():
                    self.send_header(k, v)
                self.end_headers()
                if body:
                    self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def publish(self, repo: str, commit: str, folder: Path, refs: tuple[str, ...] = ()) -> None:
        """Every file of `folder` as `repo` at `commit` (40 hex), also under each ref name."""
        files = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*")
            if p.is_file()
        }
        self.repos.setdefault(repo, {})[commit] = files
        for ref in refs:
            self.refs.setdefault(repo, {})[ref] = commit

    def resolve(self, path: str) -> tuple[int, dict[str, str], bytes]:
        parts = path.strip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return _error(404, "RepoNotFound", f"no route {path}")
        repo, revision, name = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
        if repo not in self.repos:
            return _error(404, "RepoNotFound", f"Repository Not Found for url: {path}")
        commit = self.refs.get(repo, {}).get(revision, revision)
        files = self.repos[repo].get(commit)
        if files is None:
            return _error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        if name not in files:
            return _error(404, "EntryNotFound", f"Entry not found: {name}")
        data = files[name]
        etag = hashlib.sha256(data).hexdigest()
        return 200, {"X-Repo-Commit": commit, "ETag": f'"{etag}"'}, data

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"error": message}).encode()
    return status, {"X-Error-Code": code, "X-Error-Message": message}, body


def tiny_wav2vec2(folder: Path) -> Path:
    """A randomly initialised Wav2Vec2ForCTC (3 conv layers, 2 Transformer layers, width 32)
    with its character tokenizer and feature extractor, saved as a Hub folder is laid out."""
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"<pad>": 0, "<unk>": 1, "|": 2}
    vocab.update({c: i + 3 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz'")})
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    tokenizer = Wav2Vec2CTCTokenizer(
        str(folder / "vocab.json"), unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|"
    )
    features = Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16000, do_normalize=True, return_attention_mask=True
    )
    torch.manual_seed(0)
    config = Wav2Vec2Config(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        # wav2vec2's own total stride (320 samples: 50 frames a second at 16 kHz), so that
        # sequence lengths, and the cost of padding a batch, are those of the real models
        conv_dim=(32, 32, 32),
        conv_stride=(5, 8, 8),
        conv_kernel=(10, 8, 8),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        pad_token_id=0,
        do_stable_layer_norm=True,
        feat_extract_norm="layer",
    )
    Wav2Vec2ForCTC(config).save_pretrained(folder)
    Wav2Vec2Processor(feature_extractor=features, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def tiny_whisper(folder: Path) -> Path:
    """A randomly initialised WhisperForConditionalGeneration (1+1 layers, width 16) with a
    byte-level tokenizer (256 bytes, no merges, Whisper's special tokens) and 80-bin features."""
    import torch
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizer,
    )
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    eot = "<|endoftext|>"
    tokenizer = WhisperTokenizer(
        str(folder / "vocab.json"),
        str(folder / "merges.txt"),
        unk_token=eot,
        bos_token=eot,
        eos_token=eot,
        pad_token=eot,
    )
    specials = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    tokenizer.add_special_tokens({"additional_special_tokens": specials})
    ids = {s: tokenizer.convert_tokens_to_ids(s) for s in [eot, *specials]}
    torch.manual_seed(0)
    config = WhisperConfig(
        vocab_size=len(tokenizer),
        num_mel_bins=80,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_target_positions=64,
        decoder_start_token_id=ids["<|startoftranscript|>"],
        eos_token_id=ids[eot],
        pad_token_id=ids[eot],
        bos_token_id=ids[eot],
    )
    model = WhisperForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=ids["<|startoftranscript|>"],
        eos_token_id=ids[eot],
        pad_token_id=ids[eot],
        no_timestamps_token_id=ids["<|notimestamps|>"],
        is_multilingual=False,
        max_length=64,
        begin_suppress_tokens=[],
        suppress_tokens=[],
    )
    model.save_pretrained(folder)
    WhisperProcessor(
        feature_extractor=WhisperFeatureExtractor(feature_size=80), tokenizer=tokenizer
    ).save_pretrained(folder)
    return folder
