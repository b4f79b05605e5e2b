"""A relay server for the multi-process tests: its sockets subscribe to ``?topics=a,b`` (default ``room``)
(``?hello`` first sends ``pid N``), and a message ``topic|text`` is published with ``server.publish``. The broker comes from the configuration
(``RT_SERVE_BROKER``), as an application's would; ``GET /stats`` shows the broker's counters.

    RT_SERVE_BROKER=redis://127.0.0.1:6379/0 PORT=0 python relay.py
"""

from __future__ import annotations

import os
from typing import Any

import attrs

import rt


def fetch(req: rt.Request, server: rt.Server) -> rt.Response | None:
    if req.path == "/stats":
        broker: Any = server.broker
        return rt.Response.json(
            {**attrs.asdict(broker.stats), "connected": broker.connected, "pid": os.getpid()}
        )
    topics = (req.query.get("topics") or "room").split(",")
    if server.upgrade(req, data={"topics": topics, "hello": "hello" in req.query}):
        return None
    return rt.Response("WebSocket only", status=400)


def on_open(ws: rt.ServerWebSocket) -> None:
    for topic in ws.data["topics"]:
        ws.subscribe(topic)
    if ws.data["hello"]:  # which process (worker) this socket landed on
        ws.send(f"pid {os.getpid()}")


def on_message(ws: rt.ServerWebSocket, message: str | bytes) -> None:
    text = message if isinstance(message, str) else message.decode()
    topic, _, body = text.partition("|")
    server.publish(topic, body)


server = rt.serve(
    fetch=fetch,
    websocket=rt.WebSocketHandler(open=on_open, message=on_message),
    port=int(os.environ.get("PORT", "0")),
)

if __name__ == "__main__":
    server.run()  # prints "rt.serve listening on URL"; RT_BACKEND picks asyncio or trio
