"""WebSocket clients on echo: rt.WebSocket against the `websockets` client and picows, same server, same run.

    uv run --with picows python bench/ws_client.py [--seconds 5] [--size 32] [--repeat 3] [--window 1]

One server process (rt.serve on asyncio, from bench/ws_server.py) echoes; each client runs in a process of
its own, opens one connection and keeps ``--window`` messages in flight (1: one round trip at a time, which
measures the client's per-message cost plus the server's; larger windows measure throughput). Every row
prints messages per second and the client process's CPU share, and the ratio to the `websockets` client
measured in the same run. Rows: rt on asyncio, on uvloop (when installed) and on trio; websockets (its
asyncio client); picows (a Cython client on asyncio, the fastest Python WebSocket library on PyPI).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIENTS = ("rt-asyncio", "rt-uvloop", "rt-trio", "websockets", "picows")


def _payload(size: int) -> bytes:
    return bytes(i % 251 for i in range(size))


async def _rt_client(url: str, seconds: float, size: int, window: int) -> int:
    import anyio

    import rt

    payload = _payload(size)
    done = 0
    async with rt.WebSocket(url, per_message_deflate=False) as ws:
        for _ in range(window):
            await ws.send(payload)
        deadline = anyio.current_time() + seconds
        while anyio.current_time() < deadline:
            await ws.receive()
            done += 1
            await ws.send(payload)
        for _ in range(window):
            await ws.receive()
    return done


async def _websockets_client(url: str, seconds: float, size: int, window: int) -> int:
    from websockets.asyncio.client import connect

    payload = _payload(size)
    done = 0
    async with connect(url, compression=None, max_size=None) as ws:
        for _ in range(window):
            await ws.send(payload)
        loop_time = __import__("asyncio").get_running_loop().time
        deadline = loop_time() + seconds
        while loop_time() < deadline:
            await ws.recv()
            done += 1
            await ws.send(payload)
        for _ in range(window):
            await ws.recv()
    return done


async def _picows_client(url: str, seconds: float, size: int, window: int) -> int:
    import asyncio

    from picows import WSFrame, WSListener, WSMsgType, WSTransport, ws_connect

    payload = _payload(size)
    loop = asyncio.get_running_loop()
    finished = loop.create_future()

    class Echo(WSListener):  # type: ignore[misc]
        def __init__(self) -> None:
            self.count = 0
            self.deadline = 0.0
            self.outstanding = 0

        def on_ws_connected(self, transport: WSTransport) -> None:
            self.deadline = loop.time() + seconds
            for _ in range(window):
                transport.send(WSMsgType.BINARY, payload)
            self.outstanding = window

        def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
            self.outstanding -= 1
            if loop.time() < self.deadline:
                self.count += 1
                transport.send(WSMsgType.BINARY, payload)
                self.outstanding += 1
            elif self.outstanding == 0 and not finished.done():
                finished.set_result(self.count)

    transport, _client = await ws_connect(Echo, url)
    count: int = await finished
    transport.disconnect()
    await transport.wait_disconnected()
    return count


def run_client(impl: str, url: str, seconds: float, size: int, window: int) -> None:
    """In a child process: one client, then a JSON line with its count and CPU time."""
    if impl == "rt-trio":
        import anyio

        count = anyio.run(_rt_client, url, seconds, size, window, backend="trio")
    elif impl in ("rt-asyncio", "rt-uvloop"):
        import anyio

        count = anyio.run(
            _rt_client,
            url,
            seconds,
            size,
            window,
            backend="asyncio",
            backend_options={"use_uvloop": impl == "rt-uvloop"},
        )
    else:
        import asyncio

        runner = _websockets_client if impl == "websockets" else _picows_client
        count = asyncio.run(runner(url, seconds, size, window))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"count": count, "cpu": usage.ru_utime + usage.ru_stime}))


def _available(impl: str) -> bool:
    module = {"rt-uvloop": "uvloop", "picows": "picows"}.get(impl)
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--window", type=int, default=1, help="messages in flight per connection")
    parser.add_argument("--repeat", type=int, default=3, help="runs per client; the median is reported")
    parser.add_argument("--server", default="rt-asyncio", help="bench/ws_server.py IMPL to run against")
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        run_client(args.client, args.url, args.seconds, args.size, args.window)
        return

    server = subprocess.Popen(
        [sys.executable, str(HERE / "ws_server.py"), args.server, "echo"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        url = f"ws://127.0.0.1:{port}/"
        clients = [impl for impl in CLIENTS if _available(impl)]
        missing = sorted(set(CLIENTS) - set(clients))
        print(
            f"server {args.server}; {args.size} B messages, window {args.window}, {args.seconds:g} s x {args.repeat}"
        )
        if missing:
            print(f"(not installed, left out: {', '.join(missing)})")
        rates: dict[str, list[float]] = {impl: [] for impl in clients}
        cpu: dict[str, list[float]] = {impl: [] for impl in clients}
        for _ in range(args.repeat):  # interleaved, so drift on a shared machine hits every client alike
            for impl in clients:
                started = time.perf_counter()
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--client",
                        impl,
                        "--url",
                        url,
                        "--seconds",
                        str(args.seconds),
                        "--size",
                        str(args.size),
                        "--window",
                        str(args.window),
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                    env={**os.environ, "PYTHONWARNINGS": "ignore"},
                )
                if out.returncode != 0:
                    raise SystemExit(f"the {impl} client failed:\n{out.stderr}")
                wall = time.perf_counter() - started
                result = json.loads(out.stdout.strip().splitlines()[-1])
                rates[impl].append(result["count"] / args.seconds)
                cpu[impl].append(result["cpu"] / wall)
        base = statistics.median(rates["websockets"])
        print(f"{'client':<12} {'msg/s':>10} {'vs websockets':>14} {'client CPU':>11}")
        for impl in clients:
            rate = statistics.median(rates[impl])
            print(f"{impl:<12} {rate:>10.0f} {rate / base:>13.2f}x {statistics.median(cpu[impl]):>10.0%}")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
