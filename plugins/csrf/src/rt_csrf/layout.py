"""The raw token layout of the reference runtime (REFERENCE.md, "CSRF"), before encoding.

    bytes  0..8   issue time, milliseconds since the Unix epoch, u64 big-endian
    bytes  8..24  random nonce
    bytes 24..32  expires_in in milliseconds, u64 big-endian (0: the token never expires by itself)
    bytes 32..    HMAC(secret, bytes 0..32 + session_id as UTF-8, or nothing)

Keeping this byte-for-byte is what makes tokens portable between rt and the reference runtime.
"""

from __future__ import annotations

import struct

NONCE_SIZE = 16
HEADER_SIZE = 32
MIN_RAW_SIZE = 64  # the reference refuses anything shorter (a 32-byte signature is the shortest)
MAX_RAW_SIZE = 96  # ... or longer (a 64-byte signature is the longest)
U64_MAX = 2**64 - 1

_HEADER = struct.Struct(">Q16sQ")
_U64 = struct.Struct(">Q")


def pack_header(timestamp_ms: int, nonce: bytes, expires_in_ms: int) -> bytes:
    """Bytes 0..32: the part the HMAC signs (followed by the session id)."""
    return _HEADER.pack(timestamp_ms, nonce, expires_in_ms)


def unpack_times(raw: bytes) -> tuple[int, int]:
    """``(timestamp_ms, expires_in_ms)`` of a raw token of at least :data:`HEADER_SIZE` bytes."""
    return _U64.unpack_from(raw, 0)[0], _U64.unpack_from(raw, 24)[0]


def is_expired(timestamp_ms: int, expires_in_ms: int, now_ms: int, max_age_ms: int) -> bool:
    """The two independent age checks: the token's own ``expires_in`` and the verifier's ``max_age``.

    Either one set to 0 is switched off. A token dated in the future is not refused (as in the reference).
    """
    if expires_in_ms > 0 and now_ms > timestamp_ms + expires_in_ms:
        return True
    return max_age_ms > 0 and now_ms > timestamp_ms + max_age_ms
