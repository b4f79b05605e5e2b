"""Choosing the pub/sub broker of a server: ``rt.serve(broker=...)``, else ``[serve] broker``.

A broker is named by its URL's scheme (``redis://127.0.0.1:6379/0`` picks the broker registered as
``redis`` through ``rt_register_brokers``); an object that already is a broker is used as given. No broker
configured means one process: publish reaches this server's sockets only.
"""

from __future__ import annotations

from typing import Any

from rt.interfaces import Broker, KernelView


def open_broker(spec: str | Broker | None, kernel: KernelView) -> Broker | None:
    """The broker for ``spec`` (a URL, a broker object, or None for the one ``kernel`` configures, if any)."""
    source = "the broker= argument"
    if spec is None:
        spec = kernel.config.get("serve.broker") or None
        source = f"[serve] broker (from {kernel.config.source('serve.broker')})"
        if spec is None:
            return None
    if not isinstance(spec, str):
        if not isinstance(spec, Broker):
            raise TypeError(
                f"broker= must be a URL such as 'redis://127.0.0.1:6379/0' or a broker object "
                f"(rt.interfaces.Broker), got {type(spec).__name__}"
            )
        return spec
    scheme, sep, _ = spec.partition("://")
    brokers = kernel.host.brokers()
    if not sep or not scheme:
        raise ValueError(
            f"{source}: {_redacted(spec)!r} is not a URL; expected e.g. 'redis://127.0.0.1:6379/0'"
        )
    registered = brokers.get(scheme.lower())
    if registered is None:
        known = ", ".join(sorted(brokers)) or "none (pip install rt-redis for redis://)"
        raise ValueError(f"{source}: no broker handles {scheme}:// URLs; registered: {known}")
    broker: Any = registered.value(spec, kernel.config)
    if not isinstance(broker, Broker):
        raise TypeError(f"the {scheme!r} broker factory returned {type(broker).__name__}, not a Broker")
    return broker


def _redacted(url: str) -> str:
    """The URL without a password, for messages (``redis://user:***@host``)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    user = credentials.partition(":")[0]
    return f"{scheme}{sep}{user}:***@{host}"
