"""Text encodings of the raw token: ``base64`` (padded), ``base64url`` (unpadded) and ``hex``.

Decoding follows the reference runtime's leniency (REFERENCE.md): one trailing NUL is dropped; base64 and
base64url trim surrounding whitespace and accept either alphabet, with or without padding; hex must be
even-length and all hex digits. Anything else decodes to ``None`` (never an exception), since ``verify``
must answer ``False`` for every malformed token.
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

ENCODINGS: Final = ("base64", "base64url", "hex")
ENCODING_ERROR: Final = "Invalid format: must be 'base64', 'base64url', or 'hex'"

# A valid token is at most 192 characters (96 bytes as hex); beyond this much surrounding whitespace the
# input is not a token, and refusing it up front bounds the work an attacker can ask of verify().
MAX_TOKEN_CHARS: Final = 4096

_WHITESPACE: Final = " \t\n\r\f\v"
_URL_TO_STANDARD: Final = str.maketrans("-_", "+/")


def encode(raw: bytes, encoding: str) -> str:
    if encoding == "base64url":
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    if encoding == "base64":
        return base64.b64encode(raw).decode("ascii")
    return raw.hex()


def decode(token: str, encoding: str) -> bytes | None:
    """The raw bytes of ``token``, or ``None`` when it is not well-formed in ``encoding``."""
    if len(token) > MAX_TOKEN_CHARS:
        return None
    if token.endswith("\x00"):
        token = token[:-1]
    if encoding == "hex":
        return _decode_hex(token)
    return _decode_base64(token)


def _decode_hex(token: str) -> bytes | None:
    if len(token) % 2:
        return None
    try:
        # unhexlify, unlike bytes.fromhex, refuses embedded whitespace, as the reference does
        return binascii.unhexlify(token.encode("ascii"))
    except (UnicodeEncodeError, binascii.Error):
        return None


def _decode_base64(token: str) -> bytes | None:
    text = token.strip(_WHITESPACE).translate(_URL_TO_STANDARD).rstrip("=")
    if len(text) % 4 == 1:
        return None
    text += "=" * (-len(text) % 4)
    try:
        return binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (UnicodeEncodeError, binascii.Error):
        return None
