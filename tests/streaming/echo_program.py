"""A streaming program for the tests: the contract with no model (framing.read-side by hand).

After each frame it writes a partial whose text counts the frames so far ("f1 f2 ..."), and the
final repeats the last partial. `ECHO_DIE_ON=<ID>` exits with status 3 on that utterance's
header (a program that dies mid-stream).
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time


def emit(**event: object) -> None:
    event["t"] = time.time()
    sys.stdout.buffer.write(json.dumps(event).encode() + b"\n")
    sys.stdout.buffer.flush()


def main() -> int:
    inp = sys.stdin.buffer
    emit(type="ready")
    while line := inp.readline():
        head = json.loads(line)
        uid, rate = head["id"], head["sample_rate"]
        if uid == os.environ.get("ECHO_DIE_ON"):
            return 3
        samples, words = 0, []
        while (n := struct.unpack("<I", inp.read(4))[0]) != 0:
            samples += len(inp.read(n)) // 2
            words.append(f"f{len(words) + 1}")
            emit(id=uid, type="partial", text=" ".join(words), audio_s=samples / rate)
        emit(id=uid, type="final", text=" ".join(words), audio_s=samples / rate)
    return 0


if __name__ == "__main__":
    sys.exit(main())
