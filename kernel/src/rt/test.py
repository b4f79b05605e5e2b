"""``rt.test``: the test-writing API (``from rt.test import test, expect``).

A real module whose names forward to the test-runner plugin (rt-testrunner). Without that plugin, using a
name fails with an error that says to install it.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(f"module 'rt.test' has no attribute {name!r}")
    from rt.kernel import resolve

    return resolve("rt.test", name)


def __dir__() -> list[str]:
    from rt.kernel import get_kernel

    return sorted({*globals(), *get_kernel().names("rt.test")})
