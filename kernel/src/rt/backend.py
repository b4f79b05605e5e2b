"""The one place that decides which async backend runs rt's coroutines, and runs them.

Every plugin that needs an event loop of its own (``server.run()``, ``rt test``, ``rt run``) calls
:func:`run` instead of choosing: the choice is ``backend=`` given by the caller, else the configuration
(``--backend`` flag, then ``RT_BACKEND``, then ``backend`` in rt.toml / ``[tool.rt]``), else asyncio.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from rt.errors import BackendError

if TYPE_CHECKING:
    from rt.config import Config

BACKENDS = ("asyncio", "trio")
DEFAULT_BACKEND = "asyncio"
T = TypeVar("T")


def resolve_backend(backend: str | None = None, config: Config | None = None) -> str:
    """Name the backend to use, checking that it exists and is installed."""
    if backend is not None:
        chosen, source = backend, "the backend= argument"
    else:
        if config is None:
            from rt.kernel import get_kernel

            config = get_kernel().config
        chosen, source = config.get("backend", DEFAULT_BACKEND), config.source("backend")
    if chosen not in BACKENDS:
        raise BackendError(
            f"unknown async backend {chosen!r} (from {source}); choose one of {', '.join(BACKENDS)}"
        )
    import importlib.util

    if chosen == "trio" and importlib.util.find_spec("trio") is None:
        raise BackendError(
            f"the trio backend was requested (from {source}) but trio is not installed: "
            "pip install 'rt-kernel[trio]'"
        )
    return chosen


def use_uvloop(config: Config | None = None) -> bool:
    """Whether asyncio runs on uvloop: ``loop`` (rt.toml, ``RT_LOOP``) is ``auto`` (the default: uvloop
    when it is installed, as uvicorn does), ``uvloop`` (required) or ``asyncio`` (asyncio's own loop)."""
    import importlib.util

    if config is None:
        from rt.kernel import get_kernel

        config = get_kernel().config
    loop = config.get("loop", "auto")
    installed = importlib.util.find_spec("uvloop") is not None
    if loop == "uvloop" and not installed:
        raise BackendError(
            f"loop = 'uvloop' was requested (from {config.source('loop')}) but uvloop is not installed: "
            "pip install uvloop"
        )
    return loop != "asyncio" and installed


def run(
    func: Callable[..., Awaitable[T]], *args: Any, backend: str | None = None, config: Config | None = None
) -> T:
    """Run ``func(*args)`` to completion on the chosen backend and return its result."""
    import anyio

    chosen = resolve_backend(backend, config)
    options = {"use_uvloop": True} if chosen == "asyncio" and use_uvloop(config) else {}
    return anyio.run(func, *args, backend=chosen, backend_options=options)
