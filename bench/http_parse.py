"""HTTP/1.1 benchmark: which request parser, and rt.serve against the reference runtime, in one run.

    uv run python bench/http_parse.py [--seconds 5] [--clients 32] [--rounds 3]

(a) the parser choice: one keep-alive request of a browser's shape (8 fields) parsed and its response
    framed, per second, by h11 (rt-http's parser before issue 13) and by rt-http's ``RequestParser`` on
    httptools with the server's own checks (Host, version, framing) and response framing. No sockets: this
    is the work the HTTP layer adds to every request;
(b) end to end: keep-alive GET requests per second answered by ``rt.serve`` on asyncio and on trio, and by
    the reference runtime's own server (``Bun.serve``; tools/reference-runtime), each in its own process,
    driven by one load generator here: a ``select.epoll`` loop over ``--clients`` non-blocking sockets, one
    request in flight per socket, responses counted by bytes (every response of a server has the same size).

Ratios are against the first column of their row, measured in the same run; each row is the median of
``--rounds``. h11 is only needed for row (a): it is in rt-http's test extra. ``--baseline-src DIR`` adds a
column to (b): rt.serve on asyncio with rt-http imported from ``DIR/plugins/http/src`` (a checkout of an
earlier commit, e.g. ``git worktree add /tmp/before d06d33f^``: the server on h11).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import select
import socket
import statistics
import subprocess
import sys
import textwrap
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
# run as a script, this file's folder comes first on sys.path, where this file would shadow the standard
# library's ``http`` package for everything imported later
sys.path[:] = [entry for entry in sys.path if pathlib.Path(entry or ".").resolve() != HERE]
BUN = ROOT / "tools/reference-runtime/node_modules/@oven/bun-linux-x64/bin/bun"
REQUEST = (
    b"GET /api/items?id=3 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nUser-Agent: bench/1.0\r\nAccept: */*\r\n"
    b"Accept-Encoding: gzip, deflate\r\nAccept-Language: en\r\nConnection: keep-alive\r\n"
    b"Cookie: session=abc; theme=dark\r\nCache-Control: no-cache\r\n\r\n"
)

RT_SERVER = textwrap.dedent(
    """
    import sys
    import rt
    from rt.backend import run

    server = rt.serve(fetch=lambda req, server: rt.Response("hello"), hostname="127.0.0.1", port=0, backlog=4096)

    async def main():
        async with server:
            print(f"READY {server.port}", flush=True)
            await server.serve_forever()

    run(main, backend=sys.argv[1])
    """
)
BUN_SERVER = textwrap.dedent(
    """
    const server = Bun.serve({hostname: "127.0.0.1", port: 0, fetch: () => new Response("hello")});
    console.log(`READY ${server.port}`);
    """
)


# -- (a) the parser ------------------------------------------------------------------------------------------


def parse_h11(count: int) -> float:
    import h11

    started = time.perf_counter()
    for _ in range(count):
        connection = h11.Connection(h11.SERVER)
        connection.receive_data(REQUEST)
        connection.next_event()
        connection.next_event()
        response = h11.Response(
            status_code=200, headers=[(b"content-type", b"text/plain"), (b"content-length", b"5")]
        )
        connection.send(response)
        connection.send(h11.Data(data=b"hello"))
        connection.send(h11.EndOfMessage())
    return count / (time.perf_counter() - started)


def parse_rt(count: int) -> float:
    from rt_http.http11 import _head_bytes
    from rt_http.request_parser import RequestParser

    started = time.perf_counter()
    for _ in range(count):
        parser = RequestParser(16384)
        parser.feed(REQUEST)
        parser.next_event()
        parser.next_event()
        _head_bytes(200, "OK", [("content-type", "text/plain"), ("content-length", "5")]) + b"hello"
    return count / (time.perf_counter() - started)


# -- (b) end to end ------------------------------------------------------------------------------------------


def start(impl: str, baseline: str | None = None) -> tuple[subprocess.Popen[bytes], int]:
    env = dict(os.environ)
    if impl == "reference":
        command = [str(BUN), "-e", BUN_SERVER]
    else:
        command = [sys.executable, "-c", RT_SERVER, impl.removeprefix("rt-").removesuffix("@baseline")]
        if impl.endswith("@baseline") and baseline:
            env["PYTHONPATH"] = str(pathlib.Path(baseline, "plugins/http/src"))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, cwd=ROOT, env=env)
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("READY"):
        process.kill()
        raise SystemExit(f"{impl} did not start: {line!r}")
    return process, int(line.split()[1])


def response_size(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(REQUEST)
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(
            next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")).split(
                b":"
            )[1]
        )
        while len(body) < length:
            body += sock.recv(65536)
        return len(head) + 4 + length


def requests_per_second(port: int, clients: int, seconds: float) -> float:
    size = response_size(port)
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(clients)]
    poll = select.epoll()
    pending: dict[int, int] = {}
    by_fd: dict[int, socket.socket] = {}
    for sock in socks:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        poll.register(sock.fileno(), select.EPOLLIN)
        by_fd[sock.fileno()] = sock
        pending[sock.fileno()] = size
        sock.send(REQUEST)
    done = 0
    buffer = bytearray(65536)
    started = time.perf_counter()
    deadline = started + seconds
    while (now := time.perf_counter()) < deadline:
        for fd, _ in poll.poll(0.5):
            sock = by_fd[fd]
            received = sock.recv_into(buffer)
            if not received:
                raise SystemExit("the server closed a keep-alive connection")
            pending[fd] -= received
            if pending[fd] <= 0:
                done += 1
                pending[fd] += size
                sock.send(REQUEST)
    elapsed = now - started
    for sock in socks:
        sock.close()
    poll.close()
    return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=20000, help="requests per parser round")
    parser.add_argument("--baseline-src", help="a checkout whose rt-http is measured as rt-asyncio@baseline")
    args = parser.parse_args()
    print(f"cpu count {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")

    h11_rates = [parse_h11(args.count) for _ in range(args.rounds)]
    rt_rates = [parse_rt(args.count) for _ in range(args.rounds)]
    h11_rate, rt_rate = statistics.median(h11_rates), statistics.median(rt_rates)
    print("(a) parse one request and frame its response, per second (no sockets)")
    print(
        f"    h11 {h11_rate:>12,.0f}   httptools (rt RequestParser) {rt_rate:>12,.0f}   ratio {rt_rate / h11_rate:.1f}x"
    )

    impls = ["reference", "rt-asyncio", "rt-trio"] if BUN.exists() else ["rt-asyncio", "rt-trio"]
    if args.baseline_src:
        impls.append("rt-asyncio@baseline")
    rates: dict[str, list[float]] = {impl: [] for impl in impls}
    for _ in range(args.rounds):
        for impl in impls:  # interleaved rounds: a load spike hits every column alike
            process, port = start(impl, args.baseline_src)
            try:
                requests_per_second(port, args.clients, 0.5)  # warm up
                rates[impl].append(requests_per_second(port, args.clients, args.seconds))
            finally:
                process.kill()
                process.wait()
    print(f"(b) keep-alive GET requests per second, {args.clients} connections, median of {args.rounds}")
    first = statistics.median(rates[impls[0]])
    for impl in impls:
        rate = statistics.median(rates[impl])
        print(f"    {impl:<20} {rate:>10,.0f}   {rate / first:.2f}x {impls[0]}")


if __name__ == "__main__":
    main()
