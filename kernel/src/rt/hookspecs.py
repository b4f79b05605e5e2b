"""Every hook the kernel defines, and nothing else.

Rules (ARCHITECTURE.md):

- Every spec is decorated with ``@hookspec`` and documented; ``PluginManager.check_pending()`` runs after the
  plugins are loaded, so an implementation that names no spec is an error, not a silent no-op.
- pluggy calls are synchronous, so the ``rt_register_*`` hooks only *register* things (a callback receives a
  name and an object or factory); the async work happens inside the registered objects.
- No ``firstresult`` on a hook whose implementations could be async, and ``wrapper=True`` only on sync hooks.
- The entry-point name of a plugin is its name everywhere: ``RT_DISABLE_PLUGINS``, ``[plugins] disable``,
  ``rt plugins``.

Implement a hook in a plugin module with ``from rt import hookimpl`` and a function of the same name; it may
take any subset of the arguments. docs/plugins.md is the user-facing reference, and a test checks that it
documents every hook below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from rt.config import Config
    from rt.events import HttpRequest, HttpResponse
    from rt.interfaces import (
        BrokerFactory,
        Command,
        CompressorFactory,
        ConfigOption,
        DigestFactory,
        NamespaceEntry,
        ReporterFactory,
        SecretBackendFactory,
        TransportFactory,
    )

PROJECT_NAME = "rt"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def rt_register_commands(register: Callable[[Command], None]) -> None:
    """Add subcommands to the ``rt`` command (``rt test``, ``rt secrets``, ``rt run``).

    Call ``register(Command(name, help, configure, run))`` once per subcommand.
    """


@hookspec
def rt_register_namespace(register: Callable[[NamespaceEntry], None]) -> None:
    """Add names to the lazy ``rt.`` namespace (``rt.CSRF``, ``rt.serve``) or to ``rt.test``.

    Call ``register(NamespaceEntry(name, load))``; ``load(kernel)`` runs on first access in each kernel, with
    that kernel (take its registries and configuration from it, not from ``get_kernel()``); keep heavy imports in it.
    """


@hookspec
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    """Declare the configuration keys a plugin reads, with their types and defaults.

    Only declared keys are accepted in rt.toml / ``[tool.rt]``; ``RT_<SECTION>_<KEY>`` variables follow.
    """


@hookspec
def rt_register_secret_backends(register: Callable[[str, SecretBackendFactory], None]) -> None:
    """Add credential stores for ``rt.secrets``: ``register("keyring", factory)``.

    ``factory(config)`` returns a :class:`rt.interfaces.SecretBackend`; it is called when the backend is chosen.
    """


@hookspec
def rt_register_hmac_algorithms(register: Callable[[str, DigestFactory], None]) -> None:
    """Add HMAC algorithms usable by ``rt.CSRF``, by name: ``register("sha3-256", hashlib.sha3_256)``."""


@hookspec
def rt_register_reporters(register: Callable[[str, ReporterFactory], None]) -> None:
    """Add test reporters, selected with ``rt test --reporter NAME``.

    ``factory(ReporterOptions)`` returns a :class:`rt.interfaces.Reporter` fed with :mod:`rt.events` events.
    A factory with an ``enabled(ReporterContext) -> bool`` attribute switches itself on by its own rule
    (environment, CI detection ...); without one it runs only when named. Several reporters run at once.
    """


@hookspec
def rt_register_transports(register: Callable[[str, TransportFactory], None]) -> None:
    """Add listener transports for ``rt.serve(transport=NAME)``: ``tcp``, ``unix``, ``tls``, ``memory`` ..."""


@hookspec
def rt_register_compressors(register: Callable[[str, CompressorFactory], None]) -> None:
    """Add WebSocket message compressors, named as ``per_message_deflate`` values select them."""


@hookspec
def rt_register_brokers(register: Callable[[str, BrokerFactory], None]) -> None:
    """Add pub/sub brokers that carry ``publish`` across server processes (``redis`` ...)."""


@hookspec
def rt_configure(config: Config) -> None:
    """Called once per kernel after every plugin is loaded and the configuration is validated.

    Use it to read your configuration keys and install process-wide observers (e.g. verbose fetch logging).
    """


@hookspec
def rt_http_request(request: HttpRequest) -> None:
    """An HTTP client is about to send ``request``. Observers only: must not raise, must not block."""


@hookspec
def rt_http_response(response: HttpResponse) -> None:
    """An HTTP client received the status line and headers of ``response``. Observers only."""
