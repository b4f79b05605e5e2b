"""The sans-I/O WebSocket protocol object, without sockets: both roles, the closing handshake, automatic
pongs, incremental UTF-8, fragment memory, compression, and inflating off the event loop (InflateJob)."""

from __future__ import annotations

import os
import struct
import tracemalloc
import zlib

import pytest

from rt.interfaces import CompressorOptions
from rt_http import frames
from rt_http.deflate import Session, builtin_compressor
from rt_http.frames import Close, Fail, Message, Ping
from rt_http.protocol import CLOSED, CLOSING, OPEN, InflateJob, Role, WebSocketProtocol


def masked(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, key: bytes | None = None) -> bytes:
    """A client frame (masked), built by hand so the tests do not depend on the code under test."""
    first = (0x80 if fin else 0) | rsv | opcode
    length = len(payload)
    if length < 126:
        header = bytes((first, 0x80 | length))
    elif length < 65536:
        header = bytes((first, 0x80 | 126)) + struct.pack("!H", length)
    else:
        header = bytes((first, 0x80 | 127)) + struct.pack("!Q", length)
    key = key or os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def plain(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0) -> bytes:
    """A server frame (unmasked)."""
    return frames.encode_frame(opcode, payload, fin=fin, rsv1=bool(rsv))


def unmasked_payload(frame: bytes) -> tuple[int, bytes]:
    """(opcode, payload) of a masked frame, as a server would read it."""
    length, offset = frame[1] & 0x7F, 2
    if length == 126:
        length, offset = struct.unpack("!H", frame[2:4])[0], 4
    elif length == 127:
        length, offset = struct.unpack("!Q", frame[2:10])[0], 10
    key = frame[offset : offset + 4]
    body = frame[offset + 4 : offset + 4 + length]
    return frame[0] & 0x0F, bytes(b ^ key[i % 4] for i, b in enumerate(body))


def test_server_role_answers_pings_and_closes_and_reports_states() -> None:
    server = WebSocketProtocol(Role.SERVER)
    assert server.state == OPEN
    events = server.receive_data(masked(1, b"hi") + masked(9, b"p1"))
    assert events == [Message("hi"), Ping(b"p1")]
    assert server.data_to_send() == [plain(10, b"p1")]  # the automatic pong
    assert server.data_to_send() == []
    assert server.receive_data(masked(8, struct.pack("!H", 1001) + b"bye")) == [Close(1001, "bye")]
    assert server.data_to_send() == [plain(8, struct.pack("!H", 1001))]  # the code echoed
    assert server.state == CLOSED and server.close_expected
    assert (server.close_code, server.close_reason) == (1001, "bye")
    assert server.receive_data(masked(1, b"late")) == []


def test_we_close_first_then_the_peer_answers() -> None:
    server = WebSocketProtocol(Role.SERVER)
    server.receive_data(masked(9, b""))  # a pong waits in data_to_send ...
    assert server.frame_close(1008, "policy") == plain(8, struct.pack("!H", 1008) + b"policy")
    assert server.state == CLOSING and not server.close_expected
    assert server.data_to_send() == []  # ... and is dropped: nothing may follow our close frame
    assert server.receive_data(masked(1, b"still data")) == [Message("still data")]
    assert server.receive_data(masked(8, struct.pack("!H", 1008))) == [Close(1008, "")]
    assert server.data_to_send() == []  # no second close frame
    assert server.state == CLOSED


@pytest.mark.parametrize("code", [1000, 1001, 1002, 1003, 1007, 1008, 1011, 1014, 3000, 4999])
def test_every_valid_close_code_is_accepted(code: int) -> None:
    assert WebSocketProtocol().frame_close(code)[2:4] == struct.pack("!H", code)


@pytest.mark.parametrize("code", [999, 1004, 1006, 1015, 2999, 5000])
def test_invalid_close_codes_are_refused(code: int) -> None:
    with pytest.raises(ValueError, match="invalid close code"):
        WebSocketProtocol().frame_close(code)


def test_1005_means_a_close_frame_without_a_body() -> None:
    assert WebSocketProtocol().frame_close(1005) == plain(8, b"")


