"""permessage-deflate: the negotiation table of REFERENCE.md (no sockets), then compressed traffic over
loopback with a raw client (asyncio and trio) and with the websockets client (asyncio)."""

from __future__ import annotations

import os
import zlib
from typing import Any

import pytest
import sniffio

import rt
from rt_http.deflate import DeflateConfig, negotiate

OFFER = "permessage-deflate; client_max_window_bits"
OFFERING = f"Sec-WebSocket-Extensions: {OFFER}\r\n"  # the header line a raw client sends to offer it


def answer(option: Any, offer: str = OFFER) -> str | None:
    config = DeflateConfig.parse(option)
    assert config is not None
    accepted = negotiate(config, offer)
    return accepted[0] if accepted else None


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ({"compress": "dedicated"}, "permessage-deflate; client_no_context_takeover"),
        ({"compress": "256KB"}, "permessage-deflate; client_no_context_takeover"),
        ({"compress": "32KB"}, "permessage-deflate; client_no_context_takeover; server_max_window_bits=12"),
        ({"compress": "3KB"}, "permessage-deflate; client_no_context_takeover; server_max_window_bits=9"),
        (True, "permessage-deflate; server_no_context_takeover; client_no_context_takeover"),
        ({"compress": "dedicated", "decompress": "dedicated"}, "permessage-deflate"),
    ],
)
def test_negotiation_answers(option: Any, expected: str) -> None:
    assert answer(option) == expected


@pytest.mark.parametrize(
    "offer",
    [
        "permessage-deflate; server_max_window_bits=7",
        "permessage-deflate; server_max_window_bits",
        "permessage-deflate; client_max_window_bits=16",
        "permessage-deflate; unknown_param",
        "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
        "permessage-deflate; server_no_context_takeover=1",
        "x-webkit-deflate-frame",
        "",
    ],
)
def test_malformed_or_foreign_offers_are_declined(offer: str) -> None:
    assert answer(True, offer) is None


def test_a_later_valid_offer_is_taken_and_a_window_limit_is_honoured() -> None:
    offer = "permessage-deflate; bogus, permessage-deflate; server_max_window_bits=10"
    assert answer({"compress": "dedicated"}, offer) == (
        "permessage-deflate; client_no_context_takeover; server_max_window_bits=10"
    )


def test_invalid_options_raise_and_off_means_none() -> None:
    assert DeflateConfig.parse(False) is None
    assert DeflateConfig.parse({"compress": False, "decompress": "disable"}) is None
    with pytest.raises(ValueError, match="compress"):
        DeflateConfig.parse({"compress": ""})
    with pytest.raises(ValueError, match="keys compress and decompress"):
        DeflateConfig.parse({"compres": True})
    with pytest.raises(TypeError):
        DeflateConfig.parse(3)


def test_an_unknown_compressor_name_fails_where_the_server_is_made(rt_kernel: object) -> None:
    """Names are looked up in the kernel's compressors (built-in ones and plugins'), so a typo fails at once."""
    with pytest.raises(ValueError, match=r"no compressor named '1KB'; registered: disable, 128KB, .*shared"):
        rt.serve(
            fetch=print, websocket={"message": print, "per_message_deflate": {"compress": "1KB"}}, port=0
        )


def deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return (compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH))[:-4]


def inflate(data: bytes) -> bytes:
    return zlib.decompressobj(-15).decompress(data + b"\x00\x00\xff\xff")


def upgrading(req: rt.Request, server: Any) -> rt.Response | None:
    return None if server.upgrade(req) else rt.Response("no", status=400)


def echo(ws: Any, msg: Any) -> None:
    ws.send(msg, compress=True)


@pytest.mark.anyio
@pytest.mark.parametrize("option", [True, {"compress": "32KB", "decompress": "dedicated"}])
async def test_compressed_messages_both_ways_with_a_raw_client(
    serve: Any, ws_tools: Any, option: Any
) -> None:
    handler = rt.WebSocketHandler(message=echo, per_message_deflate=option)
    async with serve(fetch=upgrading, websocket=handler) as server:
        async with await ws_tools.RawClient.connect(server, extra=OFFERING) as client:
            assert b"sec-websocket-extensions: permessage-deflate" in client.response_head.lower()
            text = "hé " * 1000
            await client.send(0x1, deflate(text.encode()), rsv=0x40)
            opcode, payload = await client.recv_frame()
            assert opcode == 1 and len(payload) < len(text) and inflate(payload) == text.encode()
            # a compressed message in two fragments: RSV1 on the first only
            body = deflate(b"\x01" * 5000)
            await client.send(0x2, body[:10], fin=False, rsv=0x40)
            await client.send(0x0, body[10:])
            opcode, payload = await client.recv_frame()
            assert opcode == 2 and inflate(payload) == b"\x01" * 5000


