"""rt chat: sign in, pick a room, talk. The demo the README starts.

    uv run rt examples/chat/app.py                       # then open the printed URL in two browser tabs
    PORT=0 uv run rt examples/chat/app.py                # any free port
    RT_BACKEND=trio uv run rt examples/chat/app.py       # on trio
    RT_SERVE_BROKER=redis://127.0.0.1:6379/0 uv run rt run --workers 2 examples/chat/app.py

What it shows, one facility each:

- rt.serve: routes, a WebSocket per visitor, rooms as pub/sub topics (``room:<name>``), presence.
- rt.CSRF: the sign-in form carries a token bound to the visitor's pre-session cookie; a POST without it, or
  with a token made for another session or with another key, gets 403.
- rt.secrets: the app's signing key (CSRF secret and session-cookie key) and the bot API's token live in
  rt.secrets. The memory backend is the default here so the demo runs anywhere; ``RT_SECRETS_BACKEND=keyring``
  (or ``file``) keeps them in a real store, shared by every worker.
- Workers and the broker (docs/scaling.md): with ``--workers 2`` and ``RT_SERVE_BROKER`` every room works
  across processes. Memory is per process, so with the memory backend the supervisor hands the signing key
  it made to its workers through the environment (readable by the same user only); a shared backend needs
  no hand-over.

Names and messages travel as JSON and the page shows them with ``textContent``: exactly as typed, escaped
by nobody (``O'Brien & <Co>`` stays that, and cannot inject markup).
"""

from __future__ import annotations

import base64
import errno
import hashlib
import hmac
import html
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import rt

SERVICE = "rt-chat"  # rt.secrets service of this app's secrets
KEY_NAME = "signing-key"
API_TOKEN_NAME = "api-token"
HANDOFF = "RT_CHAT_SIGNING_KEY"  # supervisor -> workers, memory backend only (see the module docstring)
MAX_NAME = 32  # characters
MAX_MESSAGE = 2000  # characters; longer messages are refused
MAX_FORM = 4096  # bytes of a sign-in POST
ROOM_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
PAGE = (Path(__file__).parent / "page.html").read_text(encoding="utf-8")
SIGN_IN = """<!doctype html>
<html><head><meta charset="utf-8"><title>rt chat: sign in</title>
<style>body{{font:16px system-ui;max-width:30em;margin:3em auto}} input{{font:inherit}}</style></head>
<body><h1>rt chat</h1>
<form method="post" action="/signin">
<input type="hidden" name="csrf" value="{token}">
<label>Your name <input name="name" id="name" maxlength="32" required autofocus></label>
<button id="signin">Sign in</button>
</form></body></html>
"""


class Keys:
    """The secrets of this process, loaded from rt.secrets before the server starts."""

    signing: str = ""


def _memory_backend_by_default() -> None:
    """Use rt.secrets' memory backend unless the user chose one (flag, RT_SECRETS_BACKEND, rt.toml)."""
    kernel = rt.get_kernel()
    if kernel.config.source("secrets.backend") == "default":
        kernel.with_overrides({"secrets.backend": "memory"})


async def load_keys() -> None:
    _memory_backend_by_default()
    key = await rt.secrets.get(service=SERVICE, name=KEY_NAME)
    if key is None:
        key = os.environ.pop(HANDOFF, None) or secrets.token_urlsafe(32)
        await rt.secrets.set(service=SERVICE, name=KEY_NAME, value=key)
    kernel = rt.get_kernel()
    will_supervise = "RT_WORKER_ID" not in os.environ and (kernel.config.get("serve.workers") or 1) > 1
    if will_supervise and kernel.config.get("secrets.backend") == "memory":
        os.environ[HANDOFF] = key  # the workers' memory backends start empty
    Keys.signing = key


# -- sessions: a signed cookie, so any worker can read it ----------------------------------------------------


def _sign(data: bytes) -> str:
    return hmac.new(Keys.signing.encode(), data, hashlib.sha256).hexdigest()


def make_session(name: str, sid: str) -> str:
    data = base64.urlsafe_b64encode(json.dumps({"name": name, "sid": sid}).encode()).decode()
    return f"{data}.{_sign(data.encode())}"


def read_session(cookie: str | None) -> dict[str, str] | None:
    if not cookie or cookie.count(".") != 1 or len(cookie) > 1024:
        return None
    data, signature = cookie.split(".")
    if not hmac.compare_digest(signature, _sign(data.encode())):
        return None
    try:
        session = json.loads(base64.urlsafe_b64decode(data))
    except ValueError:
        return None
    return session if isinstance(session, dict) else None


def _cookie(name: str, value: str) -> str:
    return f"{name}={value}; Path=/; HttpOnly; SameSite=Lax"


# -- HTTP ----------------------------------------------------------------------------------------------------


def index(req: rt.Request, server: rt.Server) -> rt.Response:
    if read_session(req.cookies.get("session")) is not None:
        return rt.Response(PAGE, headers={"content-type": "text/html; charset=utf-8"})
    sid = req.cookies.get("sid") or ""
    headers = [("content-type", "text/html; charset=utf-8"), ("cache-control", "no-store")]
    if not re.fullmatch(r"[A-Za-z0-9_-]{24,64}", sid):
        sid = secrets.token_urlsafe(24)
        headers.append(("set-cookie", _cookie("sid", sid)))
    token = rt.CSRF.generate(Keys.signing, session_id=sid)
    return rt.Response(SIGN_IN.format(token=html.escape(token)), headers=headers)