def test_a_violation_queues_our_close_frame_and_stops_parsing() -> None:
    server = WebSocketProtocol(Role.SERVER)
    assert server.receive_data(plain(1, b"unmasked")) == [Fail(1002, "Received unmasked frame")]
    assert server.data_to_send() == [plain(8, struct.pack("!H", 1002) + b"Received unmasked frame")]
    assert server.state == CLOSED and server.receive_data(masked(1, b"x")) == []


def test_client_role_masks_what_it_sends_and_refuses_masked_frames() -> None:
    client = WebSocketProtocol(Role.CLIENT)
    frame = client.frame_message("hé")
    assert frame[1] & 0x80 and unmasked_payload(frame) == (1, "hé".encode())
    assert frame != client.frame_message("hé")  # a fresh key per frame
    assert client.receive_data(plain(2, b"\x00\x01") + plain(9, b"?")) == [Message(b"\x00\x01"), Ping(b"?")]
    [pong] = client.data_to_send()
    assert unmasked_payload(pong) == (10, b"?")
    big = os.urandom(70_000)
    assert client.receive_data(plain(2, big)) == [Message(big)]
    assert client.receive_data(masked(1, b"x")) == [Fail(1002, "Received masked frame")]


def _zlib() -> object:
    """The built-in compressor (context kept), as the rt_register_compressors registry hands it out."""
    return builtin_compressor(CompressorOptions())


def test_a_client_and_a_server_talk_through_their_protocol_objects_compressed() -> None:
    server = WebSocketProtocol(Role.SERVER, deflate=Session(_zlib(), _zlib(), False))
    client = WebSocketProtocol(Role.CLIENT, deflate=Session(_zlib(), _zlib(), False))
    for index in range(5):  # context takeover both ways must line up message after message
        text = f"message {index} " + "abc" * 300
        to_server = client.frame_message(text, compress=True)
        assert to_server[0] & 0x40 and len(to_server) < len(text)
        assert server.receive_data(to_server) == [Message(text)]
        to_client = server.frame_message(text.encode(), compress=True)
        assert client.receive_data(to_client) == [Message(text.encode())]
    closing = client.frame_close(1000)
    assert server.receive_data(closing) == [Close(1000, "")]
    assert client.receive_data(b"".join(server.data_to_send())) == [Close(1000, "")]
    assert client.state == server.state == CLOSED


@pytest.mark.parametrize("split", [1, 7, 1000])
def test_invalid_utf8_fails_before_the_rest_of_the_frame_arrives(split: int) -> None:
    """Autobahn 6.4.3/6.4.4: a text frame whose first bytes are already invalid must fail the connection
    then, not once the (long) rest of the frame has arrived."""
    payload = "κόσμε".encode() + b"\xf4\x90\x80\x80" + b"edited" * 200  # U+110000: never valid
    frame = masked(1, payload)
    upto = 6 + len("κόσμε".encode()) + 4  # header, mask, the valid part and the bad sequence
    server = WebSocketProtocol()
    events = []
    for start in range(0, upto, split):
        events += server.receive_data(frame[start : min(start + split, upto)])
    assert events == [Fail(1007, "Received invalid UTF-8")]


def test_invalid_utf8_in_a_fragment_still_arriving_fails_at_once() -> None:
    server = WebSocketProtocol()
    assert server.receive_data(masked(1, "héllo".encode(), fin=False)) == []
    continuation = masked(0, b"ok \xc3\x28 and more " * 50)
    assert server.receive_data(continuation[:20]) == [Fail(1007, "Received invalid UTF-8")]


def test_valid_text_arriving_byte_by_byte_is_delivered_once_whole() -> None:
    text = "naïve café ✓ " * 30
    frame = masked(1, text.encode(), fin=False) + masked(9, b"") + masked(0, "∑ end".encode())
    server = WebSocketProtocol()
    events = [event for byte in frame for event in server.receive_data(bytes([byte]))]
    assert events == [Ping(b""), Message(text + "∑ end")]


