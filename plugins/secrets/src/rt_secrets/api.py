"""``rt.secrets``: async get/set/delete over the backend chosen in the current kernel's configuration.

Why this layer exists on top of the backends: it owns the rules every backend shares (argument checks with
the reference messages, empty value deletes, the value-length limit), runs the blocking backend call on a
worker thread through anyio with a bounded limiter (so a burst of calls cannot start a thread each), and
turns :class:`rt.interfaces.SecretBackendError` into :class:`rt_secrets.errors.SecretsError`.
"""

from __future__ import annotations

import functools
import weakref
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

from rt.interfaces import SecretBackend, SecretBackendError
from rt_secrets import errors
from rt_secrets.errors import (
    InvalidSecretArgumentType,
    InvalidSecretArgumentValue,
    SecretsError,
    SecretValueTooLongError,
)

if TYPE_CHECKING:
    from rt.interfaces import KernelView


DEFAULT_MAX_THREADS = 8

# One limiter per event loop: an anyio limiter belongs to the loop that first uses it, and tests run both
# asyncio and trio in one process.
_limiter: RunVar[anyio.CapacityLimiter] = RunVar("rt_secrets_limiter")

# One backend instance per kernel and name, so the memory backend keeps its values for the kernel's life and
# a test's fresh kernel starts empty.
_backends: weakref.WeakKeyDictionary[KernelView, dict[str, SecretBackend]] = weakref.WeakKeyDictionary()


def _check_pair(service: object, name: object) -> None:
    if not isinstance(service, str) or not isinstance(name, str):
        raise InvalidSecretArgumentType(errors.MSG_NOT_STRINGS)
    if not service or not name:
        raise InvalidSecretArgumentValue(errors.MSG_EMPTY)


def _check_value(value: object) -> None:
    if not isinstance(value, str):
        raise InvalidSecretArgumentType(errors.MSG_VALUE_NOT_STRING)
    try:
        value.encode("utf-8")  # a lone surrogate would otherwise fail deep inside the OS store, unexplained
    except UnicodeEncodeError:
        raise InvalidSecretArgumentValue(errors.MSG_VALUE_NOT_UNICODE) from None


def _check_length(backend: SecretBackend, value: str) -> None:
    limit = backend.max_value_bytes
    if limit is None:
        return
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise SecretValueTooLongError(
            f"The value is {size} bytes (UTF-8); the {backend.name!r} secrets backend stores at most {limit} "
            "bytes on this platform (see docs/secrets.md, Limits)."
        )


def current_backend(kernel: KernelView | None = None) -> SecretBackend:
    """The backend named by ``[secrets] backend`` / ``RT_SECRETS_BACKEND`` in ``kernel`` (default: current).

    Each kernel keeps one instance per backend name, created by the registered factory on first use.
    """
    if kernel is None:
        from rt.kernel import get_kernel

        kernel = get_kernel()
    name = kernel.config.get("secrets.backend") or "keyring"
    per_kernel = _backends.setdefault(kernel, {})
    backend = per_kernel.get(name)
    if backend is not None:
        return backend
    registered = kernel.host.secret_backends()
    entry = registered.get(name)
    if entry is None:
        known = ", ".join(sorted(registered)) or "none"
        hint = " (pip install rt-filesecrets provides 'file')" if "file" not in registered else ""
        source = kernel.config.source("secrets.backend")
        raise SecretsError(
            f"Unknown secrets backend {name!r} (from {source}). Known backends: {known}{hint}.",
            errors.UNKNOWN_BACKEND,
        )
    try:
        created: SecretBackend = entry.value(kernel.config)
    except SecretBackendError as exc:
        raise SecretsError(str(exc), exc.code) from None
    per_kernel[name] = created
    return created


async def _run(kernel: KernelView, backend: SecretBackend, method: str, *args: Any) -> Any:
    """Run a blocking backend call on a worker thread, bounded by the per-loop limiter.

    Whatever the backend raises becomes a :class:`SecretsError` made here (an unexpected exception class is
    named, never its message, which could quote the value); :func:`_scrubbed` then drops its traceback and
    chain on the way out (in the public methods of :class:`Secrets`)."""
    try:
        limiter = _limiter.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(_max_threads(kernel))
        _limiter.set(limiter)
    func = getattr(backend, method)
    try:
        result = await anyio.to_thread.run_sync(functools.partial(func, *args), limiter=limiter)
        return result
    except SecretBackendError as exc:
        raise _secrets_error(exc) from None
    except Exception as exc:  # noqa: BLE001 - a backend's bug: named, never quoted
        raise SecretsError(
            f"The {backend.name!r} secrets backend failed: {type(exc).__module__}.{type(exc).__qualname__} "
            "(its message is not shown: it could contain the value).",
            errors.PLATFORM_ERROR,
        ) from None


