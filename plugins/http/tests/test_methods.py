"""Request methods against the reference runtime: which ones reach the handler, and what the rest get.

Both servers get the same request lines over loopback (the reference runtime's ``Bun.serve`` from
``tools/reference-runtime``, and ``rt.serve`` on asyncio and trio). What was found (docs/serve.md, "What each
attack gets"):

- The same methods reach the handler on both: the registered ones llhttp knows (``GET`` ... ``QUERY``, the
  WebDAV and other extension methods such as ``PROPFIND``, ``MKCOL``, ``M-SEARCH``), exactly as sent.
  Methods are case-sensitive on both (``get`` never reaches a ``GET`` handler).
- ``CONNECT`` reaches the reference's handler (with a nonsense URL); rt answers 501: it is not a proxy.
- Any other method: the reference closes the connection without an answer (or says 400 for some tokens);
  rt answers 501 Not Implemented, as RFC 9110 9.1 asks for an unrecognized method, and closes. That includes
  the RTSP methods llhttp knows but refuses in HTTP (``DESCRIBE``, ``PLAY``, ``GET_PARAMETER``, ...), which
  rt answered 400 before, unlike every other unknown method. A request line that is not one (a method that
  is not a token) is 400 on both.
"""

from __future__ import annotations

import select
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import rt

HERE = Path(__file__).resolve().parent
BUN = (
    HERE.parents[2]
    / "tools"
    / "reference-runtime"
    / "node_modules"
    / "@oven"
    / "bun-linux-x64"
    / "bin"
    / "bun"
)

KNOWN = [
    *"GET HEAD POST PUT DELETE OPTIONS TRACE PATCH QUERY".split(),
    *"PROPFIND PROPPATCH MKCOL COPY MOVE LOCK UNLOCK SEARCH BIND REBIND UNBIND ACL REPORT".split(),
    *"MKACTIVITY CHECKOUT MERGE M-SEARCH NOTIFY SUBSCRIBE UNSUBSCRIBE PURGE MKCALENDAR LINK UNLINK SOURCE".split(),
]
RTSP_ONLY = (
    "DESCRIBE ANNOUNCE SETUP PLAY PAUSE TEARDOWN GET_PARAMETER SET_PARAMETER REDIRECT RECORD FLUSH".split()
)
UNKNOWN = ["get", "Get", "delete", "FOO", "BREW", "X-CUSTOM", "FOO-BAR", "GETS", "F_O", "A1", "PRI"]
MALFORMED = ["G@T", "{}"]
pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def reference_port() -> Iterator[int]:
    if not BUN.is_file():
        pytest.fail(f"the reference runtime is not installed: npm ci --prefix {BUN.parents[3]}")
    process = subprocess.Popen([str(BUN), str(HERE / "reference_methods.js")], stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)  # bounds a hang only: it prints at once
        assert ready, "the reference runtime did not start"
        yield int(process.stdout.readline())
    finally:
        process.kill()
        process.wait()


async def answer(port: int, method: str) -> tuple[int | None, str | None]:
    """The status (None: closed without one) and the ``x-method`` the handler echoed for ``method /x``."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(
            f"{method} /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()
        )
        raw = b""
        with anyio.fail_after(30):  # bounds a hang only
            try:
                while True:
                    raw += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                pass
    if not raw:
        return None, None
    status_line, *fields = raw.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    echoed = [
        value.strip() for name, _, value in (f.partition(":") for f in fields) if name.lower() == "x-method"
    ]
    return int(status_line.split(" ", 2)[1]), echoed[0] if echoed else None


def reached(result: tuple[int | None, str | None], method: str) -> bool:
    return result == (200, method)


async def test_the_same_methods_reach_the_handler_as_on_the_reference(
    serve: Any, reference_port: int
) -> None:
    methods = [*KNOWN, "CONNECT", *RTSP_ONLY, *UNKNOWN, *MALFORMED]
    async with serve(fetch=lambda req, server: rt.Response("ok", headers={"x-method": req.method})) as server:
        ours = {method: await answer(server.port, method) for method in methods}
    theirs = {method: await answer(reference_port, method) for method in methods}
    assert {m for m in methods if reached(theirs[m], m)} == {*KNOWN, "CONNECT"}
    assert {m for m in methods if reached(ours[m], m)} == set(KNOWN)
    assert ours["CONNECT"][0] == 501  # not a proxy
    for method in [*RTSP_ONLY, *UNKNOWN]:  # the reference closes without an answer, or says 400
        assert theirs[method][0] in (None, 400), (method, theirs[method])
        assert ours[method][0] == 501, (method, ours[method])
    for method in MALFORMED:
        assert theirs[method][0] == ours[method][0] == 400, method
