"""WebSocket server benchmark: rt.serve on asyncio and on trio against the `websockets` server, same run.

    uv run python bench/ws.py [--seconds 5] [--clients 16] [--chat-clients 32] [--batch 10] [--idle 10000]

(a) echo round-trips per second with 32-byte and 16 KiB messages (each client waits for its echo);
(b) the reference runtime's chat shape: N clients each send a batch, the server republishes every message to
    topic "room" (all N sockets), delivered messages per second;
(c) memory per idle connection: server RSS growth over ``--idle`` open connections, divided by their number.

Every server runs in its own process (bench/ws_server.py); one load generator drives them all: it runs here,
on asyncio protocols with pre-masked frames, and counts delivered messages by bytes (every message has the
same size), so it does almost no work per message and is not the bottleneck it measures.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import pathlib
import resource
import statistics
import struct
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).parent
IMPLS = ["websockets", "rt-asyncio", "rt-trio"]
MASK = b"\x12\x34\x56\x78"


def client_frame(payload: bytes, opcode: int = 2) -> bytes:
    length = len(payload)
    if length < 126:
        header = bytes((0x80 | opcode, 0x80 | length))
    elif length < 65536:
        header = bytes((0x80 | opcode, 0x80 | 126)) + struct.pack("!H", length)
    else:
        header = bytes((0x80 | opcode, 0x80 | 127)) + struct.pack("!Q", length)
    masked = bytes(b ^ MASK[i % 4] for i, b in enumerate(payload))
    return header + MASK + masked


def server_frame_size(length: int) -> int:
    return length + (2 if length < 126 else 4 if length < 65536 else 10)


class Client(asyncio.Protocol):
    """Handshake, then count bytes: ``on_frames(n)`` is called with the number of whole messages received."""

    def __init__(self, frame_size: int) -> None:
        self.frame_size = frame_size
        self.handshake = bytearray()
        self.upgraded = asyncio.get_running_loop().create_future()
        self.pending = 0
        self.on_frames = lambda count: None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(  # type: ignore[attr-defined]
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )

    def data_received(self, data: bytes) -> None:
        if not self.upgraded.done():
            self.handshake += data
            if b"\r\n\r\n" not in self.handshake:
                return
            head, _, rest = bytes(self.handshake).partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_exception(RuntimeError(head.decode(errors="replace")))
                return
            self.upgraded.set_result(None)
            data = rest
        self.pending += len(data)
        if self.pending >= self.frame_size:
            count, self.pending = divmod(self.pending, self.frame_size)
            self.on_frames(count)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.upgraded.done():
            self.upgraded.set_exception(ConnectionError("closed during handshake"))


async def connect(port: int, count: int, frame_size: int) -> list[Client]:
    loop = asyncio.get_running_loop()
    clients: list[Client] = []
    for start in range(0, count, 200):  # in waves, so the accept backlog never overflows
        wave = await asyncio.gather(
            *(
                loop.create_connection(lambda: Client(frame_size), "127.0.0.1", port)
                for _ in range(min(200, count - start))
            )
        )
        clients += [protocol for _, protocol in wave]
        await asyncio.gather(*(c.upgraded for c in clients[start:]))
    return clients


async def echo(port: int, clients: int, size: int, seconds: float, bare: bool = False) -> float:
    payload = os.urandom(size)
    frame = client_frame(payload)
    # a bare echo server returns our masked frame as it is; a WebSocket server answers unmasked
    conns = await connect(port, clients, len(frame) if bare else server_frame_size(size))
    done = 0
    running = True

    def make(client: Client):  # type: ignore[no-untyped-def]
        def on_frames(count: int) -> None:
            nonlocal done
            done += count
            if running:
                client.transport.write(frame)  # type: ignore[union-attr]

        return on_frames

    for client in conns:
        client.on_frames = make(client)
    await asyncio.sleep(0.2)
    start_done, start = done, time.perf_counter()
    for client in conns:
        client.transport.write(frame)  # type: ignore[union-attr]
    await asyncio.sleep(seconds)
    rate = (done - start_done) / (time.perf_counter() - start)
    running = False
    for client in conns:
        client.transport.close()  # type: ignore[union-attr]
    return rate


async def chat(port: int, clients: int, batch: int, seconds: float, size: int = 32) -> float:
    payload = os.urandom(size)
    burst = client_frame(payload) * batch
    conns = await connect(port, clients, server_frame_size(size))
    expected = clients * batch  # every client receives every message of the round, its own included
    received = [0] * clients
    round_done = asyncio.Event()
    remaining = clients

    def make(index: int):  # type: ignore[no-untyped-def]
        def on_frames(count: int) -> None:
            nonlocal remaining
            received[index] += count
            if received[index] >= expected:
                received[index] -= expected
                remaining -= 1
                if remaining == 0:
                    round_done.set()

        return on_frames

    for index, client in enumerate(conns):
        client.on_frames = make(index)
    await asyncio.sleep(0.2)
    delivered, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        round_done.clear()
        remaining = clients
        for client in conns:
            client.transport.write(burst)  # type: ignore[union-attr]
        await asyncio.wait_for(round_done.wait(), 60)
        delivered += clients * expected
    rate = delivered / (time.perf_counter() - start)
    for client in conns:
        client.transport.close()  # type: ignore[union-attr]
    return rate


def rss_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def idle_memory(port: int, pid: int, count: int) -> float:
    warm = await connect(port, 50, 2)
    for client in warm:
        client.transport.close()  # type: ignore[union-attr]
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    conns = await connect(port, count, 2)
    await asyncio.sleep(1.0)
    after = rss_kib(pid)
    for client in conns:
        client.transport.close()  # type: ignore[union-attr]
    return (after - before) * 1024 / count


def start_server(impl: str, mode: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, str(HERE / "ws_server.py"), impl, mode], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("READY "):
        process.kill()
        raise RuntimeError(f"{impl} did not start: {line!r}")
    return process, int(line.split()[1])


def measure(impl: str, mode: str, coro_factory) -> float:  # type: ignore[no-untyped-def]
    process, port = start_server(impl, mode)
    try:
        return asyncio.run(coro_factory(port, process.pid))
    finally:
        process.kill()
        process.wait()


def interleaved(mode: str, coro_factory, repeat: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Median of ``repeat`` runs per server, the servers taking turns, so a burst of load on the machine
    hits every server alike instead of one."""
    samples: dict[str, list[float]] = {impl: [] for impl in IMPLS}
    for _ in range(repeat):
        for impl in IMPLS:
            samples[impl].append(measure(impl, mode, coro_factory))
    return {impl: statistics.median(values) for impl, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--chat-clients", type=int, default=32)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--idle", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per server; the median is reported")
    parser.add_argument("--only", choices=["echo", "chat", "idle"], action="append")
    parser.add_argument("--baseline", action="store_true",
                        help="also measure bare stream echoes (no WebSocket): anyio's streams on asyncio "
                             "and trio, and rt-http's asyncio stream")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    parts = args.only or ["echo", "chat", "idle"]

    rows: list[tuple[str, str, dict[str, float], bool]] = []  # (name, unit, per-impl value, higher is better)
    if "echo" in parts:
        for size in (32, 16384):
            values = interleaved(
                "echo", lambda port, pid, s=size: echo(port, args.clients, s, args.seconds), args.repeat
            )
            rows.append((f"echo {size} B, {args.clients} clients", "round-trips/s", values, True))
    if args.baseline:
        bare = {}
        for backend in ("asyncio", "asyncio-rt", "trio"):
            samples = [measure(f"bare-{backend}", "echo",
                               lambda port, pid: echo(port, args.clients, 32, args.seconds, bare=True))
                       for _ in range(args.repeat)]
            bare[backend] = statistics.median(samples)
        print(f"bare stream echo, 32 B, {args.clients} clients (no WebSocket): anyio on asyncio "
              f"{bare['asyncio']:.0f}/s, rt-http's asyncio stream {bare['asyncio-rt']:.0f}/s, "
              f"anyio on trio {bare['trio']:.0f}/s")
    if "chat" in parts:
        values = interleaved(
            "chat", lambda port, pid: chat(port, args.chat_clients, args.batch, args.seconds), args.repeat
        )
        rows.append(
            (f"chat fan-out, {args.chat_clients} clients x batch {args.batch}", "messages/s", values, True)
        )
    if "idle" in parts:
        values = {
            impl: measure(impl, "idle", lambda port, pid: idle_memory(port, pid, args.idle)) for impl in IMPLS
        }
        rows.append((f"memory per idle connection ({args.idle} open)", "bytes", values, False))

    print(
        f"{'benchmark':48} {'unit':14} "
        + " ".join(f"{impl:>12}" for impl in IMPLS)
        + "   rt-asyncio/ws  rt-trio/ws"
    )
    for name, unit, values, _higher in rows:
        base = values["websockets"]
        print(
            f"{name:48} {unit:14} "
            + " ".join(f"{values[impl]:>12.0f}" for impl in IMPLS)
            + f"   {values['rt-asyncio'] / base:>12.2f}x {values['rt-trio'] / base:>10.2f}x"
        )
    print("(memory: lower is better, so a ratio under 1.00x is a win; the rest: higher is better)")


if __name__ == "__main__":
    main()