def _secrets_error(exc: SecretBackendError) -> SecretsError:
    """The public error for a backend's: a too-long value stays a ``ValueError`` too, as docs/secrets.md says."""
    if exc.code == errors.VALUE_TOO_LONG:
        return SecretValueTooLongError(str(exc))
    return SecretsError(str(exc), exc.code)


def _scrubbed(exc: BaseException) -> BaseException:
    """``exc`` without a traceback below this module's entry point and without a chain, for every exception
    of an exception group too.

    Why: a traceback keeps every frame it passed through, with its local variables: ``value`` in
    ``Secrets.set``, the ``functools.partial`` holding it in anyio's thread call, the backend's ``set``
    frames and the raw D-Bus error's own frames in ``__context__``. Error reporters that capture locals
    (Sentry, rich tracebacks, ``traceback.TracebackException(capture_locals=True)``) would record the secret.
    What is left is the message, made here without the value, and the caller's own frames.
    """
    exc.__traceback__ = None
    exc.__context__ = None
    exc.__cause__ = None
    exc.__suppress_context__ = False
    if isinstance(exc, BaseExceptionGroup):
        for member in exc.exceptions:
            _scrubbed(member)
    return exc


def _max_threads(kernel: KernelView) -> int:
    value = kernel.config.get("secrets.max_threads", DEFAULT_MAX_THREADS)
    return max(1, int(value or DEFAULT_MAX_THREADS))


class Secrets:
    """The object behind ``rt.secrets``. Every method takes keyword or positional arguments.

    Each public method hands its work to a ``_get``/``_set``/``_delete`` coroutine and clears its own locals
    when that fails, so no frame left in a traceback holds a value (see :func:`_scrubbed`).

    The kernel makes one per kernel (``NamespaceEntry.load`` passes it the kernel), so a call uses that
    kernel's configuration and backends without looking the current kernel up. The module-level
    ``secrets`` (no kernel) serves code that imports it directly, through the kernel current at the call.
    """

    def __init__(self, kernel: KernelView | None = None) -> None:
        self._kernel = kernel

    def _current(self) -> KernelView:
        if self._kernel is not None:
            return self._kernel
        from rt.kernel import get_kernel

        return get_kernel()

    async def get(self, service: str | None = None, name: str | None = None) -> str | None:
        """The stored value of (service, name), or ``None`` when there is none."""
        try:
            return await _get(self._current(), service, name)
        except BaseException as exc:  # noqa: BLE001 - re-raised, scrubbed
            raise _scrubbed(exc)  # noqa: B904 - the chain is dropped on purpose: _scrubbed

    async def set(
        self, service: str | None = None, name: str | None = None, value: str | None = None
    ) -> None:
        """Store ``value`` for (service, name), replacing any previous one; an empty value deletes."""
        box = [value]
        value = None  # from here on only the list holds it, and it is emptied whatever happens
        try:
            await _set(self._current(), service, name, box)
        except BaseException as exc:  # noqa: BLE001 - re-raised, scrubbed
            box.clear()
            raise _scrubbed(exc)  # noqa: B904 - the chain is dropped on purpose: _scrubbed
        finally:
            box.clear()

    async def delete(self, service: str | None = None, name: str | None = None) -> bool:
        """Remove (service, name); ``True`` if something was deleted, ``False`` if there was nothing."""
        try:
            return await _delete(self._current(), service, name)
        except BaseException as exc:  # noqa: BLE001 - re-raised, scrubbed
            raise _scrubbed(exc)  # noqa: B904 - the chain is dropped on purpose: _scrubbed

    def __repr__(self) -> str:
        return "<rt.secrets>"


async def _get(kernel: KernelView, service: str | None, name: str | None) -> str | None:
    _check_pair(service, name)
    backend = current_backend(kernel)
    found: str | None = await _run(kernel, backend, "get", service, name)
    return found


async def _set(kernel: KernelView, service: str | None, name: str | None, box: list[str | None]) -> None:
    """``Secrets.set`` with the value in ``box``: its frames (and those below) are dropped from a failure's
    traceback, and ``Secrets.set``'s own frame keeps only the emptied list."""
    _check_pair(service, name)
    _check_value(box[0])
    service, name = cast(str, service), cast(str, name)
    backend = current_backend(kernel)
    if box[0] == "":
        await _run(kernel, backend, "delete", service, name)
        return
    _check_length(backend, cast(str, box[0]))
    await _run(kernel, backend, "set", service, name, box[0])


async def _delete(kernel: KernelView, service: str | None, name: str | None) -> bool:
    _check_pair(service, name)
    backend = current_backend(kernel)
    return bool(await _run(kernel, backend, "delete", service, name))


secrets = Secrets()
