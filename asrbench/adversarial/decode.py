"""Tokens in and out of the Whisper port: the prompt, greedy decoding, the teacher-forced loss.

Greedy decoding reproduces what faster-whisper 1.2.1 asks CTranslate2 4.8.5 for with
`language="en", task="transcribe", without_timestamps=True, beam_size=1, temperature=0`:
the prompt is the SOT sequence (`<|startoftranscript|>`, then `<|en|><|transcribe|>` for a
multilingual model) and `<|notimestamps|>`; at every step the tokens faster-whisper suppresses
(`suppress_tokens=[-1]`: its non-speech symbols, plus the task and SOT tokens and `<|nospeech|>`)
are disabled, at the first step also the blank (" ") and `<|endoftext|>` (`suppress_blank`, the
model config's `suppress_ids_begin`); the arg-max token is taken until `<|endoftext|>` or
CTranslate2's limit of min(448 / 2, 448 - prompt + 1) steps. Timestamp tokens are not
suppressed (CTranslate2 applies its timestamp rules only when the prompt asks for timestamps).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import torch
from tokenizers import Tokenizer

from asrbench.adversarial.whisper_torch import Whisper
from asrbench.errors import InputError

__all__ = ["WhisperTokenizer", "greedy", "teacher_forced_nll"]

# faster_whisper.tokenizer.Tokenizer.non_speech_tokens: symbols whose tokens are suppressed
SYMBOLS = list('"#()*+/:;<=>@[\\]^_`{|}~「」『』') + (
    "<< >> <<< >>> -- --- -( -[ (' (\" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪".split()
)
MISCELLANEOUS = set("♩♪♫♬♭♮♯")


class WhisperTokenizer:
    """The model's byte-level BPE (its tokenizer.json) and the special tokens decoding uses."""

    def __init__(self, tokenizer_json: Path, multilingual: bool):
        self.hf = Tokenizer.from_file(str(tokenizer_json))
        self.multilingual = multilingual

    def special(self, token: str) -> int:
        got = self.hf.token_to_id(token)
        if got is None:
            raise InputError(f"tokenizer has no special token {token}")
        return int(got)

    @cached_property
    def eot(self) -> int:
        return self.special("<|endoftext|>")

    @cached_property
    def prompt(self) -> list[int]:
        """The decoding prompt: SOT sequence (language en, task transcribe) and no timestamps."""
        sot = [self.special("<|startoftranscript|>")]
        if self.multilingual:
            sot += [self.special("<|en|>"), self.special("<|transcribe|>")]
        return sot + [self.special("<|notimestamps|>")]

    def encode(self, text: str) -> list[int]:
        return list(self.hf.encode(text, add_special_tokens=False).ids)

    def decode(self, tokens: list[int]) -> str:
        return str(self.hf.decode([t for t in tokens if t < self.eot]))

    def text_tokens(self, text: str) -> list[int]:
        """A reference text as Whisper writes it: one leading space, then the text."""
        return self.encode(" " + text.strip())

    @cached_property
    def suppressed(self) -> list[int]:
        """faster-whisper's `get_suppressed_tokens(tokenizer, [-1])`."""
        ids = {self.encode(" -")[0], self.encode(" '")[0]}
        for symbol in SYMBOLS + sorted(MISCELLANEOUS):
            for tokens in (self.encode(symbol), self.encode(" " + symbol)):
                if len(tokens) == 1 or symbol in MISCELLANEOUS:
                    ids.add(tokens[0])
        names = ["transcribe", "translate", "startoftranscript", "startofprev", "startoflm"]
        ids.update(self.special(f"<|{n}|>") for n in names)
        no_speech = self.hf.token_to_id("<|nospeech|>") or self.hf.token_to_id("<|nocaptions|>")
        if no_speech is not None:
            ids.add(int(no_speech))
        return sorted(ids)

    @cached_property
    def suppressed_at_start(self) -> list[int]:
        """`suppress_blank`: the blank token and <|endoftext|> at the first step."""
        return [self.encode(" ")[0], self.eot]


def _mask(vocab: int, ids: list[int], device: torch.device) -> torch.Tensor:
    mask = torch.zeros(vocab, dtype=torch.bool, device=device)
    mask[ids] = True
    return mask


@torch.no_grad()
def greedy(model: Whisper, tok: WhisperTokenizer, enc: torch.Tensor) -> list[list[int]]:
    """Greedy text tokens (no prompt, no <|endoftext|>) for each encoder output in `enc`."""
    n, device = enc.shape[0], enc.device
    memory = model.decoder.memory(enc)
    prompt = torch.tensor([tok.prompt] * n, device=device)
    logits, cache = model.decoder(prompt, memory)
    always = _mask(model.vocab_size, tok.suppressed, device)
    first = always | _mask(model.vocab_size, tok.suppressed_at_start, device)
    steps = min(model.text_ctx // 2, model.text_ctx - len(tok.prompt) + 1)
    out: list[list[int]] = [[] for _ in range(n)]
    done = torch.zeros(n, dtype=torch.bool, device=device)
    for step in range(steps):
        last = logits[:, -1].masked_fill(first if step == 0 else always, float("-inf"))
        nxt = last.argmax(dim=-1)
        for i in torch.nonzero(~done).flatten().tolist():
            if int(nxt[i]) != tok.eot:
                out[i].append(int(nxt[i]))
        done |= nxt == tok.eot
        if bool(done.all()):
            break
        logits, cache = model.decoder(nxt[:, None], memory, cache)
    return out


def teacher_forced_nll(
    model: Whisper, tok: WhisperTokenizer, enc: torch.Tensor, texts: list[str]
) -> torch.Tensor:
    """[N] cross-entropy of each text's tokens and <|endoftext|> given the prompt, summed over
    tokens (natural log), for the encoder outputs `enc` [N, 1500, width]."""
    prompt = tok.prompt
    seqs = [prompt + tok.text_tokens(t) + [tok.eot] for t in texts]
    longest = max(len(s) for s in seqs)
    if longest > model.text_ctx + 1:
        raise InputError(
            f"a reference text has {longest - len(prompt) - 1} tokens; Whisper's decoder holds "
            f"at most {model.text_ctx - len(prompt)} per 30-s window"
        )
    ids = torch.full((len(seqs), longest), tok.eot, dtype=torch.long, device=enc.device)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
    logits, _ = model.decoder(ids[:, :-1], model.decoder.memory(enc))
    targets = ids[:, 1:].clone()
    scored = torch.arange(longest - 1, device=enc.device)[None, :] >= len(prompt) - 1
    lengths = torch.tensor([len(s) for s in seqs], device=enc.device)
    scored = scored & (torch.arange(longest - 1, device=enc.device)[None, :] < lengths[:, None] - 1)
    targets[~scored] = -100
    nll = _token_nll(logits, targets)
    return nll.sum(dim=1)


def _token_nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-position cross-entropy [N, T] (0 where the target is -100)."""
    return torch.nn.functional.cross_entropy(
        logits.transpose(1, 2), targets, ignore_index=-100, reduction="none"
    )
