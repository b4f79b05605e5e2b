"""A chat room: a page for the browser, a WebSocket per visitor, and topic pub/sub to fan messages out.

    uv run rt examples/chat.py            # then open the printed URL in two browser tabs
    PORT=8080 uv run rt examples/chat.py  # another port (0 picks a free one)
    RT_BACKEND=trio uv run rt examples/chat.py

Uses rt-http (rt.serve) and rt-debug (`rt examples/chat.py` is `rt run examples/chat.py`: an unhandled
error prints a source preview and a V8-style stack). Each message is framed once and the same bytes are
written to every subscriber.
"""

from __future__ import annotations

import html
import os

import rt

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>rt chat</title>
<style>body{font:16px system-ui;max-width:40em;margin:2em auto} #log{height:20em;overflow:auto;border:1px solid #ccc;
padding:.5em;white-space:pre-wrap} input{width:80%}</style></head>
<body><h1>rt chat</h1><p>You are <b id="me"></b>.</p><div id="log"></div>
<form id="form"><input id="text" autocomplete="off" autofocus placeholder="say something"> <button>Send</button></form>
<script>
const name = new URLSearchParams(location.search).get("name") || "guest" + Math.floor(Math.random() * 1000);
document.getElementById("me").textContent = name;
const log = document.getElementById("log");
const ws = new WebSocket(`ws://${location.host}/ws?name=${encodeURIComponent(name)}`);
ws.addEventListener("message", (event) => { log.textContent += event.data + "\\n"; log.scrollTop = log.scrollHeight; });
ws.addEventListener("close", () => { log.textContent += "(disconnected)\\n"; });
document.getElementById("form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = document.getElementById("text");
  if (text.value) { ws.send(text.value); text.value = ""; }
});
</script></body></html>
"""

ROOM = "room"
MAX_MESSAGE = 2000  # characters; longer messages are cut, so one visitor cannot flood the room


def upgrade(req: rt.Request, server: rt.Server) -> rt.Response | None:
    name = (req.query.get("name") or "guest").strip()[:32] or "guest"
    if server.upgrade(req, data={"name": html.escape(name)}):
        return None
    return rt.Response("this path speaks WebSocket", status=426)


def on_open(ws: rt.ServerWebSocket) -> None:
    ws.subscribe(ROOM)
    ws.publish(ROOM, f"* {ws.data['name']} joined")  # everyone else
    ws.send(f"* welcome, {ws.data['name']} ({server.subscriber_count(ROOM)} here)")


def on_message(ws: rt.ServerWebSocket, message: str | bytes) -> None:
    text = message if isinstance(message, str) else message.decode("utf-8", "replace")
    server.publish(ROOM, f"{ws.data['name']}: {text[:MAX_MESSAGE]}")  # everyone, the sender included


def on_close(ws: rt.ServerWebSocket, code: int, reason: str) -> None:
    server.publish(ROOM, f"* {ws.data['name']} left")


server = rt.serve(
    routes={
        "/": rt.Response(PAGE, headers={"content-type": "text/html; charset=utf-8"}),
        "/ws": upgrade,
        "/health": rt.Response("ok"),
    },
    websocket=rt.WebSocketHandler(open=on_open, message=on_message, close=on_close, idle_timeout=60),
    hostname=os.environ.get("HOST", "127.0.0.1"),
    port=int(os.environ.get("PORT", "3000")),
)


async def main() -> None:
    async with server:  # binds: server.url knows the real port now (PORT=0 picks a free one)
        print(f"rt chat on {server.url} (Ctrl-C to stop)", flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    try:
        rt.run(main)  # asyncio, or what --backend / RT_BACKEND / rt.toml say
    except KeyboardInterrupt:
        pass
