"""Who is at the other end of a loopback TCP connection (``scenarist lsp --tcp``): the
server answers only its own user, as every local server of Scenarist does. Linux says it
in ``/proc/net/tcp`` (the owner of each socket); elsewhere it cannot be told."""

from __future__ import annotations

import socket
from pathlib import Path

PROC_TCP = Path("/proc/net/tcp")


def peer_uid(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """The user id that owns the socket at ``peer`` connected to ``local`` (both IPv4
    addresses on this machine); None when this system does not say."""
    wanted = (_hex(peer), _hex(local))
    try:
        rows = PROC_TCP.read_text("ascii").splitlines()[1:]
    except OSError:
        return None
    for row in rows:
        fields = row.split()
        if len(fields) > 7 and (fields[1], fields[2]) == wanted:
            return int(fields[7])
    return None


def _hex(address: tuple[str, int]) -> str:
    """An address as /proc/net/tcp writes it: 127.0.0.1:2087 is ``0100007F:0827``."""
    ip, port = address[0], address[1]
    return f"{int.from_bytes(socket.inet_aton(ip), 'little'):08X}:{port:04X}"
