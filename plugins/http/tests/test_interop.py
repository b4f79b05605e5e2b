"""Interop with clients nobody here wrote: the websockets client, Node's ws package, headless Chromium.

The Node client needs `npm ci` in tests/node (done here when node_modules is missing); the browser test needs
Debian's chromium at /usr/bin/chromium (apt-get install chromium), driven by Playwright for Python.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
from typing import Any

import anyio
import pytest

import rt

pytestmark = pytest.mark.anyio
HERE = pathlib.Path(__file__).parent
NODE_DIR = HERE / "node"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def interop_server(**extra: Any) -> Any:
    """Echo, with a greeting that shows ws.data from cookies, and a broadcast to the room on request."""

    def fetch(req: rt.Request, server: Any) -> Any:
        if req.path == "/ws":
            if server.upgrade(req, data={"user": req.cookies.get("user", "anonymous")}):
                return None
            return rt.Response("upgrade failed", status=400)
        return rt.Response("not here", status=404)

    def message(ws: Any, msg: Any) -> None:
        if msg == "broadcast please":
            ws.send(msg)
            server.publish("room", f"room: {ws.data['user']} says hi")
        elif isinstance(msg, str) and msg.startswith("hello"):
            ws.send(f"{msg} as {ws.data['user']}")
        else:
            ws.send(msg)

    page = (HERE / "page.html").read_text()
    routes = {
        "/": rt.Response(
            page, headers={"content-type": "text/html;charset=utf-8", "set-cookie": "user=ann; Path=/"}
        )
    }
    server = rt.serve(
        fetch=fetch,
        routes=routes,
        port=0,
        websocket=rt.WebSocketHandler(message=message, open=lambda ws: ws.subscribe("room")),
        **extra,
    )
    return server


async def test_websockets_client_library(rt_kernel: Any) -> None:
    """The asyncio client of the `websockets` package (under trio it runs in a thread with its own loop)."""

    def talk(url: str) -> list[Any]:
        from websockets.sync.client import connect

        with connect(url, subprotocols=["chat"], additional_headers={"cookie": "user=bob"}) as client:
            client.send("hello there")
            client.send(b"\x00" * 70000)
            client.send("broadcast please")
            got = [client.recv() for _ in range(4)]
            client.close(4002, "bye")
            return [g if isinstance(g, str) else len(g) for g in got] + [
                client.subprotocol,
                client.close_code,
            ]

    async with interop_server() as server:
        got = await anyio.to_thread.run_sync(talk, f"ws://127.0.0.1:{server.port}/ws")
    assert got == ["hello there as bob", 70000, "broadcast please", "room: bob says hi", "chat", 4002]


def _ensure_node_ws() -> None:
    if shutil.which("node") is None:
        pytest.fail("node is not installed: apt-get install nodejs npm")
    if not (NODE_DIR / "node_modules" / "ws").is_dir():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=NODE_DIR,
            check=True,
            timeout=300,
            stdout=subprocess.DEVNULL,
        )


async def test_node_ws_client(rt_kernel: Any) -> None:
    await anyio.to_thread.run_sync(_ensure_node_ws)
    async with interop_server() as server:
        with anyio.fail_after(30):
            result = await anyio.run_process(
                ["node", str(NODE_DIR / "client.js"), f"ws://127.0.0.1:{server.port}/ws"], check=False
            )
    report = json.loads(result.stdout.decode().strip().splitlines()[-1])
    assert result.returncode == 0, report
    assert report["protocol"] == "chat"
    assert report["got"] == [
        {"text": "hello from node as anonymous"},
        {"binary": 4, "first": 0, "last": 255},
        {"binary": 70000, "first": 7, "last": 7},
        {"text": "broadcast please"},
        {"text": "room: anonymous says hi"},
    ]
    assert (report["code"], report["reason"]) == (4000, "")  # the server echoes the code of the close it got


def _browse(url: str) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # the time-outs only bound a hang: a loaded CI machine starts Chromium and renders slowly
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True, timeout=120_000
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(30_000)
            page.goto(url)
            page.wait_for_function("window.result !== null", timeout=30_000)
            return page.evaluate("window.result")
        finally:
            browser.close()


async def test_headless_chromium_page_served_by_rt_serve(rt_kernel: Any) -> None:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium")
    async with interop_server() as server:
        with anyio.fail_after(240):
            result = await anyio.to_thread.run_sync(_browse, f"http://127.0.0.1:{server.port}/")
    assert result["protocol"] == "chat"
    assert result["got"] == [
        {"text": "hello from chromium as ann"},  # the cookie set by the page response reached ws.data
        {"binary": [9, 8, 7]},
        {"text": "len:70000"},
        {"text": "broadcast please"},
        {"text": "room: ann says hi"},
    ]
    assert (result["code"], result["reason"]) == (4001, "")
