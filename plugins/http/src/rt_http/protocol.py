"""A sans-I/O WebSocket connection (RFC 6455, RFC 7692): bytes in, events and bytes to send out.

:class:`WebSocketProtocol` owns everything about one connection that is not I/O: its state (open, closing,
closed), the frame parser, fragmentation, UTF-8 validation, ``max_payload_length``, the closing handshake,
automatic pongs and permessage-deflate, for the server role and the client role (which masks what it sends
and expects unmasked frames). ``ServerWebSocket`` is an I/O shell around it; a client is another.

How it is used: feed received bytes to :meth:`~WebSocketProtocol.receive_data`, act on the events it
returns, and send what :meth:`~WebSocketProtocol.data_to_send` hands back (pongs, the reply to a close, the
close frame that ends a protocol violation). Outgoing messages are framed by :meth:`frame_message` and
friends, which return the bytes: the shell decides when (and whether, under backpressure) they are sent,
and compresses a message only when it has decided to send it, because compressing advances the
compression context the peer tracks (a compressed frame that is then dropped corrupts every later one).

Learned from the ``websockets`` package's ``protocol.py`` (a protocol object per connection, events out,
bytes out), built differently where bench/ws.py measured a reason:

- one flat parser loop over a ``bytearray`` instead of a generator per frame, and :meth:`whole_message` for
  the case nearly every message takes (one whole unfragmented frame per read), which returns the message's
  data without building any event object;
- a fragmented message is accumulated in one ``bytearray`` (millions of tiny fragments cost their payload,
  not an object each), and text is checked for UTF-8 incrementally, also inside a frame that is still
  arriving, so a bad byte fails the connection at once instead of after the rest of the frame;
- a compressed message larger than ``inflate_threshold`` is not inflated here: the parser stops after it and
  returns an :class:`InflateJob`, which the shell runs in a worker thread (inflating megabytes would stall
  every other connection on the event loop), then hands back with :meth:`resume`. Stopping keeps order:
  nothing after that message is parsed (or inflated, which matters with context takeover) before it.
"""

from __future__ import annotations

import codecs
import enum
import os
import struct
import threading
from typing import TYPE_CHECKING

import attrs

from rt_http import frames
from rt_http.frames import (
    CLOSE_ABNORMAL,
    CLOSE_INVALID_DATA,
    CLOSE_NO_STATUS,
    CLOSE_PROTOCOL_ERROR,
    CLOSE_TOO_BIG,
    OP_BINARY,
    OP_CLOSE,
    OP_CONTINUATION,
    OP_PING,
    OP_PONG,
    OP_TEXT,
    TOO_BIG_REASON,
    Close,
    Event,
    Fail,
    Message,
    Ping,
    Pong,
)

_unmask = frames.unmask

if TYPE_CHECKING:
    from rt_http.deflate import Session

__all__ = ["CLOSED", "CLOSING", "OPEN", "InflateJob", "Role", "WebSocketProtocol"]

# the states of the connection (the numbers of the spec's ready_state)
OPEN, CLOSING, CLOSED = 1, 2, 3

_DATA_OPCODES = (OP_TEXT, OP_BINARY)
_CONTROL_OPCODES = (OP_CLOSE, OP_PING, OP_PONG)
_U16 = struct.Struct("!H")
_U64 = struct.Struct("!Q")
_INVALID_UTF8 = "Received invalid UTF-8"
# Compressed messages at least this large (compressed bytes) are inflated off the event loop. bench/deflate.py
# (docs/benchmarks.md): inflating 64 KiB of compressed text takes 0.5-1 ms here (more when it inflates 10:1),
# several times a worker-thread round trip (50 us on a quiet machine, 270 us under load).
INFLATE_THRESHOLD = 64 * 1024


class Role(enum.Enum):
    SERVER = "server"  # receives masked frames, sends unmasked ones
    CLIENT = "client"  # receives unmasked frames, sends masked ones


