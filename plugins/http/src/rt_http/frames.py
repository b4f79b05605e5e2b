"""A sans-I/O RFC 6455 frame codec for the server side: bytes in, events out; payloads in, frame bytes out.

Written by hand rather than using the ``websockets`` protocol layer for two measured reasons (bench/ws.py):
pub/sub must frame a message *once* and write the same bytes to many sockets, which a per-connection protocol
object cannot do, and a flat parser without generators or per-frame objects is several times faster per small
frame. It follows REFERENCE.md for close codes: 1002 for protocol errors, 1007 for bad UTF-8, 1009 for
messages over ``max_payload_length`` (checked from the header, before any payload is buffered).
"""

from __future__ import annotations

import codecs
import struct
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from rt_http.deflate import Inflater

OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_DATA_OPCODES = (OP_TEXT, OP_BINARY)
_CONTROL_OPCODES = (OP_CLOSE, OP_PING, OP_PONG)

CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_PROTOCOL_ERROR = 1002
CLOSE_NO_STATUS = 1005
CLOSE_ABNORMAL = 1006
CLOSE_INVALID_DATA = 1007
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL_ERROR = 1011
TOO_BIG_REASON = "Received too big message"

_U16 = struct.Struct("!H")
_U64 = struct.Struct("!Q")


def valid_close_code(code: int) -> bool:
    """Codes a peer may put on the wire (RFC 6455 7.4): 1000-1003, 1007-1014, 3000-4999."""
    return 1000 <= code <= 1003 or 1007 <= code <= 1014 or 3000 <= code <= 4999


@attrs.frozen(slots=True)
class Message:
    data: str | bytes


@attrs.frozen(slots=True)
class Ping:
    data: bytes


@attrs.frozen(slots=True)
class Pong:
    data: bytes


@attrs.frozen(slots=True)
class Close:
    """The peer sent a close frame. An empty body is reported as 1005, as the reference runtime does."""

    code: int
    reason: str


@attrs.frozen(slots=True)
class Fail:
    """The peer broke the protocol or a limit: the server must close with ``code`` and stop reading."""

    code: int
    reason: str


Event = Message | Ping | Pong | Close | Fail


