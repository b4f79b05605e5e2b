"""WebSocket server benchmark: rt.serve on asyncio, uvloop and trio against the `websockets` server and the
reference runtime's own server (Bun.serve, bench/ws_bun.js), same run.

    uv run python bench/ws.py [--seconds 5] [--clients 16] [--chat-clients 32] [--batch 10] [--idle 10000]
                              [--subscribers 1000] [--impls websockets rt-asyncio ...]

(a) echo round-trips per second with 32-byte and 16 KiB messages (each client waits for its echo);
(b) the reference runtime's chat shape: N clients each send a batch, the server republishes every message to
    topic "room" (all N sockets), delivered messages per second;
(c) memory per idle connection: server RSS growth over ``--idle`` open connections, divided by their number;
(d) with ``--only fanout`` (needs redis-server): the chat shape served by 1, 2 and 4 worker processes with
    pub/sub across them through Redis (bench/ws_fanout_server.py), against one process without a broker;
(e) fan-out to many: ``--subscribers`` sockets in "room", one of them sends a batch, every socket receives
    each message (delivered messages per second);
(f) the client rows (``--only client``; issue 14): WebSocket *clients* on echo against one server
    (``--client-server``, the reference runtime's by default: the fastest here, so the rows measure the
    clients): rt.WebSocket on asyncio, uvloop and trio against the `websockets` client and picows (on
    asyncio's loop and on uvloop), one connection each, ``--client-windows`` messages in flight, each client
    in a process of its own (bench/ws_client.py), taking turns in the same run. picows is optional:
    ``uv run --with picows python -P bench/ws.py --only client``. Rows print messages per second and the
    client's CPU time per message (its own process, over the timed window), each as a median with the
    spread over ``--repeat`` rounds, and their ratios to the websockets client measured in the same round.

Columns: ``rt-asyncio`` is rt.serve on asyncio's own loop (``RT_LOOP=asyncio``), ``rt-uvloop`` on uvloop
(what rt picks when uvloop is installed), ``rt-trio`` on trio, ``bun`` the reference runtime
(tools/reference-runtime, installed by .ci/setup-extra; left out with a note when its binary is missing).

Every server runs in its own process (bench/ws_server.py); one load generator drives them all: it runs here,
a plain ``select.epoll`` loop over non-blocking sockets with pre-masked frames, and counts delivered messages
by bytes (every message has the same size). Per message it makes one ``recv_into`` and at most one ``send``
and nothing else, so it costs a fraction of what a server does. (An earlier generator on asyncio protocols
cost about as much per round trip as the servers did: on a fast machine every echo row then measured the
generator, at about the same rate for all three servers.) Each row also prints the CPU share of the server
and of the generator over the timed window: a row where the generator is the busier one says so, because
its ratio then understates the faster server. Each row also prints the server's CPU time per delivered
message (round trip for echo): on a shared machine the rates move with the other processes' load, the CPU
time a server spends per message much less.

``--before DIR`` (an older rt_http source tree) adds the ``before-asyncio`` and ``before-trio`` columns and a
regression table: per row, rt-asyncio and rt-trio against the same loop's before (rt-uvloop against
before-asyncio, as before could not run on uvloop), as ratios of rate and of CPU per message taken within
each round, median and range over ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import pathlib
import resource
import select
import socket
import statistics
import struct
import subprocess
import sys
import time
from dataclasses import dataclass

HERE = pathlib.Path(__file__).parent
IMPLS = ["websockets", "rt-asyncio", "rt-uvloop", "rt-trio", "bun"]
BUN = HERE.parent / "tools/reference-runtime/node_modules/@oven/bun-linux-x64/bin/bun"
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


WARMUP = 0.2  # seconds of traffic before the timed window
_RECV = memoryview(bytearray(1 << 18))  # the generator reads into this and only counts the bytes


@dataclass
class Sample:
    """A measured rate, and the CPU share (1.0 = one core) the server and this generator used meanwhile."""

    rate: float
    server_cpu: float = 0.0
    generator_cpu: float = 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Window:
    """The timed window of a run: wall time, and the CPU time of the server and of this process in it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.wall, self.server, self.mine = time.perf_counter(), cpu_seconds(pid), time.process_time()

    def sample(self, count: int) -> Sample:
        wall = time.perf_counter() - self.wall
        return Sample(
            count / wall,
            (cpu_seconds(self.pid) - self.server) / wall,
            (time.process_time() - self.mine) / wall,
        )


