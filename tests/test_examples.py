"""The README's example runs: `rt examples/chat/app.py` serves its sign-in page; CSRF guards the sign-in;
signed-in visitors chat over WebSockets with names and messages exactly as typed; with `--workers 2` and a
Redis broker, rooms work across the worker processes. The browser run is in test_chat_browser.py."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rt.testing import clean_environ

ROOT = (
    Path(__file__).resolve().parents[1]
)  # tests/ runs where every plugin is installed (uv run pytest, tox all)
APP = "examples/chat/app.py"
TRICKY_NAME = "O'Brien & <Co>"
TRICKY_TEXT = "<b>hi</b> & 'single' \"double\" &amp; é 🎉"


def start_chat(argv: list[str], environ: dict[str, str]) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "rt", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_environ({"PORT": "0", **environ}),
    )
    with process:  # closes the pipes when done
        try:
            assert process.stdout is not None
            line = process.stdout.readline()  # "rt chat on http://127.0.0.1:PORT/ (Ctrl-C to stop)"
            assert line.startswith("rt chat on http://"), line + (
                process.stderr.read() if process.stderr else ""
            )
            yield line.split()[3]
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture(params=["asyncio", "trio"])
def chat_url(request: pytest.FixtureRequest) -> Iterator[str]:
    yield from start_chat([APP], {"RT_BACKEND": request.param})


def sign_in(url: str, name: str) -> httpx.Client:
    """A visitor with its own cookie jar: load the form, post it with its CSRF token; signed in."""
    client = httpx.Client(base_url=url, timeout=10)
    page = client.get("/")
    assert page.status_code == 200 and "<title>rt chat: sign in</title>" in page.text
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None
    response = client.post("/signin", data={"csrf": token.group(1), "name": name})
    assert response.status_code == 303, response.text
    assert "session" in client.cookies
    return client


def connect(url: str, client: httpx.Client, room: str = "lobby") -> Any:
    from websockets.sync.client import connect as ws_connect

    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    ws_url = url.replace("http://", "ws://") + f"ws?room={room}"
    return ws_connect(ws_url, additional_headers={"cookie": cookie}, open_timeout=10)


def receive(ws: Any, kind: str, name: str | None = None) -> dict[str, Any]:
    """The next event of ``kind`` (from ``name``); other events (presence, own join) may come in between."""
    while True:
        event: dict[str, Any] = json.loads(ws.recv(timeout=10))
        if event["type"] == kind and name in (None, event["name"]):
            return event


def test_serves_the_sign_in_page_and_health(chat_url: str) -> None:
    response = httpx.get(chat_url, timeout=10)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert "sid=" in response.headers["set-cookie"] and "HttpOnly" in response.headers["set-cookie"]
    assert httpx.get(chat_url + "health", timeout=10).text == "ok"


def test_sign_in_needs_a_csrf_token_of_this_session(chat_url: str) -> None:
    visitor = httpx.Client(base_url=chat_url, timeout=10)
    visitor.get("/")  # has a pre-session now
    assert visitor.post("/signin", data={"name": "eve"}).status_code == 403  # no token
    assert visitor.post("/signin", data={"name": "eve", "csrf": "Zm9yZ2Vk"}).status_code == 403  # forged
    other = httpx.Client(base_url=chat_url, timeout=10)
    token = re.search(r'name="csrf" value="([^"]+)"', other.get("/").text)
    assert token is not None
    # a real token, but bound to the other visitor's session
    assert visitor.post("/signin", data={"name": "eve", "csrf": token.group(1)}).status_code == 403
    fresh = httpx.Client(base_url=chat_url, timeout=10)  # no pre-session cookie at all
    assert fresh.post("/signin", data={"name": "eve", "csrf": token.group(1)}).status_code == 403
    assert other.post("/signin", data={"name": "eve", "csrf": token.group(1)}).status_code == 303


def test_websocket_needs_a_session_and_the_same_origin(chat_url: str) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect as ws_connect

    ws_url = chat_url.replace("http://", "ws://") + "ws"
    with pytest.raises(InvalidStatus, match="403"):
        ws_connect(ws_url, open_timeout=10)
    client = sign_in(chat_url, "ann")
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    with pytest.raises(InvalidStatus, match="403"):  # another site's page using the visitor's cookie
        ws_connect(
            ws_url, additional_headers={"cookie": cookie}, origin="http://evil.example", open_timeout=10
        )


def test_two_visitors_chat_with_names_exactly_as_typed(chat_url: str) -> None:
    obrien, ann = sign_in(chat_url, TRICKY_NAME), sign_in(chat_url, "ann")
    with connect(chat_url, obrien) as first:
        assert receive(first, "welcome")["name"] == TRICKY_NAME  # not &#x27; nor &amp;lt;
        with connect(chat_url, ann) as second:
            newcomer = receive(first, "join", "ann")
            assert receive(second, "welcome")["name"] == "ann"
            first.send(json.dumps({"type": "here", "to": newcomer["id"]}))  # what the page does: presence
            assert receive(second, "here")["name"] == TRICKY_NAME
            first.send(json.dumps({"type": "say", "text": TRICKY_TEXT}))
            for ws in (first, second):
                said = receive(ws, "message")
                assert (said["name"], said["text"]) == (TRICKY_NAME, TRICKY_TEXT)
        assert receive(first, "leave")["name"] == "ann"


def test_rooms_are_separate(chat_url: str) -> None:
    ann, bob = sign_in(chat_url, "ann"), sign_in(chat_url, "bob")
    with connect(chat_url, ann, "kitchen") as kitchen, connect(chat_url, bob, "garden") as garden:
        receive(kitchen, "welcome")
        receive(garden, "welcome")
        garden.send(json.dumps({"type": "say", "text": "roses"}))
        assert receive(garden, "message")["text"] == "roses"
        kitchen.send(json.dumps({"type": "say", "text": "soup"}))
        assert receive(kitchen, "message")["text"] == "soup"  # and never "roses"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_two_workers_and_redis(backend: str, tmp_path: Path) -> None:
    from rt_redis.testing import RedisServer

    redis = RedisServer(tmp_path)
    redis.start()
    try:
        argv = ["run", "--workers", "2", APP]
        for url in start_chat(argv, {"RT_BACKEND": backend, "RT_SERVE_BROKER": redis.url}):
            # each request is a new connection: the form and the post may reach different workers, and the
            # session cookie made by one must open a socket on the other (one signing key for both)
            visitors = [sign_in(url, f"visitor {n}") for n in range(3)]
            sockets: list[Any] = []
            with contextlib.ExitStack() as stack:
                # until the lobby has sockets on both workers, which each subscribe on Redis: the kernel spreads
                # connections over the two listeners, and a worker's SUBSCRIBE can still be on its way to Redis
                # on a loaded machine, so the bound is time, with a pause between connections after a few
                deadline = time.monotonic() + 60
                while redis.numsub("rt:room:lobby") < 2:
                    assert time.monotonic() < deadline, (
                        f"{len(sockets)} connections in 60 s, one worker subscribed"
                    )
                    if len(sockets) >= 8:
                        time.sleep(0.5)
                    if len(sockets) < 40:
                        sockets.append(stack.enter_context(connect(url, visitors[len(sockets) % 3])))
                        receive(sockets[-1], "welcome")
                sockets[0].send(json.dumps({"type": "say", "text": TRICKY_TEXT}))
                for ws in sockets:
                    said = receive(ws, "message")
                    assert (said["name"], said["text"]) == ("visitor 0", TRICKY_TEXT)
    finally:
        redis.kill()


@pytest.mark.anyio
async def test_the_bot_api_token_lives_in_rt_secrets(rt_kernel: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    import anyio

    import rt

    monkeypatch.setenv("PORT", "0")
    spec = importlib.util.spec_from_file_location("chat_app", ROOT / APP)
    assert spec is not None and spec.loader is not None
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    await app.load_keys()
    assert rt_kernel.config.get("secrets.backend") == "memory"  # the demo's default when none is chosen
    assert await rt.secrets.get(service="rt-chat", name="signing-key") == app.Keys.signing
    async with app.server, httpx.AsyncClient(base_url=app.server.url, timeout=10) as client:
        say = "/api/rooms/lobby"
        assert (
            await client.post(say, content="hi", headers={"authorization": "Bearer x"})
        ).status_code == 503
        await rt.secrets.set(service="rt-chat", name="api-token", value="tok-" + "x" * 40)
        assert (await client.post(say, content="hi")).status_code == 401
        wrong = await client.post(say, content="hi", headers={"authorization": "Bearer tok-" + "x" * 39})
        assert wrong.status_code == 401

        def listen() -> dict[str, Any]:
            from websockets.sync.client import connect as ws_connect

            cookie = "session=" + app.make_session("ann", "s" * 32)
            ws_url = app.server.url.replace("http://", "ws://") + "ws"
            with ws_connect(ws_url, additional_headers={"cookie": cookie}, open_timeout=10) as ws:
                receive(ws, "join", "ann")
                ready.set()
                return receive(ws, "message")

        ready = threading.Event()
        async with anyio.create_task_group() as tg:
            result: list[dict[str, Any]] = []

            async def run_listener() -> None:
                result.append(await anyio.to_thread.run_sync(listen))

            tg.start_soon(run_listener)
            # the listener must have joined before the bot posts, or the message is not for it (60 s: a hang bound)
            assert await anyio.to_thread.run_sync(ready.wait, 60), "the listener never joined"
            right = await client.post(
                say, content=TRICKY_TEXT, headers={"authorization": "Bearer tok-" + "x" * 40}
            )
            assert right.status_code == 204
        assert (result[0]["name"], result[0]["text"]) == ("bot", TRICKY_TEXT)
