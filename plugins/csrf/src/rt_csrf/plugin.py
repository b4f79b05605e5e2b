"""Hook implementations of rt-csrf: the entry point `csrf` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used, so hashlib, hmac
and the token code are imported inside the hooks and the namespace loader, not at module level.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rt.hookspecs import hookimpl
from rt.interfaces import KernelView, NamespaceEntry


def _load_csrf(kernel: KernelView) -> Any:
    """``rt.CSRF`` for the kernel resolving it, holding that kernel's HMAC algorithms."""
    from rt_csrf.csrf import CSRF

    return CSRF(kernel)


@hookimpl
def rt_register_namespace(register: Callable[[NamespaceEntry], None]) -> None:
    register(NamespaceEntry("CSRF", _load_csrf, module="rt"))


@hookimpl
def rt_register_hmac_algorithms(register: Callable[[str, Any], None]) -> None:
    from rt_csrf.algorithms import BUILTIN_ALGORITHMS

    for name, factory in BUILTIN_ALGORITHMS.items():
        register(name, factory)
