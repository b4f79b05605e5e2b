"""The sans-I/O frame codec and parser (rt_http.protocol) alone: every close code of REFERENCE.md, then a hypothesis fuzz."""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rt_http import frames
from rt_http.frames import Close, Fail, Message, Ping, Pong
from rt_http.protocol import WebSocketProtocol


def FrameParser(limit: int) -> WebSocketProtocol:  # noqa: N802  (the parser's former name)
    return WebSocketProtocol(max_payload_length=limit)


def masked(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, mask: bool = True) -> bytes:
    first = (0x80 if fin else 0) | rsv | opcode
    length = len(payload)
    bit = 0x80 if mask else 0
    if length < 126:
        header = bytes((first, bit | length))
    elif length < 65536:
        header = bytes((first, bit | 126)) + struct.pack("!H", length)
    else:
        header = bytes((first, bit | 127)) + struct.pack("!Q", length)
    if not mask:
        return header + payload
    key = os.urandom(4)
    return header + key + frames.unmask(payload, key)


def parse(data: bytes, limit: int = 1 << 20) -> list[frames.Event]:
    return FrameParser(limit).receive_data(data)


def test_text_binary_ping_pong_and_sizes() -> None:
    big = os.urandom(70000)
    events = parse(
        masked(1, "héllo".encode())
        + masked(2, b"\x00\x01")
        + masked(9, b"p")
        + masked(10, b"q")
        + masked(2, big)
        + masked(2, b"x" * 300)
    )
    assert events == [
        Message("héllo"),
        Message(b"\x00\x01"),
        Ping(b"p"),
        Pong(b"q"),
        Message(big),
        Message(b"x" * 300),
    ]


def test_byte_at_a_time_feeding_gives_the_same_events() -> None:
    data = (
        masked(1, b"abc", fin=False) + masked(9, b"") + masked(0, b"def") + masked(8, struct.pack("!H", 1000))
    )
    parser = FrameParser(100)
    events = [event for byte in data for event in parser.receive_data(bytes([byte]))]
    assert events == [Ping(b""), Message("abcdef"), Close(1000, "")]


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (masked(1, b"hi", mask=False), 1002),  # unmasked client frame
        (masked(1, b"hi", rsv=0x40), 1002),  # RSV1 without compression
        *[(masked(op, b""), 1002) for op in (3, 4, 5, 6, 7, 11, 12, 13, 14, 15)],  # reserved opcodes
        (masked(9, b"", fin=False), 1002),  # fragmented control frame
        (masked(9, b"x" * 126), 1002),  # control frame over 125 bytes
        (masked(0, b"stray"), 1002),  # continuation with nothing to continue
        (masked(1, b"a", fin=False) + masked(1, b"b"), 1002),  # data frame inside a fragmented message
        *[(masked(8, struct.pack("!H", c)), 1002) for c in (999, 1005, 1006, 5000)],
        (masked(8, b"\x03"), 1002),  # 1-byte close body
        (masked(1, b"\xff\xfe"), 1007),  # invalid UTF-8 in a text frame
        (masked(1, b"\xe2\x82", fin=False) + masked(0, b"\x28"), 1007),  # invalid across fragments
        (masked(8, struct.pack("!H", 1000) + b"\xff"), 1007),  # invalid UTF-8 in the close reason
    ],
)
def test_violations_get_their_close_code(data: bytes, code: int) -> None:
    events = parse(data)
    assert isinstance(events[-1], Fail) and events[-1].code == code
    assert not any(isinstance(e, Message) for e in events)


def test_empty_close_is_1005_and_reason_is_kept() -> None:
    assert parse(masked(8, b"")) == [Close(1005, "")]
    assert parse(masked(8, struct.pack("!H", 4001) + "bye ✓".encode())) == [Close(4001, "bye ✓")]


def test_too_big_is_refused_from_the_header_before_buffering() -> None:
    parser = FrameParser(10)
    header_only = masked(2, b"x" * 11)[:6]  # header and mask: the payload never arrives
    assert parser.receive_data(header_only) == [Fail(1009, "Received too big message")]
    fragmented = FrameParser(10)
    events = fragmented.receive_data(masked(2, b"123456", fin=False) + masked(0, b"78901"))
    assert events == [Fail(1009, "Received too big message")]


def test_nothing_is_parsed_after_the_end() -> None:
    parser = FrameParser(100)
    assert parser.receive_data(masked(8, b"") + masked(1, b"late")) == [Close(1005, "")]
    assert parser.receive_data(masked(1, b"later")) == []


def test_encoder_lengths_and_close() -> None:
    for size in (0, 125, 126, 65535, 65536):
        frame = frames.encode_frame(2, b"z" * size)
        assert frame.endswith(b"z" * size) and frame[0] == 0x82
    assert frames.encode_message("é") == (b"\x81\x02" + "é".encode(), 2)
    assert frames.encode_close(1000, "ok") == b"\x88\x04\x03\xe8ok"
    with pytest.raises(TypeError, match="str or bytes-like"):
        frames.encode_message(42)  # type: ignore[arg-type]