def open_sockets(port: int, count: int) -> list[socket.socket]:
    """``count`` upgraded WebSocket connections as non-blocking sockets (handshake done blocking)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port))
            socks.append(sock)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            key = base64.b64encode(os.urandom(16)).decode()
            sock.sendall(
                f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
            )
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(4096)
                if not chunk:
                    raise ConnectionError("closed during the handshake")
                head += chunk
            status, _, rest = head.partition(b"\r\n\r\n")
            if not status.startswith(b"HTTP/1.1 101") or rest:
                raise RuntimeError(f"unexpected handshake answer: {head[:200]!r}")
            sock.setblocking(False)
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks


def send(sock: socket.socket, data: bytes) -> None:
    """Write ``data`` to a non-blocking socket. The generator keeps at most a small burst in flight per
    socket, so the kernel takes it whole; a partial write finishes blocking rather than being lost."""
    sent = sock.send(data)
    if sent < len(data):
        sock.setblocking(True)
        try:
            sock.sendall(data[sent:])
        finally:
            sock.setblocking(False)


def poller(socks: list[socket.socket]) -> tuple[select.epoll, dict[int, int]]:
    epoll = select.epoll()
    index = {}
    for position, sock in enumerate(socks):
        epoll.register(sock.fileno(), select.EPOLLIN)
        index[sock.fileno()] = position
    return epoll, index


def echo(port: int, pid: int, clients: int, size: int, seconds: float, bare: bool = False) -> Sample:
    """Each client sends a message and sends the next when the echo is in: round-trips per second."""
    frame = client_frame(os.urandom(size))
    # a bare echo server returns our masked frame as it is; a WebSocket server answers unmasked
    reply = len(frame) if bare else server_frame_size(size)
    socks = open_sockets(port, clients)
    epoll, index = poller(socks)
    pending = [0] * clients
    done = 0
    window: Window | None = None
    start_done = 0
    try:
        for sock in socks:
            send(sock, frame)
        warm_until = time.perf_counter() + WARMUP
        while True:
            now = time.perf_counter()
            if window is None and now >= warm_until:
                window, start_done = Window(pid), done
            elif window is not None and now - window.wall >= seconds:
                return window.sample(done - start_done)
            for fd, _ in epoll.poll(0.05):
                position = index[fd]
                sock = socks[position]
                received = sock.recv_into(_RECV)
                if not received:
                    raise ConnectionError("the server closed a connection")
                got = pending[position] + received
                if got >= reply:  # one message in flight per client: this is its echo
                    count, got = divmod(got, reply)
                    done += count
                    send(sock, frame)
                pending[position] = got
    finally:
        epoll.close()
        for sock in socks:
            sock.close()


def chat(
    port: int,
    pid: int,
    clients: int,
    batch: int,
    seconds: float,
    size: int = 32,
    sockets: list[socket.socket] | None = None,
) -> Sample:
    """Rounds: every client sends ``batch`` messages, the server republishes each to all ``clients``
    sockets; a round ends when every socket got every message. Delivered messages per second."""
    burst = client_frame(os.urandom(size)) * batch
    per_round = clients * clients * batch  # messages delivered in a round (each client's own included)
    round_bytes = per_round * server_frame_size(size)
    socks = sockets if sockets is not None else open_sockets(port, clients)
    epoll, index = poller(socks)

    def play_round() -> None:
        for sock in socks:
            send(sock, burst)
        got = 0
        deadline = time.perf_counter() + 60
        while got < round_bytes:
            events = epoll.poll(1.0)
            if not events and time.perf_counter() > deadline:
                raise TimeoutError(f"a chat round stalled: {got} of {round_bytes} bytes")
            for fd, _ in events:
                received = socks[index[fd]].recv_into(_RECV)
                if not received:
                    raise ConnectionError("the server closed a connection")
                got += received

    try:
        warm_until = time.perf_counter() + WARMUP
        while time.perf_counter() < warm_until:
            play_round()
        window, delivered = Window(pid), 0
        while time.perf_counter() - window.wall < seconds:
            play_round()
            delivered += per_round
        return window.sample(delivered)
    finally:
        epoll.close()
        for sock in socks:
            sock.close()


def fanout_to_many(port: int, pid: int, clients: int, batch: int, seconds: float, size: int = 32) -> Sample:
    """Rounds: one client sends ``batch`` messages, the server republishes each to all ``clients`` sockets;
    a round ends when every socket got every message. Delivered messages per second."""
    burst = client_frame(os.urandom(size)) * batch
    per_round = clients * batch
    round_bytes = per_round * server_frame_size(size)
    socks = open_sockets(port, clients)
    epoll, index = poller(socks)

    def play_round() -> None:
        send(socks[0], burst)
        got = 0
        deadline = time.perf_counter() + 60
        while got < round_bytes:
            events = epoll.poll(1.0)
            if not events and time.perf_counter() > deadline:
                raise TimeoutError(f"a fan-out round stalled: {got} of {round_bytes} bytes")
            for fd, _ in events:
                received = socks[index[fd]].recv_into(_RECV)
                if not received:
                    raise ConnectionError("the server closed a connection")
                got += received

    try:
        warm_until = time.perf_counter() + WARMUP
        while time.perf_counter() < warm_until:
            play_round()
        window, delivered = Window(pid), 0
        while time.perf_counter() - window.wall < seconds:
            play_round()
            delivered += per_round
        return window.sample(delivered)
    finally:
        epoll.close()
        for sock in socks:
            sock.close()


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


BEFORE: list[str] = []  # --before DIR: an older rt_http source tree, measured as the "before-*" columns


def start_server(impl: str, mode: str) -> tuple[subprocess.Popen[str], int]:
    environ = None
    if impl == "bun":
        command = [str(BUN), str(HERE / "ws_bun.js"), mode]
    elif impl.startswith("before-"):  # the same server script, importing rt_http from the older tree
        environ = {**os.environ, "PYTHONPATH": BEFORE[0]}
        command = [sys.executable, str(HERE / "ws_server.py"), "rt-" + impl.removeprefix("before-"), mode]
    else:
        command = [sys.executable, str(HERE / "ws_server.py"), impl, mode]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environ)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("READY "):
        process.kill()
        raise RuntimeError(f"{impl} did not start: {line!r}")
    return process, int(line.split()[1])


def measure(impl: str, mode: str, run) -> Sample:  # type: ignore[no-untyped-def]
    """Start ``impl``'s server, run ``run(port, pid)`` against it, stop it."""
    process, port = start_server(impl, mode)
    try:
        result = run(port, process.pid)
        return result if isinstance(result, Sample) else Sample(result)
    finally:
        process.kill()
        process.wait()


