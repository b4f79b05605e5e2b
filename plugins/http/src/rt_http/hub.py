"""What upgraded WebSockets need from their server, as one small object: the server owns it, sockets use it.

``ServerWebSocket`` used to reach into ``Server``'s private members (its task group, topic registry and set
of open sockets), which tied websocket.py and server.py into an import circle. The hub holds exactly that
shared state, so the WebSocket layer depends on this module only and the server on both.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import ByteStream, TaskGroup

from rt_http.pubsub import Topics

if TYPE_CHECKING:
    from rt_http.websocket import ServerWebSocket

log = logging.getLogger("rt.serve")


class SocketHub:
    """The open sockets, their topics, and where their background tasks run."""

    __slots__ = ("all_closed", "close_stream", "sockets", "task_group", "topics")

    def __init__(self, close_stream: Callable[[ByteStream], Awaitable[None]]) -> None:
        """``close_stream``: how the server closes a connection's stream (bounded, cut when it exits)."""
        self.topics = Topics()
        self.sockets: dict[ServerWebSocket, None] = {}
        self.task_group: TaskGroup | None = None  # set while the server runs
        self.all_closed: anyio.Event | None = None  # set when the last socket closes, if someone waits
        self.close_stream = close_stream

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` in the server's task group (a coroutine argument is closed if it has stopped)."""
        if self.task_group is not None:
            self.task_group.start_soon(fn, *args)
            return
        log.warning("a coroutine handler was called after the server stopped; it did not run")
        for arg in args:
            if inspect.iscoroutine(arg):
                arg.close()

    def socket_closed(self, ws: ServerWebSocket) -> None:
        self.sockets.pop(ws, None)
        if not self.sockets and self.all_closed is not None:
            self.all_closed.set()
