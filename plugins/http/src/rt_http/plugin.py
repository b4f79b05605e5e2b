"""Hook implementations of rt-http: the entry point `http` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used, so every heavy
import (anyio, httptools) happens inside the ``load`` functions and transport factories.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rt.hookspecs import hookimpl
from rt.interfaces import ConfigOption, KernelView, NamespaceEntry

_NAMES = {
    "FetchError": "rt_http.fetch",
    "WebSocket": "rt_http.client",
    "WebSocketError": "rt_http.client",
    "Server": "rt_http.server",
    "Request": "rt_http.messages",
    "Response": "rt_http.messages",
    "Headers": "rt_http.headers",
    "ServerWebSocket": "rt_http.websocket",
    "WebSocketHandler": "rt_http.websocket",
}


def _load_serve(kernel: KernelView) -> Callable[..., Any]:
    """``rt.serve`` for the kernel resolving it: its servers listen through that kernel's transports."""
    import functools

    from rt_http.server import Server, serve

    @functools.wraps(serve)
    def serve_in_kernel(**options: Any) -> Server:
        server = serve(**options)
        server.attach(kernel)
        return server

    return serve_in_kernel


def _load_fetch(kernel: KernelView) -> Callable[..., Any]:
    """``rt.fetch`` for the kernel resolving it: its requests pass that kernel's HTTP observer hooks."""
    from rt_http.fetch import bind

    return bind(kernel.host)


@hookimpl
def rt_register_namespace(register: Callable[[NamespaceEntry], None]) -> None:
    register(NamespaceEntry("serve", _load_serve))
    register(NamespaceEntry("fetch", _load_fetch))
    for name, module in _NAMES.items():
        register(NamespaceEntry.lazy(name, f"{module}:{name}"))


def _transport(name: str) -> Callable[[], Any]:
    def factory() -> Any:
        from rt_http.transports import BUILTIN_TRANSPORTS

        return BUILTIN_TRANSPORTS[name]()

    return factory


@hookimpl
def rt_register_transports(register: Callable[[str, Any], None]) -> None:
    for name in ("tcp", "unix", "tls", "memory"):
        register(name, _transport(name))


@hookimpl
def rt_register_compressors(register: Callable[[str, Any], None]) -> None:
    """The built-in ``per_message_deflate`` values: one zlib compressor, sized per name at negotiation."""
    from rt_http.deflate import BUILTIN_NAMES, builtin_compressor

    for name in BUILTIN_NAMES:
        register(name, builtin_compressor)


@hookimpl
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    register(
        ConfigOption(
            "serve",
            "broker",
            str,
            "",
            help="pub/sub broker URL for rt.serve, e.g. redis://127.0.0.1:6379/0 (docs/scaling.md)",
        )
    )
    register(
        ConfigOption(
            "serve",
            "workers",
            int,
            1,
            help="server processes sharing the port (rt run --workers N; docs/scaling.md)",
        )
    )