@pytest.mark.anyio
async def test_a_deflate_bomb_closes_1009_without_inflating_it(serve: Any, ws_tools: Any) -> None:
    messages: list[Any] = []
    handler = rt.WebSocketHandler(
        message=lambda ws, msg: messages.append(msg), per_message_deflate=True, max_payload_length=64 * 1024
    )
    async with serve(fetch=upgrading, websocket=handler) as server:
        async with await ws_tools.RawClient.connect(server, extra=OFFERING) as client:
            bomb = deflate(b"\x00" * 10_000_000)  # 10 MB of zeros: about 10 KB on the wire, under the limit
            assert len(bomb) < 64 * 1024
            await client.send(0x2, bomb, rsv=0x40)
            assert await client.recv_close() == (1009, "Received too big message")
    assert messages == []


@pytest.mark.anyio
async def test_bad_compressed_data_is_1007_and_rsv1_without_negotiation_is_1002(
    serve: Any, ws_tools: Any
) -> None:
    handler = rt.WebSocketHandler(per_message_deflate=True)
    async with serve(fetch=upgrading, websocket=handler) as server:
        async with await ws_tools.RawClient.connect(server, extra=OFFERING) as client:
            await client.send(0x2, b"\xff\xff\xff\xff", rsv=0x40)
            assert (await client.recv_close())[0] == 1007
        async with await ws_tools.RawClient.connect(server) as client:  # offered nothing: RSV1 is an error
            assert b"sec-websocket-extensions" not in client.response_head.lower()
            await client.send(0x2, deflate(b"x"), rsv=0x40)
            assert (await client.recv_close())[0] == 1002
        async with await ws_tools.RawClient.connect(server, extra=OFFERING) as client:
            await client.send(0x9, b"", rsv=0x40)  # never on a control frame
            assert (await client.recv_close())[0] == 1002


@pytest.mark.anyio
async def test_publish_compresses_once_for_shared_sockets_and_not_for_others(
    serve: Any, ws_tools: Any
) -> None:
    handler = rt.WebSocketHandler(open=lambda ws: ws.subscribe("room"), per_message_deflate=True)
    async with serve(fetch=upgrading, websocket=handler) as server:
        async with (
            await ws_tools.RawClient.connect(server, extra=OFFERING) as a,
            await ws_tools.RawClient.connect(server) as b,
        ):
            await ws_tools.wait_until(lambda: server.subscriber_count("room") == 2)
            text = "news " * 500
            assert server.publish("room", text, compress=True) == len(text)
            opcode, payload = await a.recv_frame()
            assert opcode == 1 and len(payload) < len(text) and inflate(payload) == text.encode()
            assert (await b.recv_frame()) == (1, text.encode())


@pytest.mark.anyio
@pytest.mark.parametrize(
    "anyio_backend", ["asyncio"]
)  # the websockets client is asyncio-only; the server side
async def test_the_websockets_client_talks_compressed(
    serve: Any, ws_tools: Any
) -> None:  # runs on trio elsewhere
    assert sniffio.current_async_library() == "asyncio"
    from websockets.asyncio.client import connect

    for option in (True, {"compress": "dedicated", "decompress": "dedicated"}, {"compress": "3KB"}):
        handler = rt.WebSocketHandler(message=echo, per_message_deflate=option)
        async with serve(fetch=upgrading, websocket=handler) as server:
            async with connect(ws_tools.ws_url(server)) as client:
                assert "permessage-deflate" in client.response.headers["sec-websocket-extensions"]
                for index in range(5):  # several messages: context takeover, where kept, must line up
                    text = f"message {index} " + "abc" * 2000
                    await client.send(text)
                    assert await client.recv() == text


@pytest.mark.parametrize(
    ("decompress", "offer", "expected"),
    [
        ("3KB", OFFER, "client_max_window_bits=11"),
        ("4KB", OFFER, "client_max_window_bits=12"),
        ("8KB", OFFER, "client_max_window_bits=13"),
        ("16KB", OFFER, "client_max_window_bits=14"),
        ("16KB", "permessage-deflate; client_max_window_bits=12", "client_max_window_bits=12"),
        ("32KB", OFFER, None),
        ("dedicated", OFFER, None),
        ("3KB", "permessage-deflate", None),  # not offered: may not be answered (RFC 7692 7.1.2.2)
    ],
)
def test_small_decompress_sizes_limit_the_clients_window(
    decompress: str, offer: str, expected: str | None
) -> None:
    """REFERENCE.md: as a ``decompress`` value, 3KB..16KB limit the client's window too."""
    answered = answer({"compress": "dedicated", "decompress": decompress}, offer)
    assert answered is not None
    parameters = [part.strip() for part in answered.split(";")]
    window = [part for part in parameters if part.startswith("client_max_window_bits")]
    assert window == ([expected] if expected else [])


