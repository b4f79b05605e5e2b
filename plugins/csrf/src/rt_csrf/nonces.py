"""Random nonces from the OS CSPRNG, read in blocks.

``os.urandom(16)`` is one system call per token, about half a microsecond: a tenth of a whole
generate+verify cycle (bench/csrf.py). Reading 4 KiB at a time and slicing it amortises the call over 256
nonces. The bytes are the same ``os.urandom`` bytes, each handed out once. Each thread has its own stream
(so no lock, and no generator shared between threads), and a forked child drops its parent's streams, so
parent and child never hand out the same nonce.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Final

_NONCES_PER_READ: Final = 256


def _stream(size: int) -> Iterator[bytes]:
    while True:
        block = os.urandom(size * _NONCES_PER_READ)
        for start in range(0, len(block), size):
            yield block[start : start + size]


class _Streams(threading.local):
    by_size: dict[int, Iterator[bytes]]

    def __init__(self) -> None:
        self.by_size = {}


_streams = _Streams()


def _forget_after_fork() -> None:
    global _streams
    _streams = _Streams()


os.register_at_fork(after_in_child=_forget_after_fork)


def nonce(size: int) -> bytes:
    """``size`` fresh random bytes."""
    by_size = _streams.by_size
    stream = by_size.get(size)
    if stream is None:
        stream = by_size[size] = _stream(size)
    return next(stream)
