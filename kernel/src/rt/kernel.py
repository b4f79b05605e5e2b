"""A kernel instance: one configuration and one plugin host, and the namespace resolved through them.

``rt.get_kernel()`` returns the kernel in use: the one installed with :func:`use_kernel` in the current
context (the ``rt`` command and the test fixtures do this), else a default one created on first use from the
working directory's configuration. Nothing is loaded at import time.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rt import _builtin
from rt._known import NAME_TO_DISTRIBUTION, SECTION_TO_DISTRIBUTION
from rt.config import Config
from rt.errors import PluginLoadError, PluginNotInstalledError
from rt.plugins import PluginHost, PluginInfo, loading_plugin

_MISSING = object()


class Kernel:
    """Configuration plus plugins. Build one per program (or per test); they share nothing.

    ``load_entry_points=False`` gives a kernel with no installed plugin at all, for tests that register
    their own. ``plugins`` are extra ``(name, object)`` pairs registered after the entry points.
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        load_entry_points: bool = True,
        plugins: Iterable[tuple[str, object]] = (),
    ) -> None:
        _refuse_reentry()
        self.config = config if config is not None else Config.load()
        self.host = PluginHost()
        self.host.register(_builtin, "rt.kernel", internal=True)
        disabled = tuple(self.config.raw("plugins.disable") or ())
        if load_entry_points:
            self.host.load_entry_points(disabled=disabled)
        for name, plugin in plugins:
            self.host.register(plugin, name)
        self.host.check_pending()
        self._resolved: dict[tuple[str, str], Any] = {}
        self.rt_names: dict[str, Any] = {}
        """``rt.<name>`` objects already loaded: the dict ``rt.__getattr__`` reads first (one lookup)."""
        self._lock = threading.RLock()
        self._apply_config_options()
        self.host.configure(self.config)

    # -- plugins -------------------------------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> str:
        """Register one more plugin object (tests, embedding). Caches of registered things are refreshed."""
        registered = self.host.register(plugin, name)
        self.host.check_pending()
        self._forget_resolved()
        self._apply_config_options()
        return registered

    def unregister(self, name: str) -> None:
        self.host.unregister(name)
        self._forget_resolved()

    def _forget_resolved(self) -> None:
        with self._lock:
            self._resolved.clear()
            self.rt_names.clear()

    def plugins(self) -> list[PluginInfo]:
        return self.host.plugins()

    def _apply_config_options(self) -> None:
        self.config.declare(r.value for r in self.host.config_options().values())
        disabled_sections = {
            section
            for section, dist in SECTION_TO_DISTRIBUTION.items()
            if any(p.disabled and p.distribution == dist for p in self.host.plugins())
        }
        self.config.check_unknown_keys(disabled_sections)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Kernel:
        """Apply command-line values to this kernel's configuration (in place) and return the kernel."""
        if overrides:
            self.config = self.config.with_overrides(overrides)
        return self

    # -- the namespace -------------------------------------------------------------------------------------

    def resolve(self, module: str, name: str) -> Any:
        """The object behind ``rt.<name>`` (``module="rt"``) or ``rt.test.<name>``, loaded once."""
        key = (module, name)
        value = self._resolved.get(key, _MISSING)
        if value is not _MISSING:
            return value
        with self._lock:
            value = self._resolved.get(key, _MISSING)
            if value is _MISSING:
                entry = self.host.namespace().get(f"{module}:{name}")
                if entry is None:
                    raise self._missing(module, name)
                value = entry.value.load(self)
                self._resolved[key] = value
                if module == "rt":
                    self.rt_names[name] = value
            return value

    def names(self, module: str = "rt") -> list[str]:
        return sorted(
            entry.value.name for entry in self.host.namespace().values() if entry.value.module == module
        )

    def _missing(self, module: str, name: str) -> AttributeError:
        distribution = NAME_TO_DISTRIBUTION.get(module, {}).get(name)
        if distribution is None:
            return AttributeError(f"module {module!r} has no attribute {name!r}")
        states = [p for p in self.host.plugins() if p.distribution == distribution]
        return PluginNotInstalledError(
            name if module == "rt" else f"test.{name}",
            distribution,
            disabled=any(p.disabled for p in states),
            installed=bool(states),
        )


_current: contextvars.ContextVar[Kernel | None] = contextvars.ContextVar("rt_kernel", default=None)
_default: Kernel | None = None
_default_lock = threading.Lock()


