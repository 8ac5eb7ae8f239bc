"""The opening every stand-in streaming program of the tests shares: the imports, `emit` (one
timestamped JSON event a line on stdout, as the streaming contract in models/README.md says)
and the `ready` event. A test appends its own loop over `inp` (the framed audio on stdin);
`stand_in` makes the model folder that runs it."""

from pathlib import Path

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
    folder = root / name
    folder.mkdir(parents=True)
    extra = f"network: true\nsecrets: [{secrets}]\n" if secrets else ""
    (folder / "model.yaml").write_text(
        f"id: {name}\nname: Stand-in streaming program\nfamily: test\narchitecture: none\n"
        "licence: MIT\nlanguages: [en]\nsample_rate: 16000\nprogram: stream.py\n"
        "streaming: stream.py\n" + extra
    )
    (folder / "requirements.txt").write_text("# none\n")
    (folder / "stream.py").write_text(program)
    return folder
