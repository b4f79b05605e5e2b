"""The kernel's own hook implementations: it declares its configuration keys like any plugin."""

from __future__ import annotations

from collections.abc import Callable

from rt.config import KERNEL_OPTIONS, ConfigOption
from rt.hookspecs import hookimpl


@hookimpl
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    for option in KERNEL_OPTIONS:
        register(option)
