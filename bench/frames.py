"""The WebSocket frame codec alone: rt_http.frames against the sans-I/O protocol of the `websockets` package.

    uv run python bench/frames.py [--seconds 1] [--repeat 5]

rt-http frames with its own codec instead of `websockets`' protocol layer; issue 5 asks for a benchmark that
shows ours is faster. Three cases, each for 32-byte and 16 KiB messages, no I/O:
- parse: a masked client frame in, the message out (rt: WebSocketProtocol.receive_data; websockets: Protocol.receive_data
  then events_received), one frame per call, as nearly every client message arrives;
- parse, split: the same frames fed in pieces of 7 bytes (rt's general, buffering path);
- frame: an outgoing message to the bytes to send (rt: encode_message; websockets: send_binary then
  data_to_send).
Prints messages per second and rt's ratio, the best of ``--repeat`` rounds for each.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

from websockets.protocol import Protocol, Side, State

from rt_http.frames import encode_message
from rt_http.protocol import WebSocketProtocol

sys.path.insert(0, os.path.dirname(__file__))
from ws import client_frame


def rate(step: Callable[[], object], seconds: float, repeat: int) -> float:
    """Best messages per second over ``repeat`` rounds of about ``seconds`` each; ``step`` handles one."""
    best = 0.0
    for _ in range(repeat):
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            for _ in range(200):
                step()
            count += 200
        best = max(best, count / elapsed)
    return best


def cases(size: int) -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    payload = os.urandom(size)
    frame = client_frame(payload)
    pieces = [frame[i : i + 7] for i in range(0, len(frame), 7)]
    parser = WebSocketProtocol(max_payload_length=1 << 24)
    protocol = Protocol(Side.SERVER, state=State.OPEN, max_size=None)

    def rt_parse() -> object:
        [message] = parser.receive_data(frame)
        return message

    def ws_parse() -> object:
        protocol.receive_data(frame)
        [event] = protocol.events_received()
        return event

    def rt_split() -> object:
        for piece in pieces:
            events = parser.receive_data(piece)
        return events

    def ws_split() -> object:
        for piece in pieces:
            protocol.receive_data(piece)
        return protocol.events_received()

    def rt_frame() -> object:
        return encode_message(payload)

    def ws_frame() -> object:
        protocol.send_binary(payload)
        return protocol.data_to_send()

    # same results first: rt and websockets read the same message out of the same bytes
    assert rt_parse().data == ws_parse().data == payload  # type: ignore[attr-defined]
    assert rt_frame()[0] == b"".join(ws_frame())  # type: ignore[index, arg-type]
    return [
        ("parse", rt_parse, ws_parse),
        ("parse, split in 7-byte pieces", rt_split, ws_split),
        ("frame", rt_frame, ws_frame),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'case':42} {'rt msg/s':>12} {'websockets msg/s':>17} {'rt / websockets':>16}")
    for size in (32, 16384):
        for name, rt_step, ws_step in cases(size):
            rt_rate = rate(rt_step, args.seconds, args.repeat)
            ws_rate = rate(ws_step, args.seconds, args.repeat)
            print(f"{f'{name}, {size} B':42} {rt_rate:>12,.0f} {ws_rate:>17,.0f} {rt_rate / ws_rate:>15.2f}x")


if __name__ == "__main__":
    main()
