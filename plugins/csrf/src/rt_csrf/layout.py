"""The raw token layout of the reference runtime (REFERENCE.md, "CSRF"), before encoding.

    bytes  0..8   issue time, milliseconds since the Unix epoch, u64 big-endian
    bytes  8..24  random nonce
    bytes 24..32  expires_in in milliseconds, u64 big-endian (0: the token never expires by itself)
    bytes 32..    HMAC(secret, bytes 0..32 + session_id as UTF-8, or nothing)

Keeping this byte-for-byte is what makes tokens portable between rt and the reference runtime.
"""

from __future__ import annotations

import struct
from typing import Final

NONCE_SIZE: Final = 16
HEADER_SIZE: Final = 32
MIN_RAW_SIZE: Final = 64  # the reference refuses anything shorter (a 32-byte signature is the shortest)
MAX_RAW_SIZE: Final = 96  # ... or longer (a 64-byte signature is the longest)
U64_MAX: Final = 2**64 - 1

HEADER: Final = struct.Struct(">Q16sQ")
"""``HEADER.pack(timestamp_ms, nonce, expires_in_ms)`` is bytes 0..32, the part the HMAC signs (followed by the
session id)."""

TIMES: Final = struct.Struct(">Q16xQ")
"""``TIMES.unpack_from(raw)`` is ``(timestamp_ms, expires_in_ms)``, skipping the nonce."""