_frame = st.builds(
    masked,
    st.sampled_from([0, 1, 2, 3, 8, 9, 10, 11]),
    st.binary(max_size=300),
    fin=st.booleans(),
    rsv=st.sampled_from([0, 0, 0, 0x40, 0x10]),
    mask=st.booleans() | st.just(True),
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(_frame, max_size=6), st.binary(max_size=64), st.integers(0, 2000), st.integers(1, 50))
def test_fuzz_random_and_mutated_frames_never_crash(
    frame_list: list[bytes], junk: bytes, flip: int, chunk: int
) -> None:
    """Random, mutated and junk-suffixed streams fed in random chunk sizes: only Events come out, the parser
    stops at the first Fail/Close, and every Fail carries a close code the server may send."""
    data = bytearray(b"".join(frame_list) + junk)
    if data:
        data[flip % len(data)] ^= 0xFF
    parser = FrameParser(200)
    events: list[frames.Event] = []
    for start in range(0, len(data), chunk):
        events.extend(parser.receive_data(bytes(data[start : start + chunk])))
    enders = [i for i, e in enumerate(events) if isinstance(e, (Fail, Close))]
    assert len(enders) <= 1 and (not enders or enders[0] == len(events) - 1)
    for event in events:
        assert isinstance(event, (Message, Ping, Pong, Close, Fail))
        if isinstance(event, Fail):
            assert event.code in (1002, 1007, 1009)
        if isinstance(event, Message):
            assert len(event.data) <= 200 * 4  # text length in chars never exceeds the byte limit
    assert len(parser._buffer) <= 14 + 200  # never more than one frame header plus the limit is kept


# no deadline and no speed health check: a loaded machine can stall one example past hypothesis' 200 ms
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000), st.binary(min_size=4, max_size=4))
def test_the_c_and_python_unmask_agree(payload: bytes, mask: bytes) -> None:
    expected = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    assert frames.unmask(payload, mask) == frames._unmask_python(payload, mask) == expected


class _GeneralOnly(WebSocketProtocol):
    """The parser with its fast path for a lone whole frame switched off."""

    def whole_message(self, data: bytes | bytearray | memoryview) -> str | bytes | None:
        return None


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    opcode=st.sampled_from([0, 1, 2, 3, 8, 9, 10, 15]),
    payload=st.binary(max_size=300) | st.sampled_from([b"\xff\xfe", "héllo".encode(), b"x" * 70000]),
    fin=st.booleans(),
    rsv=st.sampled_from([0, 0, 0x40, 0x20, 0x10]),
    mask=st.booleans() | st.just(True),
    cut=st.integers(-3, 3),
    flip=st.integers(0, 70_010 * 8),
    limit=st.sampled_from([0, 10, 125, 126, 300, 70000]),
    fragmented=st.booleans(),
    cuts=st.lists(st.integers(1, 70_100), max_size=6),
)
def test_the_fast_path_for_a_whole_frame_agrees_with_the_general_parser(
    opcode: int,
    payload: bytes,
    fin: bool,
    rsv: int,
    mask: bool,
    cut: int,
    flip: int,
    limit: int,
    fragmented: bool,
    cuts: list[int],
) -> None:
    """whole_message() (which feed() and the server's reader try first) takes a frame only when the general
    path would give exactly that one message; everything else it leaves to the general path. And the same
    bytes fed in pieces give the same events (the general path waits for a frame's last piece)."""
    data = bytearray(masked(opcode, payload, fin=fin, rsv=rsv, mask=mask))
    if cut > 0:
        data += os.urandom(cut)  # trailing bytes: not a lone whole frame
    elif cut < 0:
        del data[cut:]  # truncated
    if data and flip % 3 == 0:
        data[flip // 8 % len(data)] ^= 1 << (flip % 8)
    fast, general, pieces = FrameParser(limit), _GeneralOnly(max_payload_length=limit), FrameParser(limit)
    if fragmented:  # a fragmented message in progress: a lone frame can only continue it
        for parser in (fast, general, pieces):
            parser.receive_data(masked(2, b"start", fin=False))
    taken = fast.whole_message(bytes(data))
    events = general.receive_data(bytes(data))
    if taken is not None:
        assert events == [Message(taken)]
    assert fast.receive_data(bytes(data)) == events  # feed() itself agrees too, fast path or not
    bounds = [0, *sorted({c % (len(data) + 1) for c in cuts}), len(data)]
    assert [
        e for a, b in zip(bounds, bounds[1:], strict=False) for e in pieces.receive_data(bytes(data[a:b]))
    ] == events
