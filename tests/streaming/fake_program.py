"""The opening every stand-in streaming program of the tests shares: the imports, `emit` (one
timestamped JSON event a line on stdout, as the streaming contract in models/README.md says)
and the `ready` event. A test appends its own loop over `inp` (the framed audio on stdin)."""

HEAD = """\
import json, os, struct, sys, time


def emit(**event):
    event["t"] = time.time()
    sys.stdout.buffer.write(json.dumps(event).encode() + b"\\n")
    sys.stdout.buffer.flush()


inp = sys.stdin.buffer
emit(type="ready")
"""
