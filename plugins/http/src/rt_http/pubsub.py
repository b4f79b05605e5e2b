"""Topic registry and fan-out for ``server.publish`` and ``ws.publish``.

A message is framed once; the same ``bytes`` object is queued on every subscriber (one list append each, no
await), and each socket's writer sends everything queued in a loop turn in one write. The fan-out goes
through the socket's package-internal ``queue_frame``/``queue_compressed`` (what ``send`` uses too); with
``compress`` its ``deflate_session`` chooses the frame. Empty topics are deleted as soon as their last
subscriber leaves, so subscribe/close cycles leave nothing behind.

With a broker attached (``rt.serve(broker=...)``, docs/scaling.md) a topic's first subscriber and its last
leaving tell the broker which topics this process listens to, and every publish is delivered here first and
then handed to the broker for the other processes; what the broker brings from them goes through
:meth:`Topics.deliver`, which delivers locally only. The broker's calls only queue, so none of this waits.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from rt_http import frames

if TYPE_CHECKING:
    from rt.interfaces import Broker
    from rt_http.websocket import ServerWebSocket

log = logging.getLogger("rt.serve")


class Topics:
    __slots__ = ("_subscribers", "broker")

    def __init__(self) -> None:
        self._subscribers: dict[str, dict[ServerWebSocket, None]] = {}
        self.broker: Broker | None = None

    def add(self, topic: str, ws: ServerWebSocket) -> None:
        subscribers = self._subscribers.get(topic)
        if subscribers is None:
            subscribers = self._subscribers[topic] = {}
            if self.broker is not None:
                self.broker.subscribe(topic)
        subscribers[ws] = None

    def remove(self, topic: str, ws: ServerWebSocket) -> None:
        subscribers = self._subscribers.get(topic)
        if subscribers is not None:
            subscribers.pop(ws, None)
            if not subscribers:
                del self._subscribers[topic]
                if self.broker is not None:
                    self.broker.unsubscribe(topic)

    def topics(self) -> list[str]:
        return list(self._subscribers)

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
        once (it keeps no context, so a socket that drops it garbles nothing); a socket with its own
        compressor (whose window the client tracks) gets its own, compressed only if the socket takes it;
        the rest get the plain one.
        """
        opcode, payload = frames.message_payload(message)
        broker = self.broker
        if broker is None:
            return self._fanout(topic, opcode, payload, exclude, compress)
        if len(payload) > broker.max_message_bytes:
            raise ValueError(
                f"message of {len(payload)} bytes is over the broker's limit of {broker.max_message_bytes} "
                f"bytes; nothing was published (raise [redis] max_message_bytes, or send less)"
            )
        result = self._fanout(topic, opcode, payload, exclude, compress)
        broker.publish(topic, payload, is_text=opcode == frames.OP_TEXT)
        return result

    def deliver(self, topic: str, payload: bytes, is_text: bool) -> None:
        """A message another process published, brought by the broker: to local subscribers only."""
        if is_text:
            try:
                payload.decode("utf-8")  # a browser closes the socket on invalid UTF-8 in a text frame
            except UnicodeDecodeError:
                log.warning("the broker brought invalid UTF-8 as text on topic %r; dropped", topic)
                return
        self._fanout(topic, frames.OP_TEXT if is_text else frames.OP_BINARY, payload, None, False)

    def _fanout(
        self,
        topic: str,
        opcode: int,
        payload: bytes,
        exclude: ServerWebSocket | None,
        compress: bool,
    ) -> int:
        length = len(payload)
        subscribers = self._subscribers.get(topic)
        if not subscribers:
            return 0
        frame = frames.encode_frame(opcode, payload)
        accepted = backpressured = False
        if not compress:  # the common case: the same frame for everyone, one call per subscriber
            for ws in tuple(subscribers):
                if ws is exclude:
                    continue
                result = ws.queue_frame(frame, length)
                if result > 0:
                    accepted = True
                elif result < 0:
                    backpressured = True
        else:
            shared_frame: bytes | None = None
            for ws in tuple(subscribers):
                if ws is exclude:
                    continue
                session = ws.deflate_session
                if session is None:
                    result = ws.queue_frame(frame, length)
                elif session.shared and session.deflater is not None:
                    if shared_frame is None:
                        compressed = session.deflater.compress(payload)
                        shared_frame = frames.encode_frame(opcode, compressed, rsv1=True)
                    result = ws.queue_frame(shared_frame, length)
                elif session.deflate_with is not None:
                    result = ws.queue_compressed(opcode, payload, length)
                else:  # negotiated, but this server does not compress (compress: "disable")
                    result = ws.queue_frame(frame, length)
                if result > 0:
                    accepted = True
                elif result < 0:
                    backpressured = True
        if accepted:
            return length or len(frame)
        return -1 if backpressured else 0
