"""The contracts that registered things implement.

A third-party plugin depends on ``rt-kernel`` alone and codes against these Protocols and the event types in
:mod:`rt.events`; it never imports another rt plugin. Every hook in :mod:`rt.hookspecs` registers one of these.
They are ``typing.Protocol`` classes, so an implementation does not inherit from them; ``runtime_checkable``
lets the kernel reject an object that lacks a method with a clear error at registration time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:  # only for annotations: keeps `import rt.interfaces` from importing anyio or argparse
    import argparse

    from anyio.abc import ByteStream, Listener

    from rt.config import Config
    from rt.events import TestEvent
    from rt.kernel import Kernel


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


# --- commands -------------------------------------------------------------------------------------------


@attrs.frozen
class Command:
    """A subcommand of ``rt`` (``rt test``, ``rt secrets``, ``rt run`` ...).

    ``configure`` adds the command's arguments to its argparse sub-parser; ``run`` receives the parsed
    arguments and the kernel (whose config already includes the flags) and returns the exit code.
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Kernel], int]
    aliases: tuple[str, ...] = ()

    @classmethod
    def lazy(cls, name: str, help: str, configure: str, run: str, aliases: tuple[str, ...] = ()) -> Command:
        """A command whose ``configure`` and ``run`` are ``"module:function"`` targets, imported only when
        this command is the one being run (so ``rt --help`` does not import every plugin's command code)."""
        return cls(name, help, _deferred(configure), _deferred(run), aliases)


# --- names on rt. -----------------------------------------------------------------------------------------


@attrs.frozen
class NamespaceEntry:
    """A name on ``rt.`` (``module="rt"``) or ``rt.test`` (``module="rt.test"``), resolved on first use.

    ``load`` is called once, on the first attribute access, so a plugin can keep its heavy imports inside it
    and ``import rt`` stays cheap.
    """

    name: str
    load: Callable[[], Any]
    module: str = "rt"

    @classmethod
    def lazy(cls, name: str, target: str, module: str = "rt") -> NamespaceEntry:
        """An entry whose object is ``"package.module:attribute"``, imported on first access."""
        return cls(name, lambda: import_target(target), module)


# --- configuration ----------------------------------------------------------------------------------------


@attrs.frozen
class ConfigOption:
    """One key a plugin reads from ``[section]`` of rt.toml / ``[tool.rt.section]`` of pyproject.toml.

    ``type`` is one of ``str``, ``int``, ``float``, ``bool`` or ``list`` (of strings). The environment variable
    defaults to ``RT_<SECTION>_<KEY>`` (``RT_<KEY>`` for the top-level section ``""``), upper-cased with dashes
    as underscores; set ``env`` to choose another name, or ``env=""`` for none. ``secret=True`` keeps the
    value out of every message and of :meth:`rt.config.Config.as_dict`.
    """

    section: str
    key: str
    type: type
    default: Any = None
    help: str = ""
    env: str | None = None
    choices: tuple[Any, ...] | None = None
    secret: bool = False  # a passphrase or token: never shown in errors, reprs or dumps of the configuration

    @property
    def env_name(self) -> str | None:
        if self.env is not None:
            return self.env or None
        parts = ["RT", self.section, self.key] if self.section else ["RT", self.key]
        return "_".join(p for p in parts if p).upper().replace("-", "_").replace(".", "_")

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.key}" if self.section else self.key


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


@attrs.frozen
class ListenOptions:
    """Where a server should listen. Each transport reads the fields it understands."""

    hostname: str = "127.0.0.1"
    port: int = 0
    unix: str | None = None
    tls: Any = None  # an ssl.SSLContext
    backlog: int = 1024
    reuse_port: bool = False


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


@attrs.frozen
class CompressorOptions:
    """Parameters negotiated for one direction of one connection (or shared by all, for ``shared``)."""

    window_bits: int = 15
    mem_level: int = 8
    no_context_takeover: bool = False


CompressorFactory = Callable[[CompressorOptions], Compressor]


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
