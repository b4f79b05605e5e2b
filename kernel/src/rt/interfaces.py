"""The contracts that registered things implement.

A third-party plugin depends on ``rt-kernel`` alone and codes against these Protocols and the event types in
:mod:`rt.events`; it never imports another rt plugin. Every hook in :mod:`rt.hookspecs` registers one of these.
They are ``typing.Protocol`` classes, so an implementation does not inherit from them; ``runtime_checkable``
lets the kernel reject an object that lacks a method with a clear error at registration time.

``ListenOptions`` and ``CompressorOptions`` (rt-http's) are defined in :mod:`rt._http_interfaces` and read
from here on first use: every ``rt`` command imports this module, and those two attrs classes were 6 million
instructions of each start-up (an attrs class costs about 3 million to create).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

import attrs

# ConfigOption is defined next to the configuration that reads it; plugins import it from here or from there.
from rt.config import ConfigOption

if TYPE_CHECKING:  # only for annotations: keeps `import rt.interfaces` from importing anyio or argparse
    import argparse

    from anyio.abc import ByteStream, Listener

    from rt._http_interfaces import CompressorOptions, ListenOptions
    from rt.config import Config
    from rt.events import HttpRequest, HttpResponse, TestEvent

__all__ = [
    "Broker",
    "BrokerFactory",
    "Command",
    "Compressor",
    "CompressorFactory",
    "CompressorOptions",
    "ConfigOption",
    "DigestFactory",
    "HashObject",
    "HostView",
    "KernelView",
    "ListenOptions",
    "NamespaceEntry",
    "Registered",
    "Reporter",
    "ReporterFactory",
    "ReporterOptions",
    "SecretBackend",
    "SecretBackendError",
    "SecretBackendFactory",
    "Transport",
    "TransportFactory",
    "import_target",
]

T = TypeVar("T")


def import_target(target: str) -> Any:
    """Import ``"package.module:attribute"`` (or a bare module path) and return it."""
    import importlib

    module_name, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in filter(None, attribute.split(".")):
        value = getattr(value, part)
    return value


def _deferred(target: str) -> Callable[..., Any]:
    """A function that imports ``target`` on its first call and forwards every call to it."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return import_target(target)(*args, **kwargs)

    call.__qualname__ = call.__name__ = f"deferred[{target}]"
    return call


# --- the kernel, as plugins see it ------------------------------------------------------------------------


@attrs.frozen
class Registered(Generic[T]):
    """A registered thing and the name of the plugin that registered it."""

    value: T
    plugin: str


class HostView(Protocol):
    """What plugins use of a kernel's plugin host (:class:`rt.plugins.PluginHost` implements it).

    Each method returns ``{name: Registered(thing, plugin)}``, the same mapping object until a plugin is
    registered or unregistered, so a caller may keep it.
    """

    def secret_backends(self) -> Mapping[str, Registered[Any]]: ...

    def hmac_algorithms(self) -> Mapping[str, Registered[Any]]: ...

    def reporters(self) -> Mapping[str, Registered[Any]]: ...

    def transports(self) -> Mapping[str, Registered[Any]]: ...

    def compressors(self) -> Mapping[str, Registered[Any]]: ...

    def brokers(self) -> Mapping[str, Registered[Any]]: ...

    def http_request(self, request: HttpRequest) -> None: ...

    def http_response(self, response: HttpResponse) -> None: ...

    def has_http_observers(self) -> bool: ...


class KernelView(Protocol):
    """What a command or a namespace loader receives: the kernel it runs in (:class:`rt.kernel.Kernel`).

    Typed as a Protocol so that this module, which every plugin imports, does not import the kernel (which
    imports the plugin host, which imports this module).
    """

    @property
    def config(self) -> Config: ...

    @property
    def host(self) -> HostView: ...

    def resolve(self, module: str, name: str) -> Any: ...


# --- commands -------------------------------------------------------------------------------------------


