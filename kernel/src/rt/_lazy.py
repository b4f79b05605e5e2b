"""Module-level ``__getattr__`` for ``rt`` and ``rt.test``: names resolve through the kernel on first use."""

from __future__ import annotations

import sys
from typing import Any

from rt.errors import PluginNotInstalledError
from rt.kernel import get_kernel


def _called_by_from_import(frame_depth: int) -> bool:
    """True when the attribute is being read by ``from rt import NAME``.

    Python turns an AttributeError raised there into a generic "cannot import name" ImportError and drops
    our message (which names the distribution to install). Looking at the importing frame's current opcode
    is the only way to tell; it is done on the error path only.
    """
    import opcode

    frame = sys._getframe(frame_depth + 1)
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == opcode.opmap["IMPORT_FROM"]


def resolve(module: str, name: str) -> Any:
    """Resolve ``module.name`` through the current kernel; called from the module's ``__getattr__``."""
    try:
        return get_kernel().resolve(module, name)
    except PluginNotInstalledError as exc:
        if _called_by_from_import(2):
            raise ModuleNotFoundError(str(exc), name=exc.distribution) from None
        raise