@pytest.mark.anyio
async def test_a_client_that_exceeds_the_window_it_agreed_to_fails_1007(serve: Any, ws_tools: Any) -> None:
    """With ``decompress: "3KB"`` the client agreed to a 2 KiB window (11 bits) and keeps its context: the
    server keeps only that much of earlier messages, so a message that refers 4 KB back (into the previous
    message) does not inflate: 1007. A client that keeps to its window is understood."""
    handler = rt.WebSocketHandler(
        message=echo, per_message_deflate={"compress": "dedicated", "decompress": "3KB"}
    )
    block = os.urandom(4000)
    async with serve(fetch=upgrading, websocket=handler) as server:
        for bits, fits in ((11, True), (15, False)):
            async with await ws_tools.RawClient.connect(server, extra=OFFERING) as client:
                assert b"client_max_window_bits=11" in client.response_head
                compressor = zlib.compressobj(9, zlib.DEFLATED, -bits)  # context kept across messages
                for _ in range(2):
                    data = compressor.compress(block) + compressor.flush(zlib.Z_SYNC_FLUSH)
                    await client.send(0x2, data[:-4], rsv=0x40)
                    if not fits and _:
                        assert (await client.recv_close())[0] == 1007
                    else:
                        opcode, payload = await client.recv_frame()
                        assert opcode == 2 and len(payload) > 0


@pytest.mark.parametrize(
    "option", [True, {"compress": "dedicated", "decompress": "dedicated"}, {"compress": "3KB"}]
)
def test_an_idle_socket_holds_no_compression_state_of_its_own(option: Any) -> None:
    """Memory per idle connection with compression no higher than off (issue 14; bench/ws_deflate_memory.py):
    sockets that negotiate the same answer share one Session, and a socket's own compressor and inflater are
    made on its first compressed message, not at the handshake."""
    from rt_http.protocol import Role, WebSocketProtocol

    config = DeflateConfig.parse(option)
    assert config is not None
    first, second = negotiate(config, OFFER), negotiate(config, OFFER)
    assert first is not None and second is not None
    assert first[1] is second[1] and first[0] is second[0]  # one answer and one Session for both sockets
    session = first[1]
    assert session.inflater is None  # every socket inflates with its own, made on first use
    assert session.deflater is (config.shared if option is True else None)
    a, b = (WebSocketProtocol(Role.SERVER, deflate=session) for _ in range(2))
    assert a._deflater is b._deflater and a._inflater is None and b._inflater is None
    frame = a.frame_message("hello hello hello", compress=True)
    assert frame[0] & 0x40  # RSV1: compressed
    if option is True:
        assert a._deflater is config.shared and b._deflater is config.shared
    else:  # a's own compressor now exists, b still has none
        assert a._deflater is not None and b._deflater is None
    # a compressed message from the client makes b's inflater, and only b's
    payload = zlib.compressobj(wbits=-15)
    data = payload.compress(b"hi there") + payload.flush(zlib.Z_SYNC_FLUSH)
    mask = os.urandom(4)
    body = bytes(byte ^ mask[i % 4] for i, byte in enumerate(data[:-4]))
    events = b.receive_data(bytes((0xC1, 0x80 | len(body))) + mask + body)
    assert [getattr(event, "data", None) for event in events] == ["hi there"]
    assert b._inflater is not None and a._inflater is None


def test_negotiated_sessions_are_bounded_whatever_clients_offer() -> None:
    """The per-answer cache cannot be grown by clients: its key takes a few values (window bits, flags)."""
    config = DeflateConfig.parse({"compress": "dedicated", "decompress": "3KB"})
    assert config is not None
    for server_bits in ["", *(f"; server_max_window_bits={bits}" for bits in range(9, 16))]:
        for client_bits in [
            "",
            "; client_max_window_bits",
            *(f"; client_max_window_bits={b}" for b in range(8, 16)),
        ]:
            for flags in ["", "; server_no_context_takeover", "; client_no_context_takeover"]:
                assert negotiate(config, f"permessage-deflate{server_bits}{client_bits}{flags}") is not None
    assert 0 < len(config.sessions) <= 8 * 10 * 3
