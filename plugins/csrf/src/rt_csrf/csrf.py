"""``rt.CSRF``: generate and verify signed, expiring anti-forgery tokens (spec section B).

Tokens use the reference runtime's byte layout (:mod:`rt_csrf.layout`), so a token made here verifies there
and the other way round. ``verify`` answers ``False`` for every token that is malformed, forged, expired or
made for other options, and raises only for misuse, with the reference runtime's messages.
"""

from __future__ import annotations

import hmac
import math
import os
import secrets
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Final

from rt.kernel import get_kernel
from rt_csrf.encoding import ENCODING_ERROR, ENCODINGS, decode, encode
from rt_csrf.layout import (
    HEADER_SIZE,
    MAX_RAW_SIZE,
    MIN_RAW_SIZE,
    NONCE_SIZE,
    U64_MAX,
    is_expired,
    pack_header,
    unpack_times,
)
from rt_csrf.signing import KeyedMacCache, sign, utf8

SECRET_ERROR: Final = "Secret must be a non-empty string"
TOKEN_ERROR: Final = "Token must be a non-empty string"
ALGORITHM_ERROR: Final = "Algorithm not supported"
SESSION_ID_ERROR: Final = "Session ID must be a string"

DEFAULT_EXPIRES_IN_MS: Final = 86_400_000
DEFAULT_MAX_AGE_MS: Final = 86_400_000
DEFAULT_SECRET_BYTES: Final = 32

_ONE_MS: Final = timedelta(milliseconds=1)
_SIGNATURE_SIZES: Final = range(MIN_RAW_SIZE - HEADER_SIZE, MAX_RAW_SIZE - HEADER_SIZE + 1)

Duration = int | float | timedelta

_keyed_macs = KeyedMacCache()
_thread_state = threading.local()


class CSRF:
    """``rt.CSRF``: a namespace of two functions, as in the reference runtime (not meant to be instantiated)."""

    def __init__(self) -> None:
        raise TypeError("rt.CSRF is not instantiable; call rt.CSRF.generate() and rt.CSRF.verify()")

    @staticmethod
    def generate(
        secret: str | None = None,
        *,
        expires_in: Duration = DEFAULT_EXPIRES_IN_MS,
        encoding: str = "base64url",
        algorithm: str = "sha256",
        session_id: str | None = None,
    ) -> str:
        """A new token signed with ``secret`` (default: this thread's random secret).

        ``expires_in`` is in milliseconds (or a ``timedelta``); 0 makes a token that never expires by itself
        (``verify``'s ``max_age`` still applies). Pass ``session_id`` to bind the token to one session.
        """
        key = _secret_or_thread_default(secret)
        expires_in_ms = _duration_ms(expires_in, "expires_in")
        _check_encoding(encoding)
        keyed = _keyed_mac(algorithm, key)
        session = _session_bytes(session_id)
        header = pack_header(time.time_ns() // 1_000_000, os.urandom(NONCE_SIZE), expires_in_ms)
        return encode(header + sign(keyed, header + session), encoding)

    @staticmethod
    def verify(
        token: str,
        *,
        secret: str | None = None,
        max_age: Duration = DEFAULT_MAX_AGE_MS,
        encoding: str = "base64url",
        algorithm: str = "sha256",
        session_id: str | None = None,
    ) -> bool:
        """True only for a well-formed, unexpired token made with these options; never raises for a bad token.

        ``max_age`` (milliseconds or ``timedelta``) is checked against the token's issue time independently of
        the token's own expiry; 0 turns it off. The signature is compared with ``hmac.compare_digest``.
        """
        if not isinstance(token, str):
            raise TypeError(TOKEN_ERROR)
        if not token:
            raise ValueError(TOKEN_ERROR)
        key = _secret_or_thread_default(secret)
        max_age_ms = _duration_ms(max_age, "max_age")
        _check_encoding(encoding)
        keyed = _keyed_mac(algorithm, key)
        session = _session_bytes(session_id)

        raw = decode(token, encoding)
        if raw is None or len(raw) != HEADER_SIZE + keyed.digest_size:
            return False
        timestamp_ms, expires_in_ms = unpack_times(raw)
        if is_expired(timestamp_ms, expires_in_ms, time.time_ns() // 1_000_000, max_age_ms):
            return False
        expected = sign(keyed, raw[:HEADER_SIZE] + session)
        return hmac.compare_digest(expected, raw[HEADER_SIZE:])


# --- argument checks --------------------------------------------------------------------------------------


def _secret_or_thread_default(secret: object) -> str | bytes:
    """The signing key: the caller's secret, or a random one made once per thread (spec B: "unique per thread").

    The default is ``bytes`` and an explicit secret ``str``, so the two can never collide in the MAC cache.
    """
    if secret is None:
        default: bytes | None = getattr(_thread_state, "secret", None)
        if default is None:
            default = _thread_state.secret = secrets.token_bytes(DEFAULT_SECRET_BYTES)
        return default
    if not isinstance(secret, str):
        raise TypeError(SECRET_ERROR)
    if not secret:
        raise ValueError(SECRET_ERROR)
    return secret


def _duration_ms(value: object, name: str) -> int:
    """Milliseconds from an ``int``/``float`` of milliseconds or a ``timedelta``, within the u64 of the layout."""
    if isinstance(value, timedelta):
        ms = value // _ONE_MS
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f'The "{name}" option must be a number of milliseconds or a datetime.timedelta, '
            f"not {type(value).__name__}"
        )
    elif isinstance(value, float) and not math.isfinite(value):
        ms = -1  # reported as out of range below
    else:
        ms = int(value)
    if ms < 0 or ms > U64_MAX or (not isinstance(value, timedelta) and value < 0):
        raise ValueError(
            f'The value of "{name}" is out of range. It must be >= 0 and <= {U64_MAX} milliseconds. '
            f"Received {value!r}"
        )
    return ms


def _check_encoding(encoding: object) -> None:
    if not isinstance(encoding, str):
        raise TypeError(ENCODING_ERROR)
    if encoding not in ENCODINGS:
        raise ValueError(ENCODING_ERROR)


def _session_bytes(session_id: object) -> bytes:
    if session_id is None:
        return b""
    if not isinstance(session_id, str):
        raise TypeError(SESSION_ID_ERROR)
    return utf8(session_id)


def _digest_factory(algorithm: object) -> Callable[[], Any]:
    """The factory registered under ``algorithm`` through ``rt_register_hmac_algorithms`` in the current kernel.

    The kernel caches its registry and rebuilds it when a plugin is registered, so a seventh algorithm added
    at run time is found here without a cache of ours to invalidate.
    """
    if not isinstance(algorithm, str):
        raise TypeError(ALGORITHM_ERROR)
    registered = get_kernel().host.hmac_algorithms().get(algorithm)
    if registered is None:
        raise ValueError(ALGORITHM_ERROR)
    factory: Callable[[], Any] = registered.value
    return factory


def _keyed_mac(algorithm: object, key: str | bytes) -> hmac.HMAC:
    keyed = _keyed_macs.keyed(_digest_factory(algorithm), key)
    if keyed.digest_size not in _SIGNATURE_SIZES:
        raise ValueError(
            f"Algorithm {algorithm!r} makes {keyed.digest_size}-byte signatures; rt.CSRF tokens (the reference "
            f"layout) need {_SIGNATURE_SIZES.start} to {_SIGNATURE_SIZES.stop - 1}"
        )
    return keyed
