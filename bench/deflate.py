"""Where compression should leave the event loop: zlib's speed here against a worker-thread hand-off.

    uv run python bench/deflate.py [--repeat 5]

rt-http inflates a compressed message of ``rt_http.protocol.INFLATE_THRESHOLD`` bytes or more, and deflates
an outgoing one of ``rt_http.websocket.DEFLATE_THRESHOLD`` bytes or more, in a worker thread
(``anyio.to_thread``), because on the event loop every other connection waits for it. This prints, for
text-like data that compresses 3:1, how long deflating and inflating take per size, and what one
``anyio.to_thread.run_sync`` round trip costs: the threshold is about where the work costs several hand-offs.
"""

from __future__ import annotations

import argparse
import os
import time
import zlib

import anyio


def sample(size: int) -> bytes:
    words = [os.urandom(3).hex() for _ in range(2000)]
    text = " ".join(words[int.from_bytes(os.urandom(2), "big") % len(words)] for _ in range(size // 4))
    return text.encode()[:size]


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


async def hand_off(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(100):
            await anyio.to_thread.run_sync(int)
        times.append((time.perf_counter() - start) / 100)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"anyio.to_thread.run_sync round trip: {anyio.run(hand_off, args.repeat) * 1e6:.0f} us")
    print(f"{'size':>10} {'compressed':>11} {'deflate us':>11} {'inflate us':>11}")
    for size in (4096, 16384, 32768, 65536, 262144, 1048576):
        data = sample(size)

        def deflate(data: bytes = data) -> bytes:
            compressor = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15, 8)
            return compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)

        compressed = deflate()
        deflate_s = best(deflate, args.repeat)
        inflate_s = best(
            lambda compressed=compressed: zlib.decompressobj(-15).decompress(compressed), args.repeat
        )
        print(f"{size:>10} {len(compressed):>11} {deflate_s * 1e6:>11.0f} {inflate_s * 1e6:>11.0f}")


if __name__ == "__main__":
    main()
