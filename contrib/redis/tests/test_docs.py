"""docs/scaling.md's example runs as written: four workers from ``rt.serve(workers=4, broker=...)``, a
message published on one worker reaches clients on the others, and SIGTERM stops them all with 1001."""

from __future__ import annotations

import re
import signal
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from rt.testing import clean_environ

pytestmark = pytest.mark.anyio
DOC = Path(__file__).resolve().parents[3] / "docs" / "scaling.md"


def example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert blocks, "docs/scaling.md lost its example"
    return blocks[0]


async def test_the_workers_example_runs(
    anyio_backend: str, redis_server: Any, ws_client: Any, tmp_path: Path
) -> None:
    script = tmp_path / "app.py"
    script.write_text(example(), encoding="utf-8")
    environ = clean_environ({"PORT": "0", "REDIS_URL": redis_server.url, "RT_BACKEND": anyio_backend})
    process = subprocess.Popen(  # noqa: ASYNC220 - started once; the test then talks to it over sockets
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=environ
    )
    clients: list[Any] = []
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "listening on" in line, line
        port = int(line.split()[-1].rsplit(":", 1)[1].strip("/"))
        # sockets on every worker, and every worker subscribed: a worker subscribes to Redis only after its
        # first socket opened, so a publish while one worker's SUBSCRIBE is still on its way would miss that
        # worker's clients (connections spread at random: 200 tries all but never miss a worker)
        with anyio.fail_after(60):
            while redis_server.numsub("rt:room") < 4:
                assert len(clients) < 200, "connections did not reach all four workers"
                clients.append(await ws_client.connect(port))
                await anyio.sleep(0.05)
        await clients[0].send("hello, every worker")
        for client in clients:
            with anyio.fail_after(10):
                assert await client.recv() == "hello, every worker"
        process.send_signal(signal.SIGTERM)
        for client in clients:
            with anyio.fail_after(20):
                opcode, payload = await client.recv_frame()
            assert opcode == 0x8 and struct.unpack("!H", payload[:2])[0] == 1001
        assert await anyio.to_thread.run_sync(lambda: process.wait(timeout=30)) == 0
    finally:
        for client in clients:
            await client.aclose()
        if process.poll() is None:
            process.kill()  # its workers notice and stop within a second (they hold the stdout pipe too)
        process.communicate(timeout=30)
