"""docs/serve.md's chat server is real: run it (on a free port) and chat through it with two clients."""

from __future__ import annotations

import pathlib
import re
from typing import Any

import anyio
import pytest

DOC = pathlib.Path(__file__).parents[3] / "docs" / "serve.md"


def chat_source() -> str:
    text = DOC.read_text()
    section = text[text.index("## A chat server") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]


def test_the_chat_example_fits_in_30_lines() -> None:
    assert len(chat_source().strip().splitlines()) <= 30


@pytest.mark.anyio
async def test_the_chat_example_works(rt_kernel: Any) -> None:
    source = chat_source().replace("port=3000", "port=0").replace("server.run()", "pass")
    namespace: dict[str, Any] = {}
    exec(compile(source, str(DOC), "exec"), namespace)  # noqa: S102 - the example is ours, in the repository
    server = namespace["server"]

    def talk(port: int) -> list[str]:
        from websockets.sync.client import connect

        with connect(f"ws://127.0.0.1:{port}/?name=ann") as ann:
            with connect(f"ws://127.0.0.1:{port}/?name=bob") as bob:
                joined = ann.recv(timeout=5)
                bob.send("hi all")
                heard = [ann.recv(timeout=5), bob.recv(timeout=5)]
            left = ann.recv(timeout=5)
        return [joined, *heard, left]

    async with server:
        got = await anyio.to_thread.run_sync(talk, server.port)
    assert got == ["bob joined", "bob: hi all", "bob: hi all", "bob left"]


@pytest.mark.anyio
async def test_the_streaming_upload_example_works(rt_kernel: Any) -> None:
    text = DOC.read_text()
    section = text[text.index("### How bodies stream") :]
    source = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]
    namespace: dict[str, Any] = {}
    exec(compile(source, str(DOC), "exec"), namespace)  # noqa: S102 - the example is ours, in the repository
    import rt

    server = rt.serve(fetch=namespace["upload"], port=0)
    async with server, await anyio.connect_tcp("127.0.0.1", server.port) as stream:
        body = b"u" * 200_000
        await stream.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n" + body)
        response = b""
        with anyio.fail_after(5):
            while not response.endswith(b"200000 bytes"):
                response += await stream.receive()
    assert response.startswith(b"HTTP/1.1 200 ")
