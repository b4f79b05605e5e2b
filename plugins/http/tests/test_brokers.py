"""The broker attach point of rt.serve, with a recording broker (no Redis; rt-redis has the real tests):
which calls a server makes and when, that deliveries from the broker reach local sockets only, the limit,
and the errors for a broker that cannot be chosen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

import rt
from rt.interfaces import Broker

pytestmark = pytest.mark.anyio


class RecordingBroker:
    origin = "recording"
    max_message_bytes = 100

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.deliver: Callable[[str, bytes, bool], None] | None = None
        self.closed = False

    async def run(self, deliver: Callable[[str, bytes, bool], None]) -> None:
        self.deliver = deliver
        await anyio.sleep_forever()

    def publish(self, topic: str, payload: bytes, *, is_text: bool) -> None:
        self.calls.append(("publish", topic, payload, is_text))

    def subscribe(self, topic: str) -> None:
        self.calls.append(("subscribe", topic))

    def unsubscribe(self, topic: str) -> None:
        self.calls.append(("unsubscribe", topic))

    async def aclose(self) -> None:
        self.closed = True


def test_the_recording_broker_is_a_broker() -> None:
    assert isinstance(RecordingBroker(), Broker)


async def test_subscriptions_publishes_and_deliveries(serve: Any, ws_tools: Any) -> None:
    broker = RecordingBroker()

    def fetch(req: Any, server: Any) -> Any:
        return None if server.upgrade(req) else rt.Response("no", status=400)

    def open_(ws: Any) -> None:
        ws.subscribe("room")

    async with serve(fetch=fetch, websocket={"open": open_}, broker=broker) as server:
        assert server.broker is broker
        await ws_tools.wait_until(lambda: broker.deliver is not None)
        assert server.publish("room", "nobody here") == 0
        assert broker.calls == [("publish", "room", b"nobody here", True)]  # the broker still gets it
        async with (
            await ws_tools.RawClient.connect(server) as first,
            await ws_tools.RawClient.connect(server),
        ):
            await ws_tools.wait_until(lambda: server.subscriber_count("room") == 2)
            assert broker.calls[1:] == [("subscribe", "room")]  # once per process, not per socket
            assert server.publish("room", b"\x00\x01") == 2
            assert broker.calls[-1] == ("publish", "room", b"\x00\x01", False)
            broker.calls.clear()
            assert broker.deliver is not None
            broker.deliver("room", b"from afar", True)  # another process's message
            assert await first.recv_frame() == (0x2, b"\x00\x01")
            assert await first.recv_frame() == (0x1, b"from afar")
            broker.deliver("room", b"\xff\xfe", True)  # not UTF-8: dropped, never sent as text
            broker.deliver("room", b"\xff\xfe", False)
            assert await first.recv_frame() == (0x2, b"\xff\xfe")
            assert broker.calls == []  # deliveries are not published again
            with pytest.raises(ValueError, match="101 bytes is over the broker's limit of 100 bytes"):
                server.publish("room", "x" * 101)
            assert broker.calls == []
        await ws_tools.wait_until(lambda: server.subscriber_count("room") == 0)
        assert broker.calls == [("unsubscribe", "room")]  # the last one left
    assert broker.closed


async def test_unknown_or_bad_brokers_fail_clearly(serve: Any) -> None:
    with pytest.raises(ValueError, match="no broker handles nats:// URLs"):
        async with serve(fetch=lambda req, s: None, broker="nats://127.0.0.1:4222"):
            pass
    with pytest.raises(ValueError, match="'localhost:6379' is not a URL"):
        async with serve(fetch=lambda req, s: None, broker="localhost:6379"):
            pass
    with pytest.raises(TypeError, match="broker= must be a URL"):
        async with serve(fetch=lambda req, s: None, broker=42):
            pass


async def test_the_password_never_shows_in_the_error(serve: Any) -> None:
    with pytest.raises(ValueError) as caught:
        async with serve(fetch=lambda req, s: None, broker="user:hunter2@localhost:6379"):
            pass
    assert "hunter2" not in str(caught.value) and "user:***@localhost:6379" in str(caught.value)