def interleaved(mode: str, run, repeat: int) -> tuple[dict[str, Sample], dict[str, list[Sample]]]:  # type: ignore[no-untyped-def]
    """Median of ``repeat`` runs per server, the servers taking turns, so a burst of load on the machine
    hits every server alike instead of one. The CPU shares are the median run's. Also every round's
    samples, for ratios computed within a round (the regression table of ``--before``)."""
    samples: dict[str, list[Sample]] = {impl: [] for impl in IMPLS}
    for _ in range(repeat):
        for impl in IMPLS:
            samples[impl].append(measure(impl, mode, run))
    return {impl: median_sample(values) for impl, values in samples.items()}, samples


def cost_us(sample: Sample) -> float:
    """The server's CPU time per delivered message (round trip), in microseconds: unlike the rate, it
    hardly moves when other processes take turns on the machine's cores."""
    return sample.server_cpu / sample.rate * 1e6 if sample.rate else float("inf")


# (now, before) pairs of the regression table: uvloop is compared with asyncio's before (it could not run
# rt-http before issue 13)
REGRESSION_PAIRS = [
    ("rt-asyncio", "before-asyncio"),
    ("rt-trio", "before-trio"),
    ("rt-uvloop", "before-asyncio"),
]


def regression_table(rows: list[tuple[str, dict[str, list[Sample]]]]) -> None:
    """``--before``: per row and loop, this rt-http against the older one, ratios taken within each round
    (the two ran one after the other) and printed as median (min-max) over the rounds. Higher is better in
    both: rate now / before, and CPU per message before / now."""
    print("regression check against --before (per round, median (min-max); > 1.00x: faster than before)")
    print(
        f"  {'benchmark':44} {'server':11} {'rate now/before':>20} {'CPU/msg before/now':>20} "
        f"{'CPU us/msg now':>15} {'before':>8}"
    )
    for name, rounds in rows:
        for now, before in REGRESSION_PAIRS:
            if now not in rounds or before not in rounds:
                continue
            pairs = list(zip(rounds[now], rounds[before], strict=True))
            rate = [n.rate / b.rate for n, b in pairs]
            cost = [cost_us(b) / cost_us(n) for n, b in pairs]
            print(
                f"  {name:44} {now.removeprefix('rt-'):11} {spread(rate):>20} {spread(cost):>20} "
                f"{statistics.median(cost_us(n) for n in rounds[now]):>15.2f} "
                f"{statistics.median(cost_us(b) for b in rounds[before]):>8.2f}"
            )