@attrs.define(slots=True, eq=False)
class InflateJob:
    """A compressed message too large to inflate on the event loop: call :meth:`run` in a worker thread
    (it touches only the connection's inflater, which nothing else uses until :meth:`WebSocketProtocol.resume`),
    then pass the job to ``resume``."""

    protocol: WebSocketProtocol
    opcode: int
    payload: bytes
    result: Event | None = None

    def run(self) -> None:
        self.result = self.protocol._inflated(self.opcode, self.payload)


class WebSocketProtocol:
    """One WebSocket connection, without I/O. See the module docstring for how a shell drives it.

    After a :class:`~rt_http.frames.Fail` or the peer's :class:`~rt_http.frames.Close` the parser ignores
    further data messages; memory is bounded by one frame header plus ``max_payload_length`` (an oversized
    frame is refused from its header, before its payload is buffered).
    """

    __slots__ = (
        "_buffer",
        "_checked",
        "_compressed",
        "_decoder",
        "_deflater",
        "_fragment_opcode",
        "_fragments",
        "_inflater",
        "_masked_in",
        "_outgoing",
        "_paused",
        "_pending",
        "_session",
        "answer_pings",
        "close_code",
        "close_reason",
        "close_received",
        "close_sent",
        "done",
        "inflate_threshold",
        "max_payload_length",
        "role",
        "state",
    )

    def __init__(
        self,
        role: Role = Role.SERVER,
        *,
        max_payload_length: int = 16 * 1024 * 1024,
        deflate: Session | None = None,
        inflate_threshold: int | None = INFLATE_THRESHOLD,
    ) -> None:
        """``deflate``: what the handshake negotiated for permessage-deflate (None: off). ``inflate_threshold``:
        compressed messages of at least this many bytes come out as :class:`InflateJob` (None: never)."""
        self.role = role
        self.max_payload_length = max_payload_length
        self.state = OPEN
        self.answer_pings = True  # the shell turns this off while its send queue is over its limit
        self.inflate_threshold = inflate_threshold
        self.close_code: int | None = None  # the peer's close code (1005: none given; 1006: connection lost)
        self.close_reason = ""
        self.close_sent = False
        self.close_received = False
        self._session = deflate
        # ready-made compressors, or None until the first compressed message makes the socket's own (an idle
        # socket holds none: Session.deflate_with / inflate_with)
        self._deflater = deflate.deflater if deflate is not None else None
        self._inflater = deflate.inflater if deflate is not None else None
        self._masked_in = role is Role.SERVER
        self._buffer = bytearray()
        self._pending = 0  # bytes the buffer must hold before the frame at its start is complete
        self._checked = 0  # payload bytes of the (incomplete) frame at the buffer's start checked as UTF-8
        self._fragments = bytearray()
        self._fragment_opcode = 0
        self._compressed = False
        self._decoder: codecs.IncrementalDecoder | None = None
        self._outgoing: list[bytes] = []
        self._paused: InflateJob | None = None
        self.done = False  # no more data messages will be parsed

    # -- receiving ------------------------------------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray | memoryview) -> list[Event | InflateJob]:
        """Parse ``data``: the events it completes, in order. Replies it calls for (a pong, the answer to a
        close, the close frame of a violation) are queued for :meth:`data_to_send`."""
        whole = self.whole_message(data)
        if whole is not None:
            return [Message(whole)]
        return self.receive_general(data)

    def receive_general(self, data: bytes | bytearray | memoryview) -> list[Event | InflateJob]:
        """:meth:`receive_data` without trying :meth:`whole_message` first: for a caller that just did."""
        if self.done:
            return []
        buffer = self._buffer
        buffer += data
        if self._paused is not None or len(buffer) < self._pending:
            return []  # waiting for an inflate job, or for the rest of a frame whose header was checked
        self._pending = 0
        return self._parse()

    def receive_eof(self) -> None:
        """The peer closed the TCP connection: abnormal (1006) unless the closing handshake happened."""
        if self.close_code is None:
            self.close_code, self.close_reason = CLOSE_ABNORMAL, ""
        self.state = CLOSED
        self.done = True

    def resume(self, job: InflateJob) -> list[Event | InflateJob]:
        """The events after an :class:`InflateJob` has run: its message (or failure), then what was parsed
        from data that arrived meanwhile."""
        if job is not self._paused:
            raise ValueError("resume() takes the InflateJob this protocol is waiting for")
        self._paused = None
        if job.result is None:
            job.run()
        event = job.result
        assert event is not None
        if type(event) is Fail:
            return self._fail([], event.code, event.reason)
        events: list[Event | InflateJob] = [event]
        if not self.done and len(self._buffer) >= max(self._pending, 2):
            self._pending = 0
            events.extend(self._parse())
        return events

    def whole_message(self, data: bytes | bytearray | memoryview) -> str | bytes | None:
        """The message's data when ``data`` is exactly one whole unfragmented text or binary frame, masked
        as this role expects, without RSV bits and within ``max_payload_length``, and nothing is buffered, as
        nearly every message arrives; else ``None``: then pass ``data`` to :meth:`receive_general`, which
        parses it the general way (and reports what is wrong with it). Same checks, without copying ``data``
        into the buffer or building events: about 0.5 us for a 32-byte frame against 1.8 us, a tenth of an
        echo round trip."""
        size = len(data)
        if size < 2 or self._buffer or self._fragment_opcode or self.done:
            return None
        first, second = data[0], data[1]
        if first != 0x82 and first != 0x81:  # FIN + binary/text, no RSV
            return None
        length = second & 0x7F
        if self._masked_in:
            if not second & 0x80:
                return None
            header = 6
        else:
            if second & 0x80:
                return None
            header = 2
        if length == 126:
            header += 2
            if size < header:
                return None
            length = _U16.unpack_from(data, 2)[0]
        elif length == 127:
            return None  # over 64 KiB: the general path (and its 1009 check of a 64-bit length)
        if header + length != size or length > self.max_payload_length:
            return None
        if self._masked_in:
            mask = data[header - 4 : header]  # bytes from a stream: bytes() only for other buffers
            payload = _unmask(
                memoryview(data)[header:], mask if type(mask) is bytes else bytes(mask)
            )  # a view: one copy less
        else:
            payload = bytes(memoryview(data)[header:])
        if first == 0x82:
            return payload
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _parse(self) -> list[Event | InflateJob]:
        buffer = self._buffer
        events: list[Event | InflateJob] = []
        position = 0
        available = len(buffer)
        masked_in = self._masked_in
        mask_size = 4 if masked_in else 0
        while available - position >= 2:
            first, second = buffer[position], buffer[position + 1]
            if bool(second & 0x80) is not masked_in:
                reason = "Received unmasked frame" if masked_in else "Received masked frame"
                return self._fail(events, CLOSE_PROTOCOL_ERROR, reason)
            fin, opcode, length = first & 0x80, first & 0x0F, second & 0x7F
            rsv1 = first & 0x40
            if first & 0x30 or (
                rsv1 and (self._session is None or opcode not in _DATA_OPCODES)
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
            start = position + header + mask_size
            end = start + length
            if end > available:
                # wait for all of it before looking again: a frame trickling in (a slow or hostile peer)
                # would otherwise have its header parsed again for every piece. Text is the exception: what
                # is here already is checked now, so invalid UTF-8 fails at once, not once the frame is whole
                # (its header is parsed again per piece; each payload byte is still checked only once)
                if (opcode == OP_TEXT and not rsv1) or (
                    opcode == OP_CONTINUATION and self._decoder is not None
                ):
                    if available > start + self._checked and not self._check_partial(
                        buffer, position + header, start, available
                    ):
                        return self._fail(events, CLOSE_INVALID_DATA, _INVALID_UTF8)
                else:
                    self._pending = end - position
                break
            if masked_in:
                payload = _unmask(buffer[start:end], bytes(buffer[position + header : start]))
            else:
                payload = bytes(buffer[start:end])
            position = end
            checked, self._checked = self._checked, 0
            event = self._frame(fin, opcode, payload, rsv1, checked)
            if event is not None:
                events.append(event)
                kind = type(event)
                if kind is Fail:
                    self.done = True
                    return self._fail(events[:-1], event.code, event.reason)  # type: ignore[union-attr]
                if kind is InflateJob:
                    self._paused = event  # type: ignore[assignment]
                    break
                if kind is Close:
                    self.done = True
                    self._buffer = bytearray()
                    return events
        del buffer[:position]
        return events

    def _check_partial(self, buffer: bytearray, mask_at: int, start: int, available: int) -> bool:
        """Check as UTF-8 the payload bytes of an incomplete text frame not checked yet; False if invalid."""
        if self._decoder is None:  # the first piece of an unfragmented (or first) text frame
            self._decoder = codecs.getincrementaldecoder("utf-8")()
        checked = self._checked
        piece = buffer[start + checked : available]
        if self._masked_in:
            mask = bytes(buffer[mask_at : mask_at + 4])
            turn = checked % 4
            piece = _unmask(piece, mask[turn:] + mask[:turn])  # type: ignore[assignment]
        try:
            self._decoder.decode(piece, final=False)
        except UnicodeDecodeError:
            return False
        self._checked = checked + len(piece)
        return True

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
            if len(self._fragments) + length > self.max_payload_length:
                return CLOSE_TOO_BIG, TOO_BIG_REASON
            return None
        return CLOSE_PROTOCOL_ERROR, f"Received frame with reserved opcode {opcode}"

    def _frame(
        self, fin: int, opcode: int, payload: bytes, rsv1: int, checked: int
    ) -> Event | InflateJob | None:
        """One whole frame; ``checked``: how many leading payload bytes were already checked as UTF-8."""
        if opcode == OP_PING:
            if self.answer_pings and not self.close_sent:
                self._outgoing.append(self._encode(OP_PONG, payload))
            return Ping(payload)
        if opcode == OP_PONG:
            return Pong(payload)
        if opcode == OP_CLOSE:
            return self._close_frame(payload)
        if self.close_received:
            return None
        if opcode != OP_CONTINUATION and fin:  # an unfragmented message
            if rsv1:
                return self._inflate_or_job(opcode, payload)
            if opcode == OP_TEXT:
                decoder, self._decoder = self._decoder, None
                try:
                    if decoder is not None:  # it arrived in pieces: the first were checked already
                        decoder.decode(payload[checked:], final=True)
                    return Message(payload.decode("utf-8"))
                except UnicodeDecodeError:
                    return Fail(CLOSE_INVALID_DATA, _INVALID_UTF8)
            return Message(payload)
        if opcode != OP_CONTINUATION:  # the first frame of a fragmented message
            self._fragment_opcode = opcode
            self._compressed = bool(rsv1)
            if opcode == OP_TEXT and not rsv1 and self._decoder is None:
                self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._fragments += payload
        if self._decoder is not None:
            try:  # fail on the first bad fragment, not at the end of the message
                self._decoder.decode(payload[checked:] if checked else payload, final=bool(fin))
            except UnicodeDecodeError:
                return Fail(CLOSE_INVALID_DATA, _INVALID_UTF8)
        if not fin:
            return None
        data = bytes(self._fragments)
        opcode, compressed, text = self._fragment_opcode, self._compressed, self._decoder is not None
        self._fragments = bytearray()
        self._fragment_opcode, self._compressed, self._decoder = 0, False, None
        if compressed:
            return self._inflate_or_job(opcode, data)
        return Message(data.decode("utf-8") if text else data)

    def _inflate_or_job(self, opcode: int, payload: bytes) -> Event | InflateJob:
        threshold = self.inflate_threshold
        if threshold is not None and len(payload) >= threshold:
            return InflateJob(self, opcode, payload)
        return self._inflated(opcode, payload)

    def _inflated(self, opcode: int, payload: bytes) -> Event:
        from rt_http.deflate import InflateError

        inflater = self._inflater
        if inflater is None:  # the first compressed message: the socket's own inflater, made now
            session = self._session
            assert session is not None and session.inflate_with is not None
            inflater = self._inflater = session.inflate_with()
        try:
            data = inflater.decompress(payload, self.max_payload_length)
        except ValueError:  # the Compressor contract: more than max_size bytes
            return Fail(CLOSE_TOO_BIG, TOO_BIG_REASON)
        except InflateError:
            return Fail(CLOSE_INVALID_DATA, "Received invalid compressed data")
        except Exception:  # noqa: BLE001 - a third-party compressor's own error for corrupt data
            return Fail(CLOSE_INVALID_DATA, "Received invalid compressed data")
        if opcode == OP_TEXT:
            try:
                return Message(data.decode("utf-8"))
            except UnicodeDecodeError:
                return Fail(CLOSE_INVALID_DATA, _INVALID_UTF8)
        return Message(data)

    def _close_frame(self, payload: bytes) -> Event:
        """The peer's close frame: checked, answered (unless we closed first), and the end of the parse."""
        if not payload:
            code, reason = CLOSE_NO_STATUS, ""
        elif len(payload) == 1:
            return Fail(CLOSE_PROTOCOL_ERROR, "Received close frame with a 1-byte body")
        else:
            code = _U16.unpack_from(payload)[0]
            if not frames.valid_close_code(code):
                return Fail(CLOSE_PROTOCOL_ERROR, f"Received invalid close code {code}")
            try:
                reason = payload[2:].decode("utf-8")
            except UnicodeDecodeError:
                return Fail(CLOSE_INVALID_DATA, "Received invalid UTF-8 in close reason")
        self.close_received = True
        self.close_code, self.close_reason = code, reason
        if not self.close_sent:  # echo the code, as RFC 6455 5.5.1 suggests and the reference runtime does
            self._outgoing.append(self._close_bytes(code, ""))
        self.state = CLOSED
        return Close(code, reason)

    def _fail(self, events: list[Event | InflateJob], code: int, reason: str) -> list[Event | InflateJob]:
        """Fail the connection (RFC 6455 7.1.7): our close frame with ``code`` goes out, nothing more is read."""
        events.append(Fail(code, reason))
        self.done = True
        self._buffer = bytearray()
        self._fragments = bytearray()
        self._decoder = None
        if not self.close_sent:
            self._outgoing.append(self._close_bytes(code, reason))
        if self.close_code is None:
            self.close_code, self.close_reason = code, reason
        self.state = CLOSED
        return events

    # -- sending --------------------------------------------------------------------------------------------

    def data_to_send(self) -> list[bytes]:
        """The frames the protocol itself decided to send since the last call (pongs, close replies)."""
        out = self._outgoing
        if out:
            self._outgoing = []
        return out

    def frame_message(self, message: str | bytes | bytearray | memoryview, compress: bool = False) -> bytes:
        """The frame of one whole message (str as text, bytes-like as binary), compressed when asked and
        negotiated. Compress only what will be sent: it advances the context the peer inflates with."""
        opcode, payload = frames.message_payload(message)
        return self.frame_payload(opcode, payload, compress)

    def frame_payload(self, opcode: int, payload: bytes, compress: bool = False) -> bytes:
        if compress:
            deflater = self._deflater
            if deflater is None and self._session is not None and self._session.deflate_with is not None:
                deflater = self._deflater = self._session.deflate_with()  # the first compressed message
            if deflater is not None:
                return self._encode(opcode, deflater.compress(payload), rsv1=True)
        return self._encode(opcode, payload)

    @property
    def compresses(self) -> bool:
        """permessage-deflate was negotiated and this side may compress what it sends."""
        return self._session is not None and self._session.compresses

    def frame_ping(self, payload: str | bytes = b"") -> bytes:
        return self._encode(OP_PING, _control_payload(payload))

    def frame_pong(self, payload: str | bytes = b"") -> bytes:
        return self._encode(OP_PONG, _control_payload(payload))

    def frame_close(self, code: int = frames.CLOSE_NORMAL, reason: str = "") -> bytes:
        """Our close frame; the state becomes CLOSING until the peer's answer (or CLOSED if it closed first)."""
        if code != CLOSE_NO_STATUS and not frames.valid_close_code(code):
            raise ValueError(f"invalid close code {code}: 1000-1003, 1007-1014 or 3000-4999")
        if len(reason.encode("utf-8")) > 123:
            raise ValueError("close reason must be at most 123 bytes of UTF-8")
        self.state = CLOSED if self.close_received else CLOSING
        self._outgoing = []  # a pong not yet collected must not follow the close frame
        return self._close_bytes(code, reason)

    @property
    def close_expected(self) -> bool:
        """True once the closing handshake is complete (or failed): the transport should be closed now
        (by the server; a client waits a moment for the server to do so, RFC 6455 7.1.1)."""
        return self.state == CLOSED

    def _close_bytes(self, code: int, reason: str) -> bytes:
        self.close_sent = True
        if code == CLOSE_NO_STATUS:
            return self._encode(OP_CLOSE, b"")
        return self._encode(OP_CLOSE, _U16.pack(code) + reason.encode("utf-8"))

    def _encode(self, opcode: int, payload: bytes, rsv1: bool = False) -> bytes:
        if self._masked_in:  # the server: unmasked frames
            return frames.encode_frame(opcode, payload, rsv1=rsv1)
        return encode_masked_frame(opcode, payload, rsv1=rsv1)


class _MaskKeys:
    """Masking keys for client frames: 4 bytes each of ``os.urandom`` output, read 4 KiB at a time, so a client
    makes one ``getrandom`` system call per 1,024 frames instead of one per frame (it was one of the five
    system calls of an echo in bench/ws.py's client rows). They are the same strong random bytes RFC 6455 5.3
    asks for; a forked child drops the pool it inherited, so two processes never share keys. A lock makes the
    read-and-advance one step, so clients on event loops in different threads (or a free-threaded build) never
    get the same key; uncontended it costs about 50 ns per frame."""

    __slots__ = ("_lock", "_pool", "_position")

    def __init__(self) -> None:
        self._forget()
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        # a new lock too: the parent's could have been held by another thread at the fork
        self._lock = threading.Lock()
        self._pool, self._position = b"", 0

    def __call__(self) -> bytes:
        with self._lock:
            position = self._position
            pool = self._pool
            if position + 4 > len(pool):
                pool = self._pool = os.urandom(4096)
                position = 0
            self._position = position + 4
        return pool[position : position + 4]


mask_key = _MaskKeys()


def encode_masked_frame(opcode: int, payload: bytes, fin: bool = True, rsv1: bool = False) -> bytes:
    """One client-to-server frame, masked with a fresh random key (RFC 6455 5.3)."""
    length = len(payload)
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    if length < 126:
        header = bytes((first, 0x80 | length))
    elif length < 65536:
        header = bytes((first, 0x80 | 126)) + _U16.pack(length)
    else:
        header = bytes((first, 0x80 | 127)) + _U64.pack(length)
    key = mask_key()
    return header + key + _unmask(payload, key)


def _control_payload(payload: str | bytes) -> bytes:
    data = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    if len(data) > 125:
        raise ValueError("ping and pong payloads are limited to 125 bytes")
    return data
