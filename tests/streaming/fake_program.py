"""The opening every stand-in streaming program of the tests shares: the imports, `emit` (one
timestamped JSON event a line on stdout, as the streaming contract in models/README.md says)
and the `ready` event. A test appends its own loop over `inp` (the framed audio on stdin);
`stand_in` makes the model folder that runs it. `GATED` is one such loop that a test can hold
at an utterance (the cache and resume tests)."""

from pathlib import Path

from tests.factories import make_model

HEAD = """\
import json, os, struct, sys, time


def emit(**event):
    event["t"] = time.time()
    sys.stdout.buffer.write(json.dumps(event).encode() + b"\\n")
    sys.stdout.buffer.flush()


inp = sys.stdin.buffer
emit(type="ready")
"""


def stand_in(root: Path, name: str, program: str, secrets: str = "") -> Path:
    """A model folder under `root` whose batch and streaming program is `program` (standard
    library only); `secrets` (comma-separated names) makes it a networked card declaring them."""
    declared = {"network": True, "secrets": secrets.split(", ")} if secrets else {}
    return make_model(
        root,
        name,
        program,
        name="Stand-in streaming program",
        program="stream.py",
        streaming="stream.py",
        **declared,
    )


# Answers every utterance (a partial per chunk, then the final) and appends a line per start
# and per final to the file LOG. Once BLOCK_AT utterances are answered, and while the named pipe
# GATE exists, it holds the next utterance: it opens GATE (which blocks until the test opens it
# for writing: the state the test waits on) and reads it to its end (until the test closes it).
GATED = """\
LOG, GATE, BLOCK_AT = {log!r}, {gate!r}, {block_at!r}
with open(LOG, "a") as f:
    f.write("start\\n")
answered = 0
while line := inp.readline():
    uid = json.loads(line)["id"]
    if answered == BLOCK_AT and os.path.exists(GATE):
        with open(GATE) as gate:
            gate.read()
    words = []
    while (n := struct.unpack("<I", inp.read(4))[0]) != 0:
        inp.read(n)
        words.append(f"w{{len(words) + 1}}")
        emit(id=uid, type="partial", text=" ".join(words), audio_s=0.1 * len(words))
    emit(id=uid, type="final", text=" ".join(words), audio_s=0.1 * len(words))
    answered += 1
    with open(LOG, "a") as f:
        f.write(f"final {{uid}}\\n")
"""