def median_sample(samples: list[Sample]) -> Sample:
    ordered = sorted(samples, key=lambda sample: sample.rate)
    return (
        ordered[(len(ordered) - 1) // 2]
        if len(ordered) % 2
        else Sample(
            statistics.median(sample.rate for sample in ordered),
            statistics.median(sample.server_cpu for sample in ordered),
            statistics.median(sample.generator_cpu for sample in ordered),
        )
    )


CLIENTS = ["rt-asyncio", "rt-uvloop", "rt-trio", "websockets", "websockets-uvloop", "picows", "picows-uvloop"]


def client_available(impl: str) -> bool:
    needs = [name for name in ("uvloop", "picows") if name in impl]
    for module in needs:
        try:
            __import__(module)
        except ImportError:
            return False
    return True


def run_client(impl: str, url: str, seconds: float, size: int, window: int) -> dict[str, float]:
    """One client process (bench/ws_client.py): its count, wall and CPU seconds over the timed window."""
    environ = {**os.environ, "PYTHONWARNINGS": "ignore"}
    if impl.startswith("before-"):
        environ["PYTHONPATH"] = BEFORE[0]
    out = subprocess.run(
        [sys.executable, "-P", str(HERE / "ws_client.py"), impl, url, str(seconds), str(size), str(window)],
        capture_output=True,
        text=True,
        check=False,
        env=environ,
        timeout=seconds * 10 + 60,
    )
    if out.returncode != 0:
        raise SystemExit(f"the {impl} client failed:\n{out.stderr}")
    result: dict[str, float] = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    return result


def spread(values: list[float]) -> str:
    """median (min-max)"""
    return f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"


def client_rows(args: argparse.Namespace) -> None:
    """(f): see the module docstring. The clients take turns within each round; the ratios are computed per
    round (each against the websockets client of the same round), then their median and range printed."""
    server = args.client_server or ("bun" if BUN.exists() else "rt-uvloop")
    clients = [impl for impl in CLIENTS if client_available(impl)]
    missing = [impl for impl in CLIENTS if impl not in clients]
    if BEFORE:
        clients += ["before-asyncio", "before-uvloop", "before-trio"]
    process, port = start_server(server, "echo")
    url = f"ws://127.0.0.1:{port}/"
    try:
        print(
            f"client rows: echo against the {server} server, one connection per client, "
            f"{args.seconds:g} s per run, {args.repeat} rounds; load average {os.getloadavg()[0]:.1f} "
            f"at the start on {os.cpu_count()} CPUs"
        )
        if missing:
            print(f"(not installed, left out: {', '.join(missing)}; picows: uv run --with picows ...)")
        for window in args.client_windows:
            size = args.client_size
            runs: dict[str, list[dict[str, float]]] = {impl: [] for impl in clients}
            for _ in range(args.repeat):
                for impl in clients:
                    runs[impl].append(run_client(impl, url, args.seconds, size, window))
            print(
                f"echo {size} B, {window} in flight: messages/s, client CPU per message, and each as a ratio "
                f"to the websockets client of the same round (median, range); higher ratio = better"
            )
            print(
                f"  {'client':18} {'msg/s':>9} {'vs websockets':>20} {'CPU us/msg':>11} "
                f"{'vs websockets':>20} {'user us/msg':>11} {'vs websockets':>20} {'client CPU':>10}"
            )
            base = runs["websockets"]
            for impl in clients:
                rates = [r["count"] / r["wall"] for r in runs[impl]]
                costs = [r["cpu"] / r["count"] * 1e6 for r in runs[impl]]
                rate_ratios = [rate / (b["count"] / b["wall"]) for rate, b in zip(rates, base, strict=True)]
                cost_ratios = [
                    (b["cpu"] / b["count"] * 1e6) / cost for cost, b in zip(costs, base, strict=True)
                ]
                users = [r["user"] / r["count"] * 1e6 for r in runs[impl]]
                user_ratios = [
                    (b["user"] / b["count"] * 1e6) / max(user, 1e-3)
                    for user, b in zip(users, base, strict=True)
                ]
                share = statistics.median(r["cpu"] / r["wall"] for r in runs[impl])
                print(
                    f"  {impl:18} {statistics.median(rates):>9.0f} {spread(rate_ratios):>20} "
                    f"{statistics.median(costs):>11.1f} {spread(cost_ratios):>20} "
                    f"{statistics.median(users):>11.1f} {spread(user_ratios):>20} {share:>10.0%}"
                )
    finally:
        process.kill()
        process.wait()


def fanout_workers(args: argparse.Namespace) -> None:
    """(d): fan-out with 1, 2 and 4 workers through Redis; rt on asyncio, ratios against one process with no
    broker, measured in the same run, the configurations taking turns. Clients land on the workers as the
    kernel spreads them (SO_REUSEPORT); every message reaches every client exactly once whichever worker
    holds it, so the generator counts the same bytes per round as in (b)."""
    import tempfile

    from rt_redis.testing import RedisServer

    def start(workers: int, broker: str) -> tuple[subprocess.Popen[str], int]:
        process = subprocess.Popen(
            [sys.executable, str(HERE / "ws_fanout_server.py"), str(workers), broker, "asyncio"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("READY "):
            process.kill()
            raise RuntimeError(f"the fan-out server did not start: {line!r}")
        return process, int(line.split()[1])

    def run(redis: RedisServer, workers: int, broker: str) -> Sample:
        process, port = start(workers, broker)
        try:
            return chat_when_subscribed(redis, port, process.pid, workers, broker != "none")
        finally:
            process.terminate()
            process.wait(timeout=30)

    def chat_when_subscribed(redis: RedisServer, port: int, pid: int, workers: int, brokered: bool) -> Sample:
        """(b)'s rounds, once each worker that holds a client has subscribed on Redis (else a round could
        start before a worker hears the others, and stall)."""
        socks = open_sockets(port, args.chat_clients)
        try:
            deadline = time.monotonic() + 10
            while brokered and redis.numsub("rt:room") < workers and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.2)
            return chat(port, pid, args.chat_clients, args.batch, args.seconds, sockets=socks)
        finally:
            for sock in socks:
                sock.close()

    configs = [
        ("1 process, no broker", 1, False),
        ("1 worker + Redis", 1, True),
        ("2 workers + Redis", 2, True),
        ("4 workers + Redis", 4, True),
    ]
    with tempfile.TemporaryDirectory() as directory:
        redis = RedisServer(pathlib.Path(directory))
        redis.start()
        try:
            samples: dict[str, list[Sample]] = {name: [] for name, _, _ in configs}
            for _ in range(args.repeat):
                for name, workers, brokered in configs:
                    samples[name].append(run(redis, workers, redis.url if brokered else "none"))
        finally:
            redis.kill()
    results = {name: median_sample(values) for name, values in samples.items()}
    base = results[configs[0][0]].rate
    print(
        f"fan-out, {args.chat_clients} clients x batch {args.batch}, rt on asyncio, delivered messages/s "
        f"(median of {args.repeat}; {os.cpu_count()} CPUs on this machine)"
    )
    for name, _, _ in configs:
        print(f"  {name:24} {results[name].rate:>12.0f}   {results[name].rate / base:>6.2f}x")


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
    parser.add_argument("--subscribers", type=int, default=1000, help="sockets in the fan-out-to-many row")
    parser.add_argument(
        "--only", choices=["echo", "chat", "many", "idle", "fanout", "client"], action="append"
    )
    parser.add_argument(
        "--client-server",
        choices=IMPLS,
        help="the echo server of the client rows (default: bun when installed, else rt-uvloop)",
    )
    parser.add_argument(
        "--client-windows",
        type=int,
        nargs="+",
        default=[1, 16],
        help="messages in flight per client connection, a row each (default: 1 16)",
    )
    parser.add_argument("--client-size", type=int, default=32, help="message size of the client rows")
    parser.add_argument("--impls", nargs="+", choices=IMPLS, help="servers to measure (default: all)")
    parser.add_argument(
        "--before",
        metavar="DIR",
        help="also measure rt_http from DIR (e.g. `git archive <commit> plugins/http/src | tar -x -C /tmp/x`, "
        "then /tmp/x/plugins/http/src) on asyncio and trio: the before-* columns, for regressions",
    )
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="also measure bare stream echoes (no WebSocket): anyio's streams on asyncio "
        "and trio, and rt-http's streams on each",
    )
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    parts = args.only or ["echo", "chat", "many", "idle", "client"]
    if args.before:
        BEFORE.append(args.before)
    if "client" in parts:
        client_rows(args)
        parts = [part for part in parts if part != "client"]
        if not parts:
            return
    if "fanout" in parts:
        fanout_workers(args)
        parts = [part for part in parts if part != "fanout"]
        if not parts:
            return
    chosen = args.impls or IMPLS
    if "bun" in chosen and not BUN.exists():
        print(
            f"note: no reference runtime at {BUN} (npm ci --prefix tools/reference-runtime): column left out"
        )
        chosen = [impl for impl in chosen if impl != "bun"]
    if args.before:
        chosen = [*chosen, "before-asyncio", "before-trio"]
    IMPLS[:] = chosen

    rows: list[tuple[str, str, dict[str, Sample]]] = []  # (name, unit, per-impl sample)
    rounds: list[tuple[str, dict[str, list[Sample]]]] = []  # (name, per-impl samples of every round)
    if "echo" in parts:
        for size in (32, 16384):
            values, samples = interleaved(
                "echo", lambda port, pid, s=size: echo(port, pid, args.clients, s, args.seconds), args.repeat
            )
            rows.append((f"echo {size} B, {args.clients} clients", "round-trips/s", values))
            rounds.append((rows[-1][0], samples))
    if args.baseline:
        bare = {}
        for backend in ("asyncio", "asyncio-rt", "trio", "trio-rt"):
            samples = [
                measure(
                    f"bare-{backend}",
                    "echo",
                    lambda port, pid: echo(port, pid, args.clients, 32, args.seconds, bare=True),
                )
                for _ in range(args.repeat)
            ]
            bare[backend] = median_sample(samples)
        print(
            f"bare stream echo, 32 B, {args.clients} clients (no WebSocket), per second (server CPU): "
            + ", ".join(
                f"{label} {bare[key].rate:.0f} ({bare[key].server_cpu:.0%})"
                for key, label in (
                    ("asyncio", "anyio on asyncio"),
                    ("asyncio-rt", "rt-http's asyncio stream"),
                    ("trio", "anyio on trio"),
                    ("trio-rt", "rt-http's trio stream"),
                )
            )
        )
    if "chat" in parts:
        values, samples = interleaved(
            "chat",
            lambda port, pid: chat(port, pid, args.chat_clients, args.batch, args.seconds),
            args.repeat,
        )
        rows.append((f"chat fan-out, {args.chat_clients} clients x batch {args.batch}", "messages/s", values))
        rounds.append((rows[-1][0], samples))
    if "many" in parts:
        values, samples = interleaved(
            "chat",
            lambda port, pid: fanout_to_many(port, pid, args.subscribers, args.batch, args.seconds),
            args.repeat,
        )
        rows.append((f"fan-out to {args.subscribers} subscribers, batch {args.batch}", "messages/s", values))
        rounds.append((rows[-1][0], samples))
    if "idle" in parts:
        values = {
            impl: measure(impl, "idle", lambda port, pid: asyncio.run(idle_memory(port, pid, args.idle)))
            for impl in IMPLS
        }
        rows.append((f"memory per idle connection ({args.idle} open)", "bytes", values))

    rt_impls = [impl for impl in IMPLS if impl.startswith(("rt-", "before-"))]
    peers = [peer for peer in ("websockets", "bun") if peer in IMPLS]
    ratios = [(impl, peer) for peer in peers for impl in rt_impls]
    print(
        f"{'benchmark':48} {'unit':14} "
        + " ".join(f"{impl:>12}" for impl in IMPLS)
        + "  "
        + " ".join(
            f"{impl.removeprefix('rt-') + '/' + peer.replace('websockets', 'ws'):>12}"
            for impl, peer in ratios
        )
    )
    generator_bound = []
    for name, unit, values in rows:
        print(
            f"{name:48} {unit:14} "
            + " ".join(f"{values[impl].rate:>12.0f}" for impl in IMPLS)
            + "  "
            + " ".join(f"{values[impl].rate / values[peer].rate:>11.2f}x" for impl, peer in ratios)
        )
        if unit != "bytes":
            print(
                f"{'  CPU: server / load generator':63} "
                + " ".join(f"{values[i].server_cpu:>5.0%} /{values[i].generator_cpu:>5.0%}" for i in IMPLS)
            )
            print(
                f"{'  server CPU per message (us)':63} "
                + " ".join(f"{cost_us(values[i]):>12.2f}" for i in IMPLS)
            )
            generator_bound += [
                f"{name}: {impl}"
                for impl in IMPLS
                if values[impl].generator_cpu >= max(0.85, values[impl].server_cpu)
            ]
    print("(memory: lower is better, so a ratio under 1.00x is a win; the rest: higher is better)")
    if BEFORE and rounds:
        regression_table(rounds)
    if generator_bound:
        print(
            "WARNING: the load generator, not the server, was the busier process in: "
            + "; ".join(generator_bound)
            + ". Those rates say more about the generator than the server."
        )


if __name__ == "__main__":
    main()