def _unmask_python(payload: bytes | bytearray | memoryview, mask: bytes) -> bytes:
    """XOR ``payload`` with the 4-byte ``mask``; one big-int operation instead of a Python loop per byte."""
    length = len(payload)
    if not length:
        return b""
    repeated = mask * (length // 4 + 1)
    value = int.from_bytes(payload, "little") ^ int.from_bytes(repeated[:length], "little")
    return value.to_bytes(length, "little")


try:  # the C routine of the websockets package: 60x faster than the big-int XOR on 16 KiB (bench/ws.py)
    from websockets.speedups import apply_mask as unmask  # (bound directly: no wrapper call per frame)
except ImportError:  # a pure-Python install of websockets (no compiler on the platform)
    unmask = _unmask_python  # type: ignore[assignment]  # (the C one types its mask narrower)


def encode_frame(opcode: int, payload: bytes, fin: bool = True, rsv1: bool = False) -> bytes:
    """One unmasked (server-to-client) frame; ``rsv1`` marks a compressed message."""
    length = len(payload)
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    if length < 126:
        header = bytes((first, length))
    elif length < 65536:
        header = bytes((first, 126)) + _U16.pack(length)
    else:
        header = bytes((first, 127)) + _U64.pack(length)
    return header + payload


def encode_message(message: str | bytes | bytearray | memoryview) -> tuple[bytes, int]:
    """Frame a user message: str as text, bytes-like as binary. Returns (frame, payload length)."""
    opcode, payload = message_payload(message)
    return encode_frame(opcode, payload), len(payload)


def message_payload(message: str | bytes | bytearray | memoryview) -> tuple[int, bytes]:
    """(opcode, payload) of a user message: str as text, bytes-like as binary."""
    kind = type(message)
    if kind is bytes:  # the common cases first, without isinstance
        return OP_BINARY, message  # type: ignore[return-value]
    if kind is str:
        return OP_TEXT, message.encode("utf-8")  # type: ignore[union-attr]
    if isinstance(message, str):
        return OP_TEXT, message.encode("utf-8")
    if isinstance(message, (bytes, bytearray, memoryview)):
        return OP_BINARY, bytes(message)
    raise TypeError(f"a WebSocket message must be str or bytes-like, got {type(message).__name__}")


def encode_close(code: int, reason: str = "") -> bytes:
    if code == CLOSE_NO_STATUS:
        return encode_frame(OP_CLOSE, b"")
    return encode_frame(OP_CLOSE, _U16.pack(code) + reason.encode("utf-8"))


class FrameParser:
    """Turns client bytes into :data:`Event` objects.

    After a :class:`Fail` or :class:`Close` it ignores further input: the connection is over. Memory is
    bounded by one frame header plus ``max_payload_length``: an oversized frame is refused by its header.
    """

    __slots__ = (
        "max_payload_length",
        "_buffer",
        "_fragments",
        "_fragment_opcode",
        "_fragment_size",
        "_decoder",
        "_compressed",
        "_inflater",
        "_pending",
        "done",
    )

    def __init__(self, max_payload_length: int, inflater: Inflater | None = None) -> None:
        """``inflater``: permessage-deflate was negotiated, so RSV1 marks a compressed message."""
        self.max_payload_length = max_payload_length
        self._inflater = inflater
        self._compressed = False
        self._buffer = bytearray()
        self._pending = 0  # bytes the buffer must hold before the frame at its start is complete
        self._fragments: list[bytes] = []
        self._fragment_opcode = 0
        self._fragment_size = 0
        self._decoder: codecs.IncrementalDecoder | None = None
        self.done = False

    def feed(self, data: bytes) -> list[Event]:
        whole = self.whole_message(data)
        if whole is not None:
            return [Message(whole)]
        return self.feed_general(data)

    def feed_general(self, data: bytes) -> list[Event]:
        """:meth:`feed` without trying :meth:`whole_message` first: for a caller that just did."""
        if self.done:
            return []
        buffer = self._buffer
        buffer += data
        if len(buffer) < self._pending:  # the frame at the start, its header checked, is still incomplete
            return []
        self._pending = 0
        events: list[Event] = []
        position = 0
        available = len(buffer)
        while available - position >= 2:
            first, second = buffer[position], buffer[position + 1]
            if not second & 0x80:
                return self._fail(events, CLOSE_PROTOCOL_ERROR, "Received unmasked frame")
            fin, opcode, length = first & 0x80, first & 0x0F, second & 0x7F
            rsv1 = first & 0x40
            if first & 0x30 or (
                rsv1 and (self._inflater is None or opcode not in _DATA_OPCODES)
            ):  # RSV1 only marks the first frame of a compressed message, and only once negotiated
                return self._fail(events, CLOSE_PROTOCOL_ERROR, "Received frame with reserved bits set")
            header = 2
            if length == 126:
                if available - position < 4:
                    break
                length = _U16.unpack_from(buffer, position + 2)[0]
                header = 4
            elif length == 127:
                if available - position < 10:
                    break
                length = _U64.unpack_from(buffer, position + 2)[0]
                header = 10
                if length >> 63:
                    return self._fail(events, CLOSE_PROTOCOL_ERROR, "Invalid frame length")
            failure = self._check_header(fin, opcode, length)
            if failure is not None:
                return self._fail(events, *failure)
            end = position + header + 4 + length
            if end > available:
                # wait for all of it before looking again: a frame trickling in (a slow or hostile peer)
                # would otherwise have its header parsed again for every piece
                self._pending = end - position
                break
            mask = bytes(buffer[position + header : position + header + 4])
            payload = unmask(buffer[position + header + 4 : end], mask)
            position = end
            event = self._frame(fin, opcode, payload, rsv1)
            if event is not None:
                events.append(event)
                if isinstance(event, (Fail, Close)):
                    self.done = True
                    self._buffer = bytearray()
                    return events
        del buffer[:position]
        return events

    def whole_message(self, data: bytes) -> str | bytes | None:
        """The message's data when ``data`` is exactly one whole unfragmented text or binary frame, masked,
        without RSV bits and within ``max_payload_length``, and nothing is buffered, as nearly every client
        message arrives; else ``None``: then pass ``data`` to :meth:`feed_general`, which parses it the general way
        (and reports what is wrong with it). Same checks, without copying ``data`` into the buffer or
        building events: about 0.5 us for a 32-byte frame against 1.8 us, a tenth of an echo round trip."""
        size = len(data)
        if size < 6 or self._buffer or self._fragment_opcode or self.done:
            return None
        first, second = data[0], data[1]
        if (first != 0x82 and first != 0x81) or not second & 0x80:  # FIN + binary/text, no RSV; masked
            return None
        length = second & 0x7F
        header = 6
        if length == 126:
            if size < 8:
                return None
            length = _U16.unpack_from(data, 2)[0]
            header = 8
        elif length == 127:
            return None  # over 64 KiB: the general path (and its 1009 check of a 64-bit length)
        if header + length != size or length > self.max_payload_length:
            return None
        payload = unmask(memoryview(data)[header:], data[header - 4 : header])  # a view: one copy less
        if first == 0x82:
            return payload
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _check_header(self, fin: int, opcode: int, length: int) -> tuple[int, str] | None:
        if opcode in _CONTROL_OPCODES:
            if not fin:
                return CLOSE_PROTOCOL_ERROR, "Received fragmented control frame"
            if length > 125:
                return CLOSE_PROTOCOL_ERROR, "Received control frame longer than 125 bytes"
            return None
        if opcode in _DATA_OPCODES:
            if self._fragment_opcode:
                return CLOSE_PROTOCOL_ERROR, "Received new data frame inside a fragmented message"
            if length > self.max_payload_length:
                return CLOSE_TOO_BIG, TOO_BIG_REASON
            return None
        if opcode == OP_CONTINUATION:
            if not self._fragment_opcode:
                return CLOSE_PROTOCOL_ERROR, "Received continuation frame without a message to continue"
            if self._fragment_size + length > self.max_payload_length:
                return CLOSE_TOO_BIG, TOO_BIG_REASON
            return None
        return CLOSE_PROTOCOL_ERROR, f"Received frame with reserved opcode {opcode}"

    def _frame(self, fin: int, opcode: int, payload: bytes, rsv1: int = 0) -> Event | None:
        if opcode == OP_PING:
            return Ping(payload)
        if opcode == OP_PONG:
            return Pong(payload)
        if opcode == OP_CLOSE:
            return self._close(payload)
        if opcode != OP_CONTINUATION and fin:
            if rsv1:
                return self._inflated(opcode, payload)
            if opcode == OP_TEXT:
                try:
                    return Message(payload.decode("utf-8"))
                except UnicodeDecodeError:
                    return Fail(CLOSE_INVALID_DATA, "Received invalid UTF-8")
            return Message(payload)
        if opcode != OP_CONTINUATION:
            self._fragment_opcode = opcode
            self._fragment_size = 0
            self._compressed = bool(rsv1)
            text = opcode == OP_TEXT and not rsv1  # compressed text is checked once inflated
            self._decoder = codecs.getincrementaldecoder("utf-8")() if text else None
        self._fragments.append(payload)
        self._fragment_size += len(payload)
        if self._decoder is not None:
            try:
                self._decoder.decode(payload, final=bool(fin))  # fail early on the first bad fragment
            except UnicodeDecodeError:
                return Fail(CLOSE_INVALID_DATA, "Received invalid UTF-8")
        if not fin:
            return None
        data = b"".join(self._fragments)
        opcode, compressed = self._fragment_opcode, self._compressed
        self._fragments, self._fragment_opcode, self._fragment_size, self._decoder = [], 0, 0, None
        self._compressed = False
        if compressed:
            return self._inflated(opcode, data)
        return Message(data.decode("utf-8") if opcode == OP_TEXT else data)

    def _inflated(self, opcode: int, payload: bytes) -> Event:
        from rt_http.deflate import InflateError

        assert self._inflater is not None
        try:
            data = self._inflater.inflate(payload, self.max_payload_length)
        except InflateError:
            return Fail(CLOSE_INVALID_DATA, "Received invalid compressed data")
        if data is None:
            return Fail(CLOSE_TOO_BIG, TOO_BIG_REASON)
        if opcode == OP_TEXT:
            try:
                return Message(data.decode("utf-8"))
            except UnicodeDecodeError:
                return Fail(CLOSE_INVALID_DATA, "Received invalid UTF-8")
        return Message(data)

    @staticmethod
    def _close(payload: bytes) -> Event:
        if not payload:
            return Close(CLOSE_NO_STATUS, "")
        if len(payload) == 1:
            return Fail(CLOSE_PROTOCOL_ERROR, "Received close frame with a 1-byte body")
        code = _U16.unpack_from(payload)[0]
        if not valid_close_code(code):
            return Fail(CLOSE_PROTOCOL_ERROR, f"Received invalid close code {code}")
        try:
            reason = payload[2:].decode("utf-8")
        except UnicodeDecodeError:
            return Fail(CLOSE_INVALID_DATA, "Received invalid UTF-8 in close reason")
        return Close(code, reason)

    def _fail(self, events: list[Event], code: int, reason: str) -> list[Event]:
        events.append(Fail(code, reason))
        self.done = True
        self._buffer = bytearray()
        return events
