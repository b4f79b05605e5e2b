"""The HTTP/1.1 layer over real loopback sockets (and the memory transport), on asyncio and trio."""

from __future__ import annotations

import gc
import itertools
import logging
import socket
import ssl
import threading
import time
import urllib.request
import warnings
from typing import Any

import anyio
import h11
import pytest
import sniffio

import rt

pytestmark = pytest.mark.anyio


async def exchange(stream: Any, raw: bytes, responses: int = 1) -> list[tuple[h11.Response, bytes]]:
    """Send raw (possibly pipelined) request bytes; read ``responses`` responses with an h11 client."""
    await stream.send(raw)
    results: list[tuple[h11.Response, bytes]] = []
    buffer = b""
    with anyio.fail_after(5):
        while len(results) < responses:
            client = h11.Connection(h11.CLIENT)
            client.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
            client.send(h11.EndOfMessage())
            if buffer:
                client.receive_data(buffer)
            head, body = None, b""
            while True:
                ev = client.next_event()
                if ev is h11.NEED_DATA:
                    try:
                        client.receive_data(await stream.receive())
                    except anyio.EndOfStream:
                        client.receive_data(b"")
                    continue
                if isinstance(ev, h11.Response):
                    head = ev
                elif isinstance(ev, h11.Data):
                    body += ev.data
                elif isinstance(ev, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
            results.append((head, body))
            buffer = client.trailing_data[0]
            if head is None or client.our_state is h11.MUST_CLOSE:
                break
    return results


async def tcp(server: Any) -> Any:
    return await anyio.connect_tcp("127.0.0.1", server.port)


async def test_keep_alive_serves_pipelined_requests_on_one_connection(serve: Any) -> None:
    async def fetch(req: rt.Request, server: Any) -> rt.Response:
        return rt.Response(f"{req.method} {req.path} {await req.text()}")

    async with serve(fetch=fetch) as server:
        raw = (
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
            b"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
            b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
        )
        async with await tcp(server) as stream:
            results = await exchange(stream, raw, responses=3)
        assert [body for _, body in results] == [b"GET /a ", b"POST /b hello", b"POST /c abcde"]
        assert all(head.status_code == 200 for head, _ in results)


async def test_streaming_response_is_chunked(serve: Any) -> None:
    async def parts():
        for part in (b"one,", b"two,", b"three"):
            yield part
            await anyio.sleep(0)

    async with serve(fetch=lambda req, server: rt.Response(parts())) as server:
        async with await tcp(server) as stream:
            await stream.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            raw = b""
            with anyio.fail_after(5):
                while not raw.endswith(b"0\r\n\r\n"):
                    raw += await stream.receive()
        head, _, body = raw.partition(b"\r\n\r\n")
        assert b"transfer-encoding: chunked" in head.lower()
        assert body == b"4\r\none,\r\n4\r\ntwo,\r\n5\r\nthree\r\n0\r\n\r\n"


async def test_body_over_limit_is_413_without_reading_it(serve: Any) -> None:
    """A Content-Length over the limit is refused before the handler runs; a chunked body that grows past
    it is 413 when the handler reads it (and the handler's own answer, on a closed connection, if not)."""

    async def fetch(req: rt.Request, server: Any) -> rt.Response:
        if req.path == "/read":
            await req.body()
        return rt.Response("not read")

    async with serve(fetch=fetch, max_request_body_size=10) as server:
        async with await tcp(server) as stream:
            [(head, body)] = await exchange(
                stream, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n"
            )
        assert head.status_code == 413
        chunked = b"Host: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n"
        async with await tcp(server) as stream:
            [(head, body)] = await exchange(stream, b"POST /read HTTP/1.1\r\n" + chunked)
        assert head.status_code == 413 and head.headers.count((b"connection", b"close")) == 1
        async with await tcp(server) as stream:
            [(head, body)] = await exchange(stream, b"POST /ignore HTTP/1.1\r\n" + chunked)
        assert (head.status_code, body) == (200, b"not read")


async def test_headers_over_limit_are_431(serve: Any) -> None:
    async with serve(fetch=lambda req, server: rt.Response("never"), max_header_size=1024) as server:
        async with await tcp(server) as stream:
            await stream.send(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 4000 + b"\r\n\r\n")
            raw = b""
            with anyio.fail_after(5):
                while b"\r\n\r\n" not in raw:
                    raw += await stream.receive()
        assert raw.startswith(b"HTTP/1.1 431 ")


async def test_malformed_request_is_400(serve: Any) -> None:
    async with serve(fetch=lambda req, server: rt.Response("never")) as server:
        async with await tcp(server) as stream:
            await stream.send(b"NOT HTTP AT ALL\r\n\r\n")
            with anyio.fail_after(5):
                raw = await stream.receive()
        assert raw.startswith(b"HTTP/1.1 400 ")


async def test_handler_exception_is_500_logged_and_server_lives(serve: Any, caplog: Any) -> None:
    def fetch(req: rt.Request, server: Any) -> rt.Response:
        if req.path == "/boom":
            raise RuntimeError("kaboom")
        return rt.Response("alive")

    caplog.set_level(logging.ERROR, logger="rt.serve")
    async with serve(fetch=fetch) as server:
        async with await tcp(server) as stream:
            results = await exchange(
                stream, b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n", 2
            )
        assert [(h.status_code, b) for h, b in results] == [(500, b"Internal Server Error"), (200, b"alive")]
    assert any(
        "kaboom" in (r.exc_text or "") or (r.exc_info and "kaboom" in str(r.exc_info[1]))
        for r in caplog.records
    )


async def test_error_handler_answers_and_its_own_failure_is_500(serve: Any) -> None:
    def fetch(req: rt.Request, server: Any) -> rt.Response:
        raise KeyError(req.path)

    async def error(exc: Exception) -> rt.Response:
        if exc.args == ("/twice",):
            raise ValueError("error handler broke")
        return rt.Response(f"handled {exc!r}", status=503)

    async with serve(fetch=fetch, error=error) as server:
        async with await tcp(server) as stream:
            results = await exchange(
                stream, b"GET /x HTTP/1.1\r\nHost: h\r\n\r\nGET /twice HTTP/1.1\r\nHost: h\r\n\r\n", 2
            )
        assert (results[0][0].status_code, results[0][1]) == (503, b"handled KeyError('/x')")
        assert results[1][0].status_code == 500


async def test_routes_params_methods_static_and_fallback(serve: Any) -> None:
    static = rt.Response("static", headers={"x-static": "1"})

    async def create(req: rt.Request, server: Any) -> rt.Response:
        return rt.Response.json({"created": await req.json()}, status=201)

    routes = {
        "/static": static,
        "/users/:id": lambda req, server: rt.Response(f"user {req.params['id']}"),
        "/items": {"POST": create, "GET": rt.Response("list")},
    }
    async with serve(routes=routes, fetch=lambda req, server: rt.Response("fallback", status=404)) as server:
        raw = (
            b"GET /static HTTP/1.1\r\nHost: h\r\n\r\n"
            b"GET /static HTTP/1.1\r\nHost: h\r\n\r\n"
            b"GET /users/7 HTTP/1.1\r\nHost: h\r\n\r\n"
            b'POST /items HTTP/1.1\r\nHost: h\r\nContent-Length: 7\r\n\r\n{"a":1}'
            b"DELETE /items HTTP/1.1\r\nHost: h\r\n\r\n"
            b"GET /other HTTP/1.1\r\nHost: h\r\n\r\n"
        )
        async with await tcp(server) as stream:
            results = await exchange(stream, raw, 6)
        got = [(h.status_code, b) for h, b in results]
        assert got == [
            (200, b"static"),
            (200, b"static"),
            (200, b"user 7"),
            (201, b'{"created":{"a":1}}'),
            (405, b"Method Not Allowed"),
            (404, b"fallback"),
        ]
        assert (b"x-static", b"1") in results[0][0].headers


async def test_routes_without_fetch_answer_404(serve: Any) -> None:
    async with serve(routes={"/": rt.Response("home")}) as server:
        async with await tcp(server) as stream:
            results = await exchange(stream, b"GET /missing HTTP/1.1\r\nHost: h\r\n\r\n")
        assert results[0][0].status_code == 404


async def test_fetch_returning_none_without_upgrade_is_500(serve: Any) -> None:
    async with serve(fetch=lambda req, server: None) as server:
        async with await tcp(server) as stream:
            results = await exchange(stream, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        assert results[0][0].status_code == 500


async def test_unix_socket_transport(serve: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "rt.sock")
    async with serve(fetch=lambda req, server: rt.Response("over unix"), unix=path) as server:
        assert server.url == f"unix:{path}" and server.transport_name == "unix"
        async with await anyio.connect_unix(path) as stream:
            results = await exchange(stream, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        assert results[0][1] == b"over unix"


async def test_tls_transport(serve: Any) -> None:
    import trustme  # in rt-http's test extra

    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_context)
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    async with serve(fetch=lambda req, server: rt.Response(req.url), tls=server_context) as server:
        assert server.url.startswith("https://127.0.0.1:")
        async with await anyio.connect_tcp(
            "127.0.0.1", server.port, ssl_context=client_context, tls_standard_compatible=False
        ) as stream:
            results = await exchange(stream, b"GET /secure HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert results[0][1] == b"https://127.0.0.1/secure"


async def test_memory_transport(serve: Any) -> None:
    async with serve(fetch=lambda req, server: rt.Response("in memory"), transport="memory") as server:
        assert server.url.startswith("memory://")
        async with await server.listener.connect() as stream:
            results = await exchange(
                stream, b"GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", 2
            )
        assert [b for _, b in results] == [b"in memory", b"in memory"]


async def test_the_memory_listener_closes_what_it_never_accepted(rt_kernel: Any) -> None:
    """Pipes still queued when the listener closes are closed (their clients see EOF), and a connect to
    a closed listener leaves no pipe behind: the memory transport leaks no memory object stream."""
    from rt_http.transports import MemoryListener

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        listener = MemoryListener()
        async with await listener.connect() as client:  # queued; nobody ever accepts it
            await listener.aclose()
            with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
                await client.receive()
        with pytest.raises(anyio.ClosedResourceError):
            await listener.connect()
        del client, listener
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


@pytest.mark.parametrize("kind", ["http", "websocket"])
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_peer_that_stopped_reading_keeps_no_server_socket_open(
    rt_kernel: Any, monkeypatch: pytest.MonkeyPatch, backend: str, kind: str
) -> None:
    """Leaving ``async with`` while writes are stuck behind a peer that stopped reading (a response, or
    WebSocket messages) cuts the connection: no server socket is left draining after the server and its
    event loop ended, and the exit does not wait out the asyncio stream's drain grace (10 s)."""
    import rt_http.server
    import rt_http.websocket

    monkeypatch.setattr(rt_http.server, "_LINGER", 0.2)  # the waits for closing handshakes, made short
    monkeypatch.setattr(rt_http.websocket, "_CLOSE_TIMEOUT", 0.2)
    chunk = b"x" * 65536
    produced: list[int] = []
    sockets: list[Any] = []

    def endless() -> Any:
        for index in itertools.count():
            produced.append(index)
            yield chunk

    def fetch(req: rt.Request, server: Any) -> Any:
        if kind == "websocket":
            return None if server.upgrade(req) else rt.Response("no", status=400)
        return rt.Response(endless())

    async def stuck() -> None:
        """Until the server's writes are stuck: every buffer on the way is full and nobody reads."""
        with anyio.fail_after(10):
            if kind == "websocket":
                while not sockets or sockets[0].send(chunk) != 0:  # 0: dropped, the queue is full
                    await anyio.sleep(0)
            seen = -1
            while len(produced) != seen:
                seen = len(produced)
                await anyio.sleep(0.1)

    peer = socket.socket()  # blocking, outside the event loop: a client in another process, stalled
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    handler = rt.WebSocketHandler(open=sockets.append, backpressure_limit=1024 * 1024)
    elapsed: list[float] = []

    async def main() -> None:
        async with rt.serve(fetch=fetch, websocket=handler, port=0) as server:
            peer.connect(("127.0.0.1", server.port))
            upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            extra = upgrade + key if kind == "websocket" else ""
            peer.sendall(f"GET / HTTP/1.1\r\nHost: h\r\n{extra}\r\n".encode())
            await stuck()
            started = time.monotonic()
        elapsed.append(time.monotonic() - started)
        sockets.clear()  # the ServerWebSocket holds its stream: gc must be able to see a leaked one

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            anyio.run(main, backend=backend)
            gc.collect()
    finally:
        peer.close()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert elapsed[0] < 8  # prompt: under the 10 s a drain (close grace, idle time-out) would have taken


async def test_transports_come_from_the_hook(rt_kernel: Any) -> None:
    assert {"tcp", "unix", "tls", "memory"} <= set(rt_kernel.host.transports())
    with pytest.raises(ValueError, match="unknown transport 'carrier-pigeon'"):
        async with rt.serve(fetch=lambda req, server: rt.Response(""), transport="carrier-pigeon", port=0):
            pass


async def test_a_third_party_transport_is_used(rt_kernel: Any, rt_register: Any) -> None:
    from rt.hookspecs import hookimpl
    from rt_http.transports import MemoryTransport

    class Wrapped(MemoryTransport):
        name = "custom"

        def url(self, listener: Any, options: Any) -> str:
            return "custom://here/"

    class Plugin:
        @hookimpl
        def rt_register_transports(self, register: Any) -> None:
            register("custom", Wrapped)

    rt_register(Plugin(), "custom-transport")
    async with rt.serve(fetch=lambda req, server: rt.Response("custom"), transport="custom") as server:
        assert server.url == "custom://here/"
        async with await server.listener.connect() as stream:
            assert (await exchange(stream, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"))[0][1] == b"custom"


async def test_a_transport_whose_url_fails_does_not_leak_its_listener(
    rt_kernel: Any, rt_register: Any
) -> None:
    from rt.hookspecs import hookimpl
    from rt_http.transports import TcpTransport

    ports: list[int] = []

    class Broken(TcpTransport):
        async def listen(self, options: Any) -> Any:
            listener = await super().listen(options)
            ports.append(listener.extra(anyio.abc.SocketAttribute.local_port))
            return listener

        def url(self, listener: Any, options: Any) -> str:
            raise RuntimeError("no url")

    class Plugin:
        @hookimpl
        def rt_register_transports(self, register: Any) -> None:
            register("broken", Broken)

    rt_register(Plugin(), "broken-transport")
    server = rt.serve(fetch=lambda req, server: rt.Response("x"), transport="broken", port=0)
    with pytest.raises(RuntimeError, match="no url"):
        async with server:
            pass
    with pytest.raises(OSError):  # closed: nothing listens there any more
        await anyio.connect_tcp("127.0.0.1", ports[0])


async def test_stop_frees_the_port_and_serve_forever_returns(serve: Any) -> None:
    server = rt.serve(fetch=lambda req, server: rt.Response("x"), port=0)
    async with server:
        port = server.port
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve_forever)
            await anyio.sleep(0.01)
            await server.stop()
    with pytest.raises(OSError):
        await anyio.connect_tcp("127.0.0.1", port)


def test_bad_arguments_fail_clearly(rt_kernel: Any) -> None:
    with pytest.raises(TypeError, match="needs fetch= or routes="):
        rt.serve()
    with pytest.raises(ValueError, match="port must be"):
        rt.serve(fetch=lambda r, s: None, port=70000)
    with pytest.raises(TypeError, match="fetch= must be a function"):
        rt.serve(fetch="nope")


def test_run_goes_through_the_kernel_backend_choice(rt_kernel: Any, monkeypatch: Any) -> None:
    """server.run() must ask rt.backend.run (the one backend decision point): here it picks trio."""
    import rt.backend

    seen: dict[str, Any] = {}
    real_run = rt.backend.run

    def spy(func: Any, *args: Any, backend: str | None = None, **kw: Any) -> Any:
        seen["backend"] = backend
        return real_run(func, *args, backend=backend, **kw)

    monkeypatch.setattr(rt.backend, "run", spy)

    async def fetch(req: rt.Request, server: Any) -> rt.Response:
        if req.path == "/stop":
            await server.stop()  # returns at once: no WebSocket is open; serve_forever then returns
        return rt.Response(sniffio.current_async_library())

    server = rt.serve(fetch=fetch, port=0)
    thread_error: list[BaseException] = []

    def target() -> None:
        from rt.kernel import use_kernel

        with use_kernel(rt_kernel):
            try:
                server.run(backend="trio")
            except BaseException as exc:  # reported to the test thread
                thread_error.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    for _ in range(500):
        if server.url:
            break
        threading.Event().wait(0.01)
    assert server.url
    assert urllib.request.urlopen(server.url, timeout=5).read() == b"trio"
    try:  # the server may cut this last connection while it shuts down
        urllib.request.urlopen(server.url + "stop", timeout=5).read()
    except OSError:
        pass
    thread.join(10)
    assert not thread.is_alive() and not thread_error
    assert seen["backend"] == "trio"


async def test_pending_requests_counts_requests_in_handlers(serve: Any, ws_tools: Any) -> None:
    seen: list[int] = []

    async def fetch(req: rt.Request, server: Any) -> rt.Response:
        seen.append(server.pending_requests)
        return rt.Response("ok")

    async with serve(fetch=fetch) as server:
        async with await tcp(server) as stream:
            await exchange(stream, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
            assert seen == [1]
            await ws_tools.wait_until(
                lambda: server.pending_requests == 0
            )  # the server resumes after sending


async def test_expect_100_continue_is_answered_before_the_body(serve: Any) -> None:
    async def echo(req: rt.Request, server: Any) -> rt.Response:
        return rt.Response(await req.text())

    async with serve(fetch=echo) as server:
        async with await tcp(server) as stream:
            await stream.send(
                b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
            )
            raw = b""
            with anyio.fail_after(5):  # no body sent yet: only a 100 can come back
                while b"\r\n\r\n" not in raw:
                    raw += await stream.receive()
            assert raw.startswith(b"HTTP/1.1 100 ")
            [(head, body)] = await exchange(stream, b"hello")
        assert head.status_code == 200 and body == b"hello"


def test_serve_options_are_checked(rt_kernel: Any) -> None:
    import datetime

    with pytest.raises(TypeError, match="unknown options: prot; known: .*port"):
        rt.serve(fetch=lambda req, server: rt.Response("x"), prot=3000)
    with pytest.raises(ValueError, match="header_timeout"):
        rt.serve(fetch=lambda req, server: rt.Response("x"), header_timeout=-1)
    with pytest.raises(ValueError, match="max_connections"):
        rt.serve(fetch=lambda req, server: rt.Response("x"), max_connections=0)
    with pytest.raises(ValueError, match="backlog"):
        rt.serve(fetch=lambda req, server: rt.Response("x"), backlog=0)
    server = rt.serve(fetch=lambda req, server: rt.Response("x"), idle_timeout=datetime.timedelta(seconds=5))
    assert server.idle_timeout == 5.0
