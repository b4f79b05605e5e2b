"""Everything ``generate``/``verify`` can work out once per (kernel registry, secret, encoding, algorithm).

A web application calls ``rt.CSRF`` with the same secret, encoding and algorithm on every request. Checking
those arguments, looking the algorithm up and keying the HMAC each time cost more than signing the token
(bench/csrf.py), so the result is cached as a :class:`Profile`. Only argument combinations that passed every
check are cached, so a bad argument always raises.

The cache key holds the algorithm registry (``kernel.host.hmac_algorithms()``) by identity: the kernel builds
a new registry dict whenever a plugin is registered or unregistered, and each kernel has its own, so
profiles never outlive the registry they were made from and there is nothing of ours to invalidate.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from rt_csrf.encoding import ENCODING_ERROR, ENCODINGS, decoder, encoder
from rt_csrf.layout import HEADER_SIZE, MAX_RAW_SIZE, MIN_RAW_SIZE
from rt_csrf.signing import KeyedMac, keyed_mac, utf8

SECRET_ERROR: Final = "Secret must be a non-empty string"
ALGORITHM_ERROR: Final = "Algorithm not supported"
DEFAULT_SECRET_BYTES: Final = 32
_MAX_PROFILES: Final = 256  # bounded, because secrets are caller input; real programs use one or two


@attrs.frozen
class Profile:
    """A validated (secret, encoding, algorithm) with its keyed HMAC. The repr never shows the secret."""

    registry: Mapping[str, Any] = attrs.field(repr=False, eq=False)
    algorithm: str
    encoding: str
    mac: KeyedMac = attrs.field(repr=False, eq=False)
    encode: Callable[[bytes], str] = attrs.field(repr=False, eq=False)
    decode: Callable[[str], bytes | None] = attrs.field(repr=False, eq=False)
    token_size: int  # raw bytes: the 32-byte header plus this algorithm's signature


class _ThreadSecret(threading.local):
    """The spec's default secret: random, in memory, unique per thread."""

    value: bytes | None = None


_thread_secret = _ThreadSecret()
_profiles: dict[tuple[int, str | bytes, str, str], Profile] = {}
_lock = threading.Lock()


def _forget_after_fork() -> None:
    """A forked worker gets default secrets of its own: the spec's default is per thread and per process."""
    global _thread_secret
    _thread_secret = _ThreadSecret()
    _profiles.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def thread_secret() -> bytes:
    value = _thread_secret.value
    if value is None:
        value = _thread_secret.value = secrets.token_bytes(DEFAULT_SECRET_BYTES)
    return value


def profile_for(registry: Mapping[str, Any], secret: object, encoding: object, algorithm: object) -> Profile:
    """The cached profile for these options under ``registry``, made (and the options checked) on first use."""
    if secret is None:
        secret = _thread_secret.value or thread_secret()  # bytes: never equal to an explicit (str) secret
    elif type(secret) is not str:
        return _make_profile(registry, secret, encoding, algorithm)  # raises the right TypeError
    try:
        # The profile keeps ``registry`` alive, so its id cannot be reused while the entry exists.
        return _profiles[(id(registry), secret, encoding, algorithm)]  # type: ignore[index]
    except (KeyError, TypeError):  # TypeError: an unhashable encoding or algorithm, which the checks name
        return _make_profile(registry, secret, encoding, algorithm)


def _make_profile(
    registry: Mapping[str, Any], secret: object, encoding: object, algorithm: object
) -> Profile:
    _check_secret(secret)
    _check_encoding(encoding)
    factory = _digest_factory(registry, algorithm)
    assert isinstance(secret, (str, bytes)) and isinstance(encoding, str) and isinstance(algorithm, str)
    mac = keyed_mac(factory, secret if isinstance(secret, bytes) else utf8(secret))
    _check_signature_size(algorithm, mac)
    profile = Profile(
        registry,
        algorithm,
        encoding,
        mac,
        encoder(encoding),
        decoder(encoding),
        HEADER_SIZE + mac.digest_size,
    )
    with _lock:
        if len(_profiles) >= _MAX_PROFILES:
            _profiles.clear()
        _profiles[(id(registry), secret, encoding, algorithm)] = profile
    return profile


def _check_secret(secret: object) -> None:
    if isinstance(secret, bytes) and secret is thread_secret():
        return
    if not isinstance(secret, str):
        raise TypeError(SECRET_ERROR)
    if not secret:
        raise ValueError(SECRET_ERROR)


def _check_encoding(encoding: object) -> None:
    if not isinstance(encoding, str):
        raise TypeError(ENCODING_ERROR)
    if encoding not in ENCODINGS:
        raise ValueError(ENCODING_ERROR)


def _digest_factory(registry: Mapping[str, Any], algorithm: object) -> Callable[[], Any]:
    """The factory of ``algorithm`` in ``registry`` (the kernel's registry as it is now: rt.CSRF refreshes it
    before asking, so an algorithm registered after the object was made is found)."""
    if not isinstance(algorithm, str):
        raise TypeError(ALGORITHM_ERROR)
    registered = registry.get(algorithm)
    if registered is None:
        raise ValueError(ALGORITHM_ERROR)
    factory: Callable[[], Any] = registered.value
    return factory


def _check_signature_size(algorithm: str, mac: KeyedMac) -> None:
    """The reference layout only has room for 32- to 64-byte signatures (tokens of 64 to 96 bytes)."""
    low, high = MIN_RAW_SIZE - HEADER_SIZE, MAX_RAW_SIZE - HEADER_SIZE
    if not low <= mac.digest_size <= high:
        raise ValueError(
            f"Algorithm {algorithm!r} makes {mac.digest_size}-byte signatures; rt.CSRF tokens (the reference "
            f"layout) need {low} to {high}"
        )
