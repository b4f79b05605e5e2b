"""Memory per idle WebSocket connection by per_message_deflate setting: off, shared, dedicated, sized.

    uv run python -P bench/ws_deflate_memory.py [--connections 2000] [--modes off shared dedicated 3KB 64KB]

For each setting rt.serve processes (asyncio) are started; this script opens ``--connections`` sockets that
complete the handshake offering permessage-deflate and then stay idle, and measures the server twice: its
resident set size before and after (what the operating system charges, noisy by a few hundred bytes per
connection), and, in a second server run under ``tracemalloc``, the bytes Python allocated and still holds
(exact, zlib's own buffers included: they come from Python's raw allocator). Rows print both per connection
and their ratio to "off" measured in the same run.

Nothing of compression exists per socket until its first compressed message: a server makes one negotiated
``Session`` per distinct answer and shares it; a socket's own compressor and inflater are made by its
protocol object on first use, and ``shared`` never holds a compressor per socket at all.
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
import gc, sys, rt, tracemalloc
mode, traced = sys.argv[1], sys.argv[2] == "traced"
if traced:
    tracemalloc.start()
deflate = False if mode == "off" else {"compress": mode, "decompress": mode}
def fetch(req, server):
    if req.url.endswith("/traced"):  # the Python heap now, after a collection
        gc.collect()
        return rt.Response(str(tracemalloc.get_traced_memory()[0]))
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


def handshake(port: int, mode: str) -> socket.socket:
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
    if (b"permessage-deflate" in head.lower()) != (mode != "off"):  # measure what the row says
        raise RuntimeError(f"{mode}: unexpected extension answer in {head!r}")
    return sock


def traced_bytes(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /traced HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    return int(answer.split(b"\r\n\r\n", 1)[1])


def measure(mode: str, count: int, traced: bool) -> float:
    """KiB per idle connection: resident set size, or (``traced``) the Python heap under tracemalloc."""
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, mode, "traced" if traced else "rss"], stdout=subprocess.PIPE, text=True
    )
    socks: list[socket.socket] = []
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        socks = [
            handshake(port, mode) for _ in range(50)
        ]  # first-use allocations are not per-connection cost
        time.sleep(0.5)
        before = traced_bytes(port) / 1024 if traced else rss_kib(server.pid)
        socks += [handshake(port, mode) for _ in range(count)]
        time.sleep(1.0)
        after = traced_bytes(port) / 1024 if traced else rss_kib(server.pid)
        return (after - before) / count
    finally:
        for sock in socks:
            sock.close()
        server.kill()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--modes", nargs="+", default=["off", "shared", "dedicated", "3KB", "64KB"])
    args = parser.parse_args()
    if "off" not in args.modes:
        args.modes.insert(0, "off")
    rss = {mode: measure(mode, args.connections, traced=False) for mode in args.modes}
    heap = {mode: measure(mode, args.connections, traced=True) for mode in args.modes}
    print(f"{args.connections} idle connections, rt.serve on asyncio; KiB per connection (lower is better)")
    print(f"{'per_message_deflate':<20} {'RSS':>9} {'vs off':>7} {'Python heap':>12} {'vs off':>7}")
    for mode in args.modes:
        print(
            f"{mode:<20} {rss[mode]:>9.2f} {rss[mode] / rss['off']:>6.2f}x"
            f" {heap[mode]:>12.2f} {heap[mode] / heap['off']:>6.2f}x"
        )


if __name__ == "__main__":
    main()