@attrs.frozen
class Command:
    """A subcommand of ``rt`` (``rt test``, ``rt secrets``, ``rt run`` ...).

    ``configure`` adds the command's arguments to its argparse sub-parser; ``run`` receives the parsed
    arguments and the kernel (whose config already includes the flags) and returns the exit code.

    ``extra_options``: the command also takes options that become known only while it runs (``rt test``: those
    pytest plugins and conftest.py files register, as ``--runslow``), so the words argparse does not recognise
    are handed to ``run`` as ``args.extra_options`` (a list, in order) instead of being a usage error; the
    command checks them itself.
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, KernelView], int]
    aliases: tuple[str, ...] = ()
    extra_options: bool = False

    @classmethod
    def lazy(
        cls,
        name: str,
        help: str,
        configure: str,
        run: str,
        aliases: tuple[str, ...] = (),
        *,
        extra_options: bool = False,
    ) -> Command:
        """A command whose ``configure`` and ``run`` are ``"module:function"`` targets, imported only when
        this command is the one being run (so ``rt --help`` does not import every plugin's command code)."""
        return cls(name, help, _deferred(configure), _deferred(run), aliases, extra_options)


# --- names on rt. -----------------------------------------------------------------------------------------


@attrs.frozen
class NamespaceEntry:
    """A name on ``rt.`` (``module="rt"``) or ``rt.test`` (``module="rt.test"``), resolved on first use.

    ``load(kernel)`` is called once per kernel, on the first attribute access, with the kernel resolving the
    name: an object that needs the kernel's registries or configuration takes them from that argument, so it
    never looks the current kernel up at call time. A plugin keeps its heavy imports inside ``load``, so that
    ``import rt`` stays cheap.
    """

    name: str
    load: Callable[[KernelView], Any]
    module: str = "rt"

    @classmethod
    def lazy(cls, name: str, target: str, module: str = "rt") -> NamespaceEntry:
        """An entry whose object is ``"package.module:attribute"``, imported on first access (an object that
        does not depend on the kernel: a class, a function that takes what it needs as arguments)."""
        return cls(name, lambda kernel: import_target(target), module)


# --- secrets ----------------------------------------------------------------------------------------------


@runtime_checkable
class SecretBackend(Protocol):
    """Where ``rt.secrets`` keeps credentials. Registered by name through ``rt_register_secret_backends``.

    The methods are synchronous and are always called on a worker thread (``anyio.to_thread``), because every
    OS credential API blocks. ``max_value_bytes`` is the largest UTF-8 value the store accepts (``None`` when
    it has no fixed limit); rt refuses longer values before they reach the backend. Implementations raise
    ``rt.SecretsError``-compatible errors by raising :class:`SecretBackendError` with a code.
    """

    name: str
    max_value_bytes: int | None

    def get(self, service: str, name: str) -> str | None: ...

    def set(self, service: str, name: str, value: str) -> None: ...

    def delete(self, service: str, name: str) -> bool: ...


SecretBackendFactory = Callable[["Config"], SecretBackend]


class SecretBackendError(Exception):
    """Raised by a secret backend for an OS-level failure; rt.secrets turns it into ``rt.SecretsError``.

    ``code`` is one of the ``ERR_SECRETS_*`` codes (``ERR_SECRETS_PLATFORM_ERROR``, ``ERR_SECRETS_UNAVAILABLE``,
    ``ERR_SECRETS_ACCESS_DENIED`` ...). The message must never contain the secret value.
    """

    def __init__(self, message: str, code: str = "ERR_SECRETS_PLATFORM_ERROR") -> None:
        super().__init__(message)
        self.code = code


# --- HMAC algorithms --------------------------------------------------------------------------------------


class HashObject(Protocol):
    """What ``hmac`` needs from a digest: a hashlib-style object."""

    digest_size: int
    block_size: int

    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...

    def copy(self) -> HashObject: ...


DigestFactory = Callable[[], HashObject]
"""A zero-argument constructor of a fresh hash object, as ``hmac.new(key, msg, digestmod=factory)`` takes."""


# --- test reporters ---------------------------------------------------------------------------------------


@runtime_checkable
class Reporter(Protocol):
    """Receives the test run as a stream of :mod:`rt.events` events, in order and never concurrently
    (concurrent tests report from the event loop's thread while the main thread waits).

    A reporter writes somewhere (the console, a JUnit file, CI annotations). ``close`` is called once after
    the final ``RunFinished`` event, also when the run was aborted.
    """

    def handle(self, event: TestEvent) -> None: ...

    def close(self) -> None: ...


@attrs.frozen
class ReporterContext:
    """What decides which registered reporters run (``rt test`` builds it once per run).

    A reporter factory may carry a callable attribute ``enabled(context) -> bool``: that is its rule for
    switching itself on (a flag, an environment variable, CI detection). A factory without one runs only when
    it is named with ``--reporter NAME``. The built-in reporters (console, dots, agent, junit, github) follow
    the same contract, so a plugin can replace any of them.
    """

    selected: frozenset[str] = frozenset()  # names given with --reporter (comma-separated) / --dots
    environ: Any = attrs.field(factory=dict, repr=False)  # a Mapping[str, str]: os.environ for a real run
    agent: bool = False  # AGENT=1, CLAUDECODE or REPL_ID (REFERENCE.md)
    ci: bool = False  # CI=true/1 or a known CI's own variable
    tty: bool = False  # stderr is a terminal


@attrs.frozen
class ReporterOptions:
    """What a reporter factory is given: where to write and how."""

    outfile: str | None = None
    colors: bool = False
    agent: bool = False
    stream: Any = None  # a text stream; None means sys.stderr/sys.stdout as the reporter sees fit
    context: ReporterContext | None = None  # the run's context (which other reporters were asked for ...)


ReporterFactory = Callable[[ReporterOptions], Reporter]


# --- transports -------------------------------------------------------------------------------------------


@runtime_checkable
class Transport(Protocol):
    """A way for ``rt.serve`` to accept byte streams: TCP, Unix sockets, TLS, in-memory for tests.

    ``listen`` returns an anyio ``Listener`` of byte streams; ``url`` describes where a client reaches it
    (``http://127.0.0.1:3000/``, ``unix:/run/app.sock``), used for ``server.url``.
    """

    name: str

    async def listen(self, options: ListenOptions) -> Listener[ByteStream]: ...

    def url(self, listener: Listener[ByteStream], options: ListenOptions) -> str: ...


TransportFactory = Callable[[], Transport]


# --- WebSocket compressors --------------------------------------------------------------------------------


@runtime_checkable
class Compressor(Protocol):
    """Compresses or decompresses WebSocket message payloads (permessage-deflate and friends).

    ``compress``/``decompress`` take one whole message; ``decompress`` must refuse to produce more than
    ``max_size`` bytes (raise ``ValueError``), so a small frame cannot inflate into a huge allocation.
    ``reset`` drops any context kept between messages.
    """

    def compress(self, data: bytes) -> bytes: ...

    def decompress(self, data: bytes, max_size: int) -> bytes: ...

    def reset(self) -> None: ...


CompressorFactory = Callable[["CompressorOptions"], Compressor]


# --- pub/sub brokers --------------------------------------------------------------------------------------


@runtime_checkable
class Broker(Protocol):
    """Carries ``publish`` across server processes (Redis pub/sub and the like).

    A server delivers every message to its local subscribers itself, then hands it to the broker; the broker
    carries it to the other processes, whose servers deliver it to their own subscribers. The calls a
    server makes while fanning out (``publish``, ``subscribe``, ``unsubscribe``) are synchronous and must
    never wait on the network: a broker queues them and its own tasks do the I/O, so a slow or absent
    broker never stalls the event loop or local delivery.

    - ``origin`` names this broker instance (one per server process); a broker never hands a server the
      messages it published itself, so nothing is delivered twice.
    - ``max_message_bytes``: a server refuses to publish a larger payload (``ValueError``) when a broker is
      attached, before delivering it anywhere.
    - ``run(deliver)`` connects, stays connected (reconnecting and re-subscribing after a failure) and calls
      ``deliver(topic, payload, is_text)`` for each message from another process, until cancelled.
    - ``subscribe``/``unsubscribe``: the set of topics this process has local subscribers for; the server
      calls them when a topic gains its first and loses its last subscriber.
    - ``publish`` must not raise for a broker that is down: it counts and logs what it could not send.
    - ``aclose`` sends what is still queued (briefly) and disconnects.
    """

    origin: str
    max_message_bytes: int

    async def run(self, deliver: Callable[[str, bytes, bool], None]) -> None: ...

    def publish(self, topic: str, payload: bytes, *, is_text: bool) -> None: ...

    def subscribe(self, topic: str) -> None: ...

    def unsubscribe(self, topic: str) -> None: ...

    async def aclose(self) -> None: ...


BrokerFactory = Callable[[str, "Config"], Broker]
"""``factory(url, config)``: the broker for a URL whose scheme is the name it was registered under."""


_HTTP_OPTIONS = ("CompressorOptions", "ListenOptions")


def __getattr__(name: str) -> Any:
    """``ListenOptions`` and ``CompressorOptions``, imported from :mod:`rt._http_interfaces` when first read."""
    if name in _HTTP_OPTIONS:
        from rt import _http_interfaces

        value = getattr(_http_interfaces, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
