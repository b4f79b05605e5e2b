"""What rt-http's two backend fast paths (``asyncio_streams``, ``trio_streams``) share, in anyio terms only.

Both are anyio ``SocketStream``s that skip a layer of their backend, and both owe anyio's contract the same
things: ``max_bytes`` must be positive, one reader and one writer at a time (``BusyResourceError``), and
``ClosedResourceError`` once closed. Both also skip the yield that anyio's streams make on every operation,
so both yield here instead, every ``CHECKPOINT_EVERY`` operations: before the operation, never after it,
so a cancellation at that yield loses no data (nothing has been read or written yet). A peer that floods, or
one that reads as fast as a task writes, then cannot keep that task from letting the others run.
A subclass implements ``_receive``/``_send`` and sets ``_streak = 0`` whenever it really waits (a wait yields).
"""

from __future__ import annotations

import anyio
import anyio.lowlevel
from anyio.abc import SocketStream

CHECKPOINT_EVERY = 16  # operations that did not wait, between two checkpoints of one stream


class FairSocketStream(SocketStream):
    """The guards and the fairness checkpoint around a subclass's ``_receive``/``_send``."""

    def __init__(self) -> None:
        self._closed = False
        self._receiving = False
        self._sending = False
        self._streak = 0  # operations since this stream last yielded

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if max_bytes < 1:
            raise ValueError("max_bytes must be a positive integer")
        if self._receiving:
            raise anyio.BusyResourceError("reading from")
        self._receiving = True
        try:
            self._streak += 1
            if self._streak >= CHECKPOINT_EVERY:  # before reading: a cancellation here loses nothing
                self._streak = 0
                await anyio.lowlevel.checkpoint()
            return await self._receive(max_bytes)
        finally:
            self._receiving = False

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._sending:
            raise anyio.BusyResourceError("writing to")
        self._sending = True
        try:
            self._streak += 1
            if self._streak >= CHECKPOINT_EVERY:  # before writing: a cancellation here writes nothing
                self._streak = 0
                await anyio.lowlevel.checkpoint()
                if self._closed:
                    raise anyio.ClosedResourceError
            await self._send(item)
        finally:
            self._sending = False

    async def _receive(self, max_bytes: int) -> bytes:
        raise NotImplementedError

    async def _send(self, item: bytes) -> None:
        raise NotImplementedError
