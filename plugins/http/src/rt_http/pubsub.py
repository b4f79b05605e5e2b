"""Topic registry and fan-out for ``server.publish`` and ``ws.publish``.

A message is framed once; the same ``bytes`` object is queued on every subscriber (one list append each, no
await), and each socket's writer sends everything queued in a loop turn in one write. Empty topics are
deleted as soon as their last subscriber leaves, so subscribe/close cycles leave nothing behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rt_http import frames

if TYPE_CHECKING:
    from rt_http.websocket import ServerWebSocket


class Topics:
    __slots__ = ("_subscribers",)

    def __init__(self) -> None:
        self._subscribers: dict[str, dict[ServerWebSocket, None]] = {}

    def add(self, topic: str, ws: ServerWebSocket) -> None:
        subscribers = self._subscribers.get(topic)
        if subscribers is None:
            subscribers = self._subscribers[topic] = {}
        subscribers[ws] = None

    def remove(self, topic: str, ws: ServerWebSocket) -> None:
        subscribers = self._subscribers.get(topic)
        if subscribers is not None:
            subscribers.pop(ws, None)
            if not subscribers:
                del self._subscribers[topic]

    def count(self, topic: str) -> int:
        subscribers = self._subscribers.get(topic)
        return len(subscribers) if subscribers else 0

    def __len__(self) -> int:
        return len(self._subscribers)

    def publish(
        self,
        topic: str,
        message: str | bytes | bytearray | memoryview,
        exclude: ServerWebSocket | None = None,
        compress: bool = False,
    ) -> int:
        """Payload length if some subscriber took it, ``-1`` if one only queued it over its limit, else 0.

        With ``compress``, sockets on the server's ``shared`` compressor get one compressed frame, made
        once; a socket with its own compressor (whose window the client tracks) gets its own; the rest
        get the plain one.
        """
        opcode, payload = frames.message_payload(message)
        length = len(payload)
        subscribers = self._subscribers.get(topic)
        if not subscribers:
            return 0
        frame = frames.encode_frame(opcode, payload)
        shared_frame: bytes | None = None
        accepted = backpressured = False
        for ws in tuple(subscribers):
            if ws is exclude:
                continue
            session = ws._deflate
            if not compress or session is None:
                data = frame
            elif session.shared:
                if shared_frame is None:
                    shared_frame = ws._compressed_frame(opcode, payload)
                data = shared_frame
            else:
                data = ws._compressed_frame(opcode, payload)
            result = ws._send_frame(data, length)
            if result > 0:
                accepted = True
            elif result < 0:
                backpressured = True
        if accepted:
            return length or len(frame)
        return -1 if backpressured else 0