def _refuse_reentry() -> None:
    """Fail, instead of deadlocking or recursing, when a kernel is built while this thread imports a plugin.

    That happens when a module imported by a plugin's entry point uses ``rt.`` at import time; in practice,
    a script named like a plugin's package (``rt_debug.py``) that is imported in the plugin's place.
    """
    loading = loading_plugin()
    if loading is not None:
        raise PluginLoadError(
            f"rt was used while importing plugin {loading}, before the kernel was ready: is a file of yours "
            f"named like that plugin's package (for example rt_debug.py)? Rename it"
        )


def get_kernel() -> Kernel:
    """The kernel in use in this context; the default one is created on first call."""
    kernel = _current.get()
    if kernel is not None:
        return kernel
    global _default
    if _default is None:
        _refuse_reentry()
        with _default_lock:
            if _default is None:
                _default = Kernel(Config.load(os.getcwd()))
    return _default


def loaded_rt_names() -> list[str]:
    """The ``rt.`` plugin names the kernel in use has resolved so far (none before a kernel exists)."""
    kernel = _current.get() or _default
    return [] if kernel is None else list(kernel.rt_names)


def resolve_rt(name: str) -> Any:
    """``rt.<name>`` for ``rt.__getattr__`` (the first read of a name); later reads skip ``__getattr__``.

    Python 3.11 builds and discards an AttributeError before it calls a module's ``__getattr__``, which
    alone costs more than a microsecond. So once a plugin name resolves, it becomes a property of the ``rt``
    module's class (:func:`install_reader`), read without any exception. ``rt.CSRF.verify(...)`` written
    without binding ``rt.CSRF`` pays this on every call (bench/csrf.py measures it).
    """
    if name[:1] == "_":  # dunder probes (copy, inspect, mock) and private names never load plugins
        raise AttributeError(f"module 'rt' has no attribute {name!r}")
    value = resolve("rt", name)
    install_reader(name)
    return value


def install_reader(name: str) -> None:
    """Make ``rt.<name>`` a property of the ``rt`` module's class that reads the current kernel's dict.

    The property still goes through the kernel in use on every read (``use_kernel`` switches what it
    returns), and a kernel without the name gives the usual error."""
    import sys

    module = sys.modules["rt"]
    cls = type(module)
    if cls is _ModuleType or name in vars(module) or name in vars(cls):
        return
    setattr(cls, name, property(_reader(name), doc=f"rt.{name}, resolved through the current kernel"))


def _reader(name: str) -> Any:
    def read(module: object) -> Any:
        kernel = _current.get() or _default
        if kernel is not None:
            try:
                return kernel.rt_names[name]
            except KeyError:
                pass
        return resolve("rt", name)

    read.__qualname__ = read.__name__ = f"rt.{name}"
    return read


_ModuleType = type(contextlib)


_OWN_FILES = {
    os.path.join(os.path.dirname(__file__), name) for name in ("__init__.py", "kernel.py", "test.py")
}


def _called_by_from_import() -> bool:
    """True when the attribute is being read by ``from rt import NAME``.

    Python turns an AttributeError raised there into a generic "cannot import name" ImportError and drops
    our message (which names the distribution to install). Looking at the importing frame's current opcode
    (the first frame outside rt's own lookup code) is the only way to tell; it is done on the error path only.
    """
    import opcode
    import sys

    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _OWN_FILES:
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return False
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == opcode.opmap["IMPORT_FROM"]


def resolve(module: str, name: str) -> Any:
    """Resolve ``module.name`` through the current kernel; called from ``rt``'s and ``rt.test``'s
    ``__getattr__``. A name whose plugin is missing read by ``from rt import NAME`` raises
    ModuleNotFoundError, whose message Python keeps."""
    try:
        return get_kernel().resolve(module, name)
    except PluginNotInstalledError as exc:
        if _called_by_from_import():
            raise ModuleNotFoundError(str(exc), name=exc.distribution) from None
        raise


@contextlib.contextmanager
def use_kernel(kernel: Kernel) -> Iterator[Kernel]:
    """Make ``kernel`` the one ``rt.`` names resolve through, in this context (and tasks started from it)."""
    token = _current.set(kernel)
    try:
        yield kernel
    finally:
        _current.reset(token)
