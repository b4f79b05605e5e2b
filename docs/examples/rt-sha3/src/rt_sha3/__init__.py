"""SHA-3 HMAC algorithms for rt.CSRF.

The kernel imports this module when the first ``rt.`` name is used and calls its hook implementations;
``register(name, factory)`` takes a zero-argument hash constructor, exactly what ``hmac.new`` accepts as
``digestmod``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from rt.hookspecs import hookimpl
from rt.interfaces import DigestFactory


@hookimpl
def rt_register_hmac_algorithms(register: Callable[[str, DigestFactory], None]) -> None:
    register("sha3-256", hashlib.sha3_256)
    register("sha3-512", hashlib.sha3_512)
