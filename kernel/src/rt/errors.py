"""Errors the kernel raises. Each says what went wrong *and* what to do about it."""

from __future__ import annotations


class RtError(Exception):
    """Base class of every error rt raises on purpose."""


class PluginNotInstalledError(AttributeError):
    """A name on ``rt.`` (or ``rt.test``) belongs to a plugin distribution that is not installed.

    It is an ``AttributeError`` so that ``hasattr(rt, "CSRF")`` is simply False without the plugin; the
    message names the distribution to install. ``from rt import CSRF`` gets the same message as a
    ``ModuleNotFoundError`` (see ``rt.__getattr__``).
    """

    def __init__(
        self, name: str, distribution: str, *, disabled: bool = False, installed: bool = False
    ) -> None:
        self.name = name
        self.distribution = distribution
        self.disabled = disabled
        self.installed = installed
        if installed and not disabled:
            message = (
                f"rt.{name} is provided by the plugin distribution {distribution!r}, which is installed but does "
                f"not provide it in this version: pip install --upgrade {distribution}"
            )
        elif disabled:
            message = (
                f"rt.{name} is provided by the plugin distribution {distribution!r}, which is installed but "
                f"disabled (RT_DISABLE_PLUGINS or [plugins] disable)"
            )
        else:
            message = (
                f"rt.{name} is provided by the plugin distribution {distribution!r}, which is not installed: "
                f"pip install {distribution}   (or: uv add {distribution})"
            )
        super().__init__(message)


class PluginLoadError(RtError):
    """A plugin could not be imported, or its hooks do not match the kernel's specifications."""


class DuplicateRegistrationError(RtError):
    """Two plugins registered the same name for the same kind of thing."""


class ConfigError(RtError):
    """A configuration file, variable or flag is invalid. The message names the file (or variable) and key."""


class BackendError(RtError):
    """The requested async backend is unknown or not installed."""
