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
from rt.errors import PluginNotInstalledError
from rt.plugins import PluginHost, PluginInfo

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
        self._lock = threading.RLock()
        self._apply_config_options()
        self.host.configure(self.config)

    # -- plugins -------------------------------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> str:
        """Register one more plugin object (tests, embedding). Caches of registered things are refreshed."""
        registered = self.host.register(plugin, name)
        self.host.check_pending()
        self._resolved.clear()
        self._apply_config_options()
        return registered

    def unregister(self, name: str) -> None:
        self.host.unregister(name)
        self._resolved.clear()

    def plugins(self) -> list[PluginInfo]:
        return self.host.plugins()

    def _apply_config_options(self) -> None:
        self.config.declare(r.value for r in self.host.config_options().values())
        disabled_sections = {
            section for section, dist in SECTION_TO_DISTRIBUTION.items()
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
                value = entry.value.load()
                self._resolved[key] = value
            return value

    def names(self, module: str = "rt") -> list[str]:
        return sorted(entry.value.name for entry in self.host.namespace().values() if entry.value.module == module)

    def _missing(self, module: str, name: str) -> AttributeError:
        distribution = NAME_TO_DISTRIBUTION.get(module, {}).get(name)
        if distribution is None:
            return AttributeError(f"module {module!r} has no attribute {name!r}")
        states = [p for p in self.host.plugins() if p.distribution == distribution]
        return PluginNotInstalledError(
            name if module == "rt" else f"test.{name}", distribution,
            disabled=any(p.disabled for p in states), installed=bool(states),
        )


_current: contextvars.ContextVar[Kernel | None] = contextvars.ContextVar("rt_kernel", default=None)
_default: Kernel | None = None
_default_lock = threading.Lock()


def get_kernel() -> Kernel:
    """The kernel in use in this context; the default one is created on first call."""
    kernel = _current.get()
    if kernel is not None:
        return kernel
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Kernel(Config.load(os.getcwd()))
    return _default


@contextlib.contextmanager
def use_kernel(kernel: Kernel) -> Iterator[Kernel]:
    """Make ``kernel`` the one ``rt.`` names resolve through, in this context (and tasks started from it)."""
    token = _current.set(kernel)
    try:
        yield kernel
    finally:
        _current.reset(token)
