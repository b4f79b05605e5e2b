"""rt: a Python runtime kernel whose facilities are plugins.

``import rt`` imports no plugin and almost nothing else: ``rt.CSRF``, ``rt.secrets``, ``rt.serve`` ... are
resolved on first use through the plugin that registered them (hook ``rt_register_namespace``). A name whose
plugin is not installed raises an error that names the distribution to install.
"""

from __future__ import annotations

# `typing` costs ~10 ms to import; type checkers treat this constant like typing.TYPE_CHECKING.
TYPE_CHECKING = False

__version__ = "0.1.0"

# The kernel's own public names; plugin names (rt.CSRF, rt.serve ...) are added by the installed plugins.
__all__ = [
    "BackendError",
    "Config",
    "ConfigError",
    "DuplicateRegistrationError",
    "Kernel",
    "PluginLoadError",
    "PluginNotInstalledError",
    "RtError",
    "get_kernel",
    "hookimpl",
    "hookspec",
    "resolve_backend",
    "run",
    "test",
    "use_kernel",
]

# Kernel names: imported from their module on first use, so that `import rt` stays cheap.
_KERNEL_NAMES = {
    "hookimpl": "rt.hookspecs",
    "hookspec": "rt.hookspecs",
    "Kernel": "rt.kernel",
    "get_kernel": "rt.kernel",
    "use_kernel": "rt.kernel",
    "Config": "rt.config",
    "run": "rt.backend",
    "resolve_backend": "rt.backend",
    "RtError": "rt.errors",
    "PluginNotInstalledError": "rt.errors",
    "PluginLoadError": "rt.errors",
    "ConfigError": "rt.errors",
    "BackendError": "rt.errors",
    "DuplicateRegistrationError": "rt.errors",
}

if TYPE_CHECKING:
    from typing import Any

    from rt.backend import resolve_backend, run
    from rt.config import Config
    from rt.errors import (
        BackendError,
        ConfigError,
        DuplicateRegistrationError,
        PluginLoadError,
        PluginNotInstalledError,
        RtError,
    )
    from rt.hookspecs import hookimpl, hookspec
    from rt.kernel import Kernel, get_kernel, use_kernel


_resolve = None  # rt.kernel.resolve_rt once bound: the per-read path is then one call (see __getattr__)


def __getattr__(name: str) -> Any:
    """Called for names not in this module's dict.

    Plugin names are resolved on every read, through the current kernel (so ``use_kernel`` works), which
    is why this path is kept short: once bound, every kernel name and ``rt.test`` are in the module dict
    and the only work left is ``_resolve`` (a context-variable read and a dict lookup).
    """
    if _resolve is not None:
        return _resolve(name)
    if name[:1] == "_":  # private names and submodules being imported never go through plugins
        raise AttributeError(f"module 'rt' has no attribute {name!r}")
    _bind_kernel_names()
    if name in globals():
        return globals()[name]
    return _resolve(name)  # type: ignore[misc]


def _bind_kernel_names() -> None:
    """Import the kernel's own names (and the rt.test submodule) into this module, then enable the fast path."""
    import importlib

    global _resolve
    for kernel_name, module in _KERNEL_NAMES.items():
        globals()[kernel_name] = getattr(importlib.import_module(module), kernel_name)
    importlib.import_module("rt.test")  # sets rt.test
    import sys
    import types

    from rt.kernel import resolve_rt

    class RtModule(types.ModuleType):
        """The class of the ``rt`` module: resolved plugin names become its properties (rt.kernel)."""

    sys.modules[__name__].__class__ = RtModule
    _resolve = resolve_rt


def __dir__() -> list[str]:
    """The kernel's names and the plugin names already read in this process, not every name a plugin offers.

    Tools that read every attribute of every loaded module would otherwise import every installed plugin
    through ``dir(rt)``: freezegun does so at each ``freeze_time`` (then scans the 200-odd modules that
    brought in at every later one), as do ``inspect.getmembers`` and ``mock.create_autospec``. The full list
    is ``rt.get_kernel().names()``. No kernel is built here either: listing names loads nothing.
    """
    from rt.kernel import loaded_rt_names

    return sorted({*globals(), *_KERNEL_NAMES, "test", *loaded_rt_names()})