def _forbidden(why: str) -> rt.Response:
    return rt.Response(f"Forbidden: {why}", status=403)


async def sign_in(req: rt.Request, server: rt.Server) -> rt.Response:
    body = await req.body()
    if len(body) > MAX_FORM:
        return rt.Response("form too large", status=413)
    form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=8)
    token = (form.get("csrf") or [""])[0]
    sid = req.cookies.get("sid") or ""
    if not token or not sid:
        return _forbidden("missing CSRF token or session")
    if not rt.CSRF.verify(token, secret=Keys.signing, session_id=sid):
        return _forbidden("invalid CSRF token")
    name = (form.get("name") or [""])[0].strip()
    if not name or len(name) > MAX_NAME or any(ord(c) < 32 for c in name):
        return rt.Response(f"a name is 1 to {MAX_NAME} printable characters", status=400)
    return rt.Response(
        status=303, headers=[("location", "/"), ("set-cookie", _cookie("session", make_session(name, sid)))]
    )


def _same_origin(req: rt.Request) -> bool:
    """A browser always sends Origin on a WebSocket handshake: refuse other sites (cross-site hijacking)."""
    origin = req.headers.get("origin")
    return origin is None or urlsplit(origin).netloc == req.headers.get("host")


def websocket(req: rt.Request, server: rt.Server) -> rt.Response | None:
    session = read_session(req.cookies.get("session"))
    if session is None:
        return _forbidden("sign in first")
    if not _same_origin(req):
        return _forbidden("cross-origin WebSocket")
    room = req.query.get("room") or "lobby"
    if not ROOM_NAME.fullmatch(room):
        return rt.Response("a room name is 1 to 32 letters, digits, - or _", status=400)
    data = {"id": secrets.token_hex(8), "name": session["name"], "room": room}
    if server.upgrade(req, data=data):
        return None
    return rt.Response("this path speaks WebSocket", status=426)


async def api_post(req: rt.Request, server: rt.Server) -> rt.Response:
    """``POST /api/rooms/:room`` with ``Authorization: Bearer <api-token>``: a bot says the body."""
    expected = await rt.secrets.get(service=SERVICE, name=API_TOKEN_NAME)
    if expected is None:
        return rt.Response(
            f"the API is off: store a token with `rt secrets set -s {SERVICE} -n {API_TOKEN_NAME}`",
            status=503,
        )
    given = req.headers.get("authorization") or ""
    if not hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
        return rt.Response("Unauthorized", status=401, headers={"www-authenticate": "Bearer"})
    room = req.params["room"]
    text = (await req.body()).decode("utf-8", "replace")
    if not ROOM_NAME.fullmatch(room) or not text or len(text) > MAX_MESSAGE:
        return rt.Response("bad room or message", status=400)
    server.publish(f"room:{room}", _event("message", {"id": "api", "name": "bot"}, text=text))
    return rt.Response(status=204)


# -- WebSocket: rooms and presence ---------------------------------------------------------------------------


def _event(kind: str, who: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"type": kind, "id": who["id"], "name": who["name"], **extra})


def on_open(ws: rt.ServerWebSocket) -> None:
    me = ws.data
    ws.subscribe(f"room:{me['room']}")
    ws.subscribe(f"user:{me['id']}")  # presence answers for this socket only, from any process
    ws.send(_event("welcome", me, room=me["room"]))
    server.publish(f"room:{me['room']}", _event("join", me))


def on_message(ws: rt.ServerWebSocket, message: str | bytes) -> None:
    me = ws.data
    try:
        event = json.loads(message)
    except ValueError:
        return
    if not isinstance(event, dict):
        return
    if event.get("type") == "say" and isinstance(event.get("text"), str):
        text = event["text"]
        if 0 < len(text) <= MAX_MESSAGE:
            server.publish(f"room:{me['room']}", _event("message", me, text=text))
    elif event.get("type") == "here" and isinstance(event.get("to"), str) and len(event["to"]) == 16:
        server.publish(f"user:{event['to']}", _event("here", me))  # "I am here too", to a newcomer


def on_close(ws: rt.ServerWebSocket, code: int, reason: str) -> None:
    server.publish(f"room:{ws.data['room']}", _event("leave", ws.data))


server = rt.serve(
    routes={
        "/": {"GET": index},
        "/signin": {"POST": sign_in},
        "/ws": websocket,
        "/api/rooms/:room": {"POST": api_post},
        "/health": rt.Response("ok"),
    },
    websocket=rt.WebSocketHandler(
        open=on_open, message=on_message, close=on_close, idle_timeout=60, max_payload_length=16 * 1024
    ),
    hostname=os.environ.get("HOST", "127.0.0.1"),
    port=int(os.environ.get("PORT", "3000")),
)


async def main() -> None:
    await load_keys()
    try:
        async with server:  # binds: server.url knows the real port now (PORT=0 picks a free one)
            print(f"rt chat on {server.url} (Ctrl-C to stop)", flush=True)
            await server.serve_forever()
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE or server.url:  # only a port taken before we could listen
            raise
        port = os.environ.get("PORT", "3000")
        raise SystemExit(f"rt chat: port {port} is in use: set PORT to a free one (PORT=0 picks any)") from None


if __name__ == "__main__":
    try:
        rt.run(main)  # asyncio, or what --backend / RT_BACKEND / rt.toml say
    except KeyboardInterrupt:
        pass