def test_millions_of_tiny_fragments_cost_their_payload_not_an_object_each() -> None:
    """Defect 3, scaled down: 300,000 two-byte fragments (600 KB of payload) used to keep 300,000 bytes
    objects (about 35 MB); now they are accumulated in one buffer."""
    count = 300_000
    piece = masked(0, b"ab", fin=False, key=b"\x01\x02\x03\x04")
    server = WebSocketProtocol(max_payload_length=16 * 1024 * 1024)
    assert server.receive_data(masked(2, b"ab", fin=False)) == []
    batch = piece * 1000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(count // 1000):
            assert server.receive_data(batch) == []
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 4 * 2 * count, f"{grown} bytes held for {2 * count} bytes of payload"
    [message] = server.receive_data(masked(0, b"!"))
    assert message == Message(b"ab" * (count + 1) + b"!")


def test_a_fragmented_message_over_the_limit_is_refused_from_the_header() -> None:
    server = WebSocketProtocol(max_payload_length=10)
    events = server.receive_data(masked(2, b"123456", fin=False) + masked(0, b"78901"))
    assert events == [Fail(1009, "Received too big message")]


def compress(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-15)
    out = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
    return out[:-4]


def test_a_big_compressed_message_is_an_inflate_job_and_nothing_after_it_is_parsed_before_it() -> None:
    server = WebSocketProtocol(deflate=Session(None, _zlib(), False), inflate_threshold=1000)
    compressor = zlib.compressobj(wbits=-15)

    def deflate(data: bytes) -> bytes:  # context takeover: later messages refer back to earlier ones
        return (compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH))[:-4]

    big = os.urandom(3000)
    small = big[:500] + b"again"  # compresses to a reference into the big message
    data = masked(2, deflate(big), rsv=0x40) + masked(2, deflate(small), rsv=0x40) + masked(9, b"")
    [job] = server.receive_data(data[:-10])  # stops at the big message
    assert isinstance(job, InflateJob)
    assert server.receive_data(data[-10:]) == []  # waits: nothing may be inflated before the job
    job.run()  # what the shell does in a worker thread
    assert server.resume(job) == [Message(big), Message(small), Ping(b"")]


def test_an_inflate_job_that_fails_fails_the_connection() -> None:
    server = WebSocketProtocol(deflate=Session(None, _zlib(), False), inflate_threshold=4)
    [job] = server.receive_data(masked(2, b"\xff" * 10, rsv=0x40) + masked(1, b"never"))
    assert isinstance(job, InflateJob)
    job.run()
    assert server.resume(job) == [Fail(1007, "Received invalid compressed data")]
    assert server.state == CLOSED and server.receive_data(masked(1, b"x")) == []


def test_whole_message_fast_path_agrees_in_both_roles() -> None:
    server, client = WebSocketProtocol(Role.SERVER), WebSocketProtocol(Role.CLIENT)
    assert server.whole_message(masked(1, b"abc")) == "abc"
    assert server.whole_message(plain(1, b"abc")) is None  # unmasked: the general path fails it
    assert client.whole_message(plain(2, b"x" * 300)) == b"x" * 300
    assert client.whole_message(masked(2, b"abc")) is None


def test_client_masking_keys_are_fresh_per_frame_across_pool_refills_and_forks() -> None:
    """Keys come from os.urandom 4 KiB at a time (1,024 keys per read): every frame still gets its own, a
    refill continues seamlessly, and a forked child does not repeat the keys its parent goes on to use."""
    from rt_http.protocol import encode_masked_frame, mask_key

    keys = [mask_key() for _ in range(3000)]  # crosses two refills
    assert {len(key) for key in keys} == {4}
    assert len(set(keys)) > 2990  # 32 random bits each: a handful of repeats at most by chance, not runs
    frames = [encode_masked_frame(0x2, b"same payload") for _ in range(50)]
    assert len({frame[2:6] for frame in frames}) == 50  # the key follows the 2-byte header
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child only reports its next keys
        os.write(writer, mask_key() + mask_key())
        os._exit(0)
    os.close(writer)
    try:
        os.waitpid(child, 0)
        child_keys = os.read(reader, 8)
    finally:
        os.close(reader)
    assert len(child_keys) == 8
    assert mask_key() + mask_key() != child_keys
