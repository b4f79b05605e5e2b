"""The six HMAC algorithms of the spec, as digest factories for ``hmac.new(key, digestmod=factory)``.

The plain SHA-2 names are hashlib's OpenSSL constructors themselves (not wrappers), because ``hmac`` only
takes its fast C path when ``digestmod`` is one of those; the BLAKE2b and SHA-512/256 variants need an
argument, so they are ``functools.partial`` objects and go through hmac's generic (still standard) path.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from typing import Any

DigestFactory = Callable[[], Any]


def _sha512_256() -> Any:
    """SHA-512/256 (FIPS 180-4), which hashlib only offers through OpenSSL's ``sha512_256``."""
    try:
        return hashlib.new("sha512_256")
    except ValueError as exc:  # an OpenSSL build without it: say so instead of a bare "unsupported hash type"
        raise ValueError(
            "Algorithm 'sha512-256' needs an OpenSSL with SHA-512/256 (hashlib.new('sha512_256') failed)"
        ) from exc


BUILTIN_ALGORITHMS: Mapping[str, DigestFactory] = {
    "blake2b256": functools.partial(hashlib.blake2b, digest_size=32),
    "blake2b512": hashlib.blake2b,
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
    "sha512-256": _sha512_256,
}
