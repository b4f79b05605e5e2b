"""rt: a Python runtime kernel whose facilities are plugins.

``import rt`` imports no plugin and almost nothing else: ``rt.CSRF``, ``rt.secrets``, ``rt.serve`` ... are
resolved on first use through the plugin that registered them (hook ``rt_register_namespace``). A name whose
plugin is not installed raises an error that names the distribution to install.
"""

from __future__ import annotations

# `typing` costs ~10 ms to import; type checkers treat this constant like typing.TYPE_CHECKING.
TYPE_CHECKING = False

__version__ = "0.1.0"

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


def __getattr__(name: str) -> Any:
    module = _KERNEL_NAMES.get(name)
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name == "test":  # the real submodule rt.test, imported on first attribute access
        import importlib

        return importlib.import_module("rt.test")
    if name.startswith("_"):  # private names and submodules being imported never go through plugins
        raise AttributeError(f"module 'rt' has no attribute {name!r}")
    from rt._lazy import resolve

    return resolve("rt", name)


def __dir__() -> list[str]:
    from rt.kernel import get_kernel

    return sorted({*globals(), *_KERNEL_NAMES, "test", *get_kernel().names("rt")})
