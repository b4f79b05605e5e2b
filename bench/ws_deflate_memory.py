"""Memory per idle WebSocket connection by per_message_deflate setting: off, shared, dedicated, 3KB.

    uv run python -P bench/ws_deflate_memory.py [--connections 2000]

For each setting one rt.serve process (asyncio) is started; this script opens ``--connections`` sockets that
complete the handshake offering permessage-deflate and then stay idle, and reads the server's resident set
size before and after. Rows print KiB per connection and the ratio to "off" measured in the same run.
Compressors and inflaters are made on a socket's first compressed message, not at the handshake, so an idle
connection costs the same whatever the setting; ``shared`` never holds a compressor per socket at all.
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import subprocess
import sys
import time

SERVER = """
import sys, rt
mode = sys.argv[1]
deflate = False if mode == "off" else {"compress": mode, "decompress": mode}
def fetch(req, server):
    return None if server.upgrade(req) else rt.Response("no", status=400)
server = rt.serve(fetch=fetch, websocket={"message": lambda ws, m: None, "per_message_deflate": deflate,
                  "idle_timeout": 0, "send_pings": False}, hostname="127.0.0.1", port=0, backlog=4096)
async def main():
    async with server:
        print(f"READY {server.port}", flush=True)
        await server.serve_forever()
from rt.backend import run
run(main, backend="asyncio")
"""


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def handshake(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(head[:80])
    return sock


def measure(mode: str, count: int) -> tuple[float, bool]:
    server = subprocess.Popen([sys.executable, "-c", SERVER, mode], stdout=subprocess.PIPE, text=True)
    socks: list[socket.socket] = []
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        warm = [handshake(port) for _ in range(50)]  # first-use allocations are not per-connection cost
        time.sleep(0.5)
        before = rss_kib(server.pid)
        socks = [handshake(port) for _ in range(count)]
        time.sleep(1.0)
        after = rss_kib(server.pid)
        socks += warm
        negotiated = True
        return (after - before) / count, negotiated
    finally:
        for sock in socks:
            sock.close()
        server.kill()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--modes", nargs="+", default=["off", "shared", "dedicated", "3KB"])
    args = parser.parse_args()
    rows = {mode: measure(mode, args.connections)[0] for mode in args.modes}
    base = rows.get("off") or 1.0
    print(f"{args.connections} idle connections, rt.serve on asyncio")
    print(f"{'per_message_deflate':<20} {'KiB/conn':>9} {'vs off':>7}")
    for mode, kib in rows.items():
        print(f"{mode:<20} {kib:>9.1f} {kib / base:>6.2f}x")


if __name__ == "__main__":
    main()
