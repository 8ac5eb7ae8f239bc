"""Free TCP ports on loopback, for the service harnesses."""

from __future__ import annotations

import socket


def free_ports(n: int) -> list[int]:
    """n distinct free TCP ports on 127.0.0.1 (held open together so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
