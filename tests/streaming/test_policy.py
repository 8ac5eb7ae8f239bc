"""The LocalAgreement-2 re-decoding policy (models/_common/stream_policy.py) on real decoder
output: hypotheses faster-whisper tiny.en produced for the very buffers and prompts the policy
asked for (tests/streaming/policy_recorded.json), replayed; plus the prefix rule on its own.

The recording (`python tests/streaming/test_policy.py OUT.json UTT[+UTT]...` with a Python that
has faster-whisper, e.g. the local runner's whisper_tiny_en virtualenv) streams mini_en audio
in 100-ms chunks and decodes whenever the policy is due (no wall clock, so it is repeatable);
`LJ001-0001+LJ001-0003` (two utterances, 0.5 s apart: 19.8 s) is long enough to be trimmed.
The replay checks that the policy asks for exactly the recorded buffer and prompt at each call.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "models" / "_common"))

import stream_policy as sp  # noqa: E402  (a model-side helper, not a package)

RECORDED = Path(__file__).with_name("policy_recorded.json")
MINI_EN = ROOT / "datasets" / "mini_en"
CHUNK = 1600  # 100 ms at 16 kHz


def recorded() -> list[dict]:
    return json.loads(RECORDED.read_text(encoding="utf-8"))["utterances"]


def reference(ids: list[str]) -> list[str]:
    lines = (MINI_EN / "metadata.tsv").read_text(encoding="utf-8").splitlines()[1:]
    rows = {f[0]: f[3] for f in (line.split("\t") for line in lines)}
    return [w for uid in ids for w in rows[uid].split()]


class Replay:
    """The recorded decoder: each call must ask for the recorded buffer length and prompt."""

    def __init__(self, calls: list[dict], check: bool = True, timed: bool = True):
        self.calls, self.check, self.timed, self.asked = iter(calls), check, timed, []

    def __call__(self, audio: np.ndarray, prompt: str) -> sp.Hypothesis:
        call = next(self.calls)
        self.asked.append((len(audio), prompt))
        if self.check:
            assert (len(audio), prompt) == (call["samples"], call["prompt"])
        ends = tuple(tuple(e) for e in call["ends"]) if self.timed else ()
        return sp.Hypothesis(tuple(call["words"]), ends)  # type: ignore[arg-type]


def stream(policy: sp.LocalAgreement, samples: int) -> tuple[list[sp.Update], sp.Update]:
    """Feed `samples` of (silent: the replay ignores audio) input in 100-ms chunks."""
    updates = []
    for start in range(0, samples, CHUNK):
        policy.insert(np.zeros(min(CHUNK, samples - start), dtype=np.float32))
        if policy.due():
            updates.append(policy.step())
    return updates, policy.finish()


def wer(ref: list[str], hyp: list[str]) -> float:
    from scoring.align import levenshtein

    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(sp.norm(w), len(vocab)) for w in s] for s in (ref, hyp)]
    return levenshtein(ids[0], ids[1]) / len(ref)


@pytest.mark.parametrize("utt", recorded(), ids=lambda u: "+".join(u["ids"]))
def test_committed_words_never_change_and_the_final_keeps_them(utt):
    replay = Replay(utt["calls"])
    updates, final = stream(sp.LocalAgreement(replay), utt["samples"])
    assert len(replay.asked) == len(utt["calls"])  # every recorded decode, no other
    steps = [u.committed for u in updates] + [final.committed]
    for before, after in zip(steps, steps[1:], strict=False):
        assert after[: len(before)] == before
    # The final is the committed words plus the whole tail of the last decode of the rest.
    last = utt["calls"][-1]["words"]
    assert final.tail == tuple(last[len(last) - len(final.tail) :])
    assert wer(reference(utt["ids"]), final.text.split()) < 0.15


@pytest.mark.parametrize("utt", recorded(), ids=lambda u: "+".join(u["ids"]))
def test_a_word_is_committed_once_two_successive_decodes_agree_on_it(utt):
    replay = Replay(utt["calls"])
    updates, _ = stream(sp.LocalAgreement(replay), utt["samples"])
    for k in range(1, len(updates)):
        new = updates[k].committed[len(updates[k - 1].committed) :]
        if not new:
            continue
        previous = updates[k - 1].tail  # the last decode's uncommitted words
        assert sp.common_prefix(previous, new) == len(new)  # the earlier decode had them too
        assert " ".join(new) in " ".join(utt["calls"][k]["words"])  # and so has this one


def test_the_long_buffer_is_trimmed_at_a_committed_segment_end_and_prompted():
    (utt,) = [u for u in recorded() if len(u["ids"]) == 2]
    calls = utt["calls"]
    policy = sp.LocalAgreement(Replay(calls))
    _, final = stream(policy, utt["samples"])
    first = next(k for k, c in enumerate(calls) if c["prompt"])
    assert calls[first - 1]["samples"] > 15 * 16000  # cut once past trim_s (15 s)...
    assert calls[first]["samples"] < calls[first - 1]["samples"]
    cut_s = policy.offset_s  # ...at a segment end Whisper marked, inside the committed words
    assert any(abs(end - cut_s) < 0.01 for _, end in calls[first - 1]["ends"][:-1])
    # The prompt is the committed text cut away; nothing said twice, nothing lost at the cut.
    assert final.text.startswith(calls[first]["prompt"].split(" ", 1)[0])
    assert calls[first]["prompt"] in final.text
    assert final.text.count("took impressions") == 1 and "for although" in final.text
    assert wer(reference(utt["ids"]), final.text.split()) < 0.15


def _settling(calls: list[dict]):
    """Real hypotheses as a decoder gives them when the speaker stops: the last one again for
    every decode of the silence that follows, and no words once the buffer was cut (silence)."""
    asked: list[int] = []

    def transcribe(audio: np.ndarray, prompt: str) -> sp.Hypothesis:
        asked.append(len(audio))
        if any(later < earlier for earlier, later in zip(asked, asked[1:], strict=False)):
            return sp.Hypothesis(())  # the buffer was cut: what is left is silence
        return sp.Hypothesis(tuple(calls[min(len(asked), len(calls)) - 1]["words"]))

    return transcribe


def test_without_segment_ends_the_buffer_is_cut_at_its_end_once_all_of_it_agrees():
    # Moonshine gives text only: LJ001-0002's recorded words, then 5 s of silence.
    (utt,) = [u for u in recorded() if u["ids"] == ["LJ001-0002"]]
    policy = sp.LocalAgreement(_settling(utt["calls"]), sp.Params(trim_s=4.0))
    updates, final = stream(policy, utt["samples"] + 5 * 16000)
    cut = next(k for k, u in enumerate(updates) if policy.offset_s and not u.tail)
    assert updates[cut].committed == tuple(utt["calls"][-1]["words"])  # all agreed, then cut
    assert 4.0 < policy.offset_s <= 5.0 + utt["samples"] / 16000
    assert final.text == " ".join(utt["calls"][-1]["words"])  # nothing lost, nothing twice


def test_past_the_hard_cap_the_hypothesis_is_committed_whole():
    (utt,) = [u for u in recorded() if len(u["ids"]) == 2]
    replay = Replay(utt["calls"], check=False, timed=False)
    policy = sp.LocalAgreement(replay, sp.Params(trim_s=100.0, max_buffer_s=5.0))
    for _ in range(0, 7 * 16000, CHUNK):
        policy.insert(np.zeros(CHUNK, dtype=np.float32))
        if policy.due():
            update = policy.step()
            if policy.offset_s:
                break
    assert policy.offset_s > 5.0 and policy.buffer_s == 0.0  # emptied past the cap...
    last = utt["calls"][len(replay.asked) - 1]["words"]  # ...its tail committed whole
    assert update.tail == () and update.committed[-3:] == tuple(last[-3:])


# --- the prefix rule on its own, with words from the recording --------------------------------


def test_agreement_ignores_case_and_punctuation():
    assert sp.common_prefix(["modern."], ["Modern,", "times"]) == 1
    assert sp.common_prefix(["in", "being", "comparative."], ["in", "being", "comparatively"]) == 2
    assert sp.common_prefix([], ["a"]) == 0


def test_committed_words_are_found_in_a_hypothesis_that_revised_them():
    committed = "exhibition, for although the Chinese This took impressions from".split()
    revised = "exhibition, for although the Chinese took impressions from wood blocks".split()
    assert sp.skip_committed(revised, committed) == len(committed) - 1  # up to "from"
    dropped = "took impressions from wood blocks engraved".split()  # Whisper skipped words
    assert sp.skip_committed(dropped, committed) == 3
    assert sp.skip_committed(revised[:4], []) == 0
    assert sp.skip_committed(committed + ["wood"], committed) == len(committed)


def test_a_cut_position_maps_through_a_revision():
    head = "For although the Chinese took impressions from".split()
    committed = "for although the Chinese This took impressions from".split()
    assert sp.committed_index(head, committed, 1) == 1
    assert sp.committed_index(head, committed, 5) == 6  # "impressions", after the extra word


def test_hypothesis_from_segments():
    hyp = sp.Hypothesis.from_segments([(" Printing, in", 1.5), ("", 2.0), ("the only", None)])
    assert hyp.words == ("Printing,", "in", "the", "only") and hyp.ends == ((2, 1.5), (2, 2.0))


# --- recording (not a test) --------------------------------------------------------------------


def _record(out: Path, specs: list[str]) -> None:
    import shutil
    import tempfile
    import wave

    src = Path(tempfile.mkdtemp())
    shutil.copy(ROOT / "models" / "whisper_tiny_en" / "model.yaml", src)
    for name in ("contract.py", "weights.py", "whisper_transcribe.py", "whisper_stream.py"):
        shutil.copy(ROOT / "models" / "_common" / name, src)
    sys.path.insert(0, str(src))
    import whisper_stream

    decode = whisper_stream.load()
    utts = []
    for spec in specs:
        parts = []
        for uid in spec.split("+"):
            with wave.open(str(MINI_EN / "audio" / f"{uid}.wav")) as w:
                parts += [np.frombuffer(w.readframes(w.getnframes()), "<i2"), np.zeros(8000, "<i2")]
        audio = np.concatenate(parts[:-1]).astype(np.float32) / 32768.0
        calls: list[dict] = []

        def logged(buf: np.ndarray, prompt: str, calls=calls) -> sp.Hypothesis:
            hyp = decode(buf, prompt)
            calls.append(
                {"samples": len(buf), "prompt": prompt, "words": hyp.words, "ends": hyp.ends}
            )
            return hyp

        policy = sp.LocalAgreement(logged)
        for start in range(0, len(audio), CHUNK):
            policy.insert(audio[start : start + CHUNK])
            if policy.due():
                policy.step()
        policy.finish()
        utts.append({"ids": spec.split("+"), "samples": len(audio), "calls": calls})
    out.write_text(json.dumps({"utterances": utts}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    _record(Path(sys.argv[1]), sys.argv[2:])
