"""The opening every stand-in streaming program of the tests shares: the imports, `emit` (one
timestamped JSON event a line on stdout, as the streaming contract in models/README.md says)
and the `ready` event. A test appends its own loop over `inp` (the framed audio on stdin);
`stand_in` makes the model folder that runs it."""

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
