"""The client's opening handshake, without sockets: request bytes, response checks, deflate negotiation."""

from __future__ import annotations

import pytest

from rt_http.client_handshake import ClientHandshake, HandshakeError, check_protocols, parse_url
from rt_http.handshake import accept_key


def _answer(
    hs: ClientHandshake, *extra: str, accept: str | None = None, status: str = "101 Switching Protocols"
) -> bytes:
    lines = [
        f"HTTP/1.1 {status}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Accept: {accept if accept is not None else accept_key(hs.key)}",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_request_carries_the_handshake_fields() -> None:
    hs = ClientHandshake(
        parse_url("ws://example.test:8080/chat?room=1"), protocols=("a", "b"), headers={"X-Id": "7"}
    )
    head = hs.request().decode()
    assert head.startswith("GET /chat?room=1 HTTP/1.1\r\n")
    for field in (
        "host: example.test:8080",
        "upgrade: websocket",
        "connection: Upgrade",
        f"sec-websocket-key: {hs.key}",
        "sec-websocket-version: 13",
        "sec-websocket-protocol: a, b",
        "sec-websocket-extensions: permessage-deflate; client_max_window_bits",
        "x-id: 7",
    ):
        assert field.lower() in head.lower(), field


def test_accepts_a_valid_answer_and_keeps_following_bytes() -> None:
    hs = ClientHandshake(parse_url("ws://h/"), protocols=("chat",))
    hs.request()
    data = _answer(hs, "Sec-WebSocket-Protocol: chat", "Sec-WebSocket-Extensions: permessage-deflate")
    assert hs.receive(data[:10]) is None  # an incomplete head waits
    accepted = hs.receive(data[10:] + b"\x81\x02hi")
    assert accepted is not None
    assert accepted.protocol == "chat"
    assert accepted.leftover == b"\x81\x02hi"
    assert accepted.deflate is not None and accepted.extensions == "permessage-deflate"


@pytest.mark.parametrize(
    ("extra", "accept", "status", "message"),
    [
        ((), "bm90IHRoZSBrZXk=", "101 Switching Protocols", "wrong Sec-WebSocket-Accept"),
        (("Sec-WebSocket-Protocol: other",), None, "101 Switching Protocols", "was not offered"),
        (("Sec-WebSocket-Extensions: x-custom",), None, "101 Switching Protocols", "not offered"),
        (
            ("Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=99",),
            None,
            "101 Switching Protocols",
            "unacceptable",
        ),
        ((), None, "403 Forbidden", "refused the WebSocket handshake: 403 Forbidden"),
    ],
)
def test_wrong_answers_are_refused(
    extra: tuple[str, ...], accept: str | None, status: str, message: str
) -> None:
    hs = ClientHandshake(parse_url("ws://h/"))
    hs.request()
    with pytest.raises(HandshakeError, match=message):
        hs.receive(_answer(hs, *extra, accept=accept, status=status))


def test_garbage_and_early_close() -> None:
    hs = ClientHandshake(parse_url("ws://h/"))
    hs.request()
    with pytest.raises(HandshakeError, match="invalid handshake response"):
        hs.receive(b"SSH-2.0-OpenSSH\r\n\r\n")
    hs = ClientHandshake(parse_url("ws://h/"))
    hs.request()
    with pytest.raises(HandshakeError, match="closed the connection"):
        hs.receive(b"")


def test_urls_protocols_and_reserved_headers() -> None:
    target = parse_url("wss://[::1]/")
    assert (target.secure, target.host, target.port, target.host_header) == (True, "::1", 443, "[::1]")
    assert parse_url("http://h:81/x").secure is False
    for bad in ("ftp://h/", "ws://", "ws://h/#frag", "ws://h:99999/"):
        with pytest.raises(ValueError, match="WebSocket url"):
            parse_url(bad)
    assert check_protocols("chat") == ("chat",)
    with pytest.raises(ValueError, match="unique"):
        check_protocols(["a", "a"])
    with pytest.raises(ValueError, match="invalid WebSocket subprotocol"):
        check_protocols(["a b"])
    with pytest.raises(ValueError, match="set by the handshake"):
        ClientHandshake(parse_url("ws://h/"), headers={"Sec-WebSocket-Key": "x"})
