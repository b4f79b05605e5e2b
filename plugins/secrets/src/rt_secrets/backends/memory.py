"""``memory``: secrets kept in a dict of this process, for tests of code that uses rt.secrets.

Nothing is persisted and nothing is encrypted; the values are gone when the kernel is. One instance lives
per kernel (rt.secrets caches it), so a test's kernel starts empty.
"""

from __future__ import annotations

import threading

import attrs


@attrs.define(eq=False)
class MemoryBackend:
    """A :class:`rt.interfaces.SecretBackend` over a dict and a lock (calls arrive on worker threads)."""

    name: str = "memory"
    max_value_bytes: int | None = None
    _store: dict[tuple[str, str], str] = attrs.field(factory=dict, repr=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, repr=False)

    def get(self, service: str, name: str) -> str | None:
        with self._lock:
            return self._store.get((service, name))

    def set(self, service: str, name: str, value: str) -> None:
        with self._lock:
            self._store[(service, name)] = value

    def delete(self, service: str, name: str) -> bool:
        with self._lock:
            return self._store.pop((service, name), None) is not None

    def __repr__(self) -> str:  # never the values, not even how many there are per service
        return f"<MemoryBackend {len(self._store)} secrets>"
