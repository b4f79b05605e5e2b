"""Text encodings of the raw token: ``base64`` (padded), ``base64url`` (unpadded) and ``hex``.

Decoding follows the reference runtime's leniency (REFERENCE.md): one trailing NUL is dropped; base64 and
base64url trim surrounding whitespace and accept either alphabet, with or without padding; hex must be
even-length and all hex digits. Anything else decodes to ``None`` (never an exception), since ``verify``
must answer ``False`` for every malformed token.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Final

ENCODINGS: Final = ("base64", "base64url", "hex")
ENCODING_ERROR: Final = "Invalid format: must be 'base64', 'base64url', or 'hex'"

# A valid token is at most 192 characters (96 bytes as hex); beyond this much surrounding whitespace the
# input is not a token, and refusing it up front bounds the work an attacker can ask of verify().
MAX_TOKEN_CHARS: Final = 4096

_WHITESPACE: Final = b" \t\n\r\f\v"
_STANDARD_TO_URL: Final = bytes.maketrans(b"+/", b"-_")
_URL_TO_STANDARD: Final = bytes.maketrans(b"-_", b"+/")  # bytes.translate: ~5x faster than str.translate
_PADDING: Final = (b"", b"===", b"==", b"=")  # by length % 4: 1 can never be valid, and "===" makes it fail


def encoder(encoding: str) -> Callable[[bytes], str]:
    """The function that writes a raw token in ``encoding``, as the reference runtime does."""
    return _ENCODERS[encoding]


def decoder(encoding: str) -> Callable[[str], bytes | None]:
    """The function that reads a token in ``encoding``: the raw bytes, or ``None`` when it is malformed."""
    return _decode_hex if encoding == "hex" else _decode_base64


def _encode_base64url(raw: bytes) -> str:
    return binascii.b2a_base64(raw, newline=False).translate(_STANDARD_TO_URL).rstrip(b"=").decode("ascii")


def _encode_base64(raw: bytes) -> str:
    return binascii.b2a_base64(raw, newline=False).decode("ascii")


def _encode_hex(raw: bytes) -> str:
    return raw.hex()


_ENCODERS: Final[dict[str, Callable[[bytes], str]]] = {
    "base64url": _encode_base64url,
    "base64": _encode_base64,
    "hex": _encode_hex,
}


# _decode_hex and _decode_base64 repeat their first lines instead of sharing a helper: verify() runs them on
# every request, and the extra call was measurable (bench/csrf.py).


def _decode_hex(token: str) -> bytes | None:
    if len(token) > MAX_TOKEN_CHARS:
        return None
    try:
        text = token.encode("ascii")
    except UnicodeEncodeError:
        return None
    if text.endswith(b"\x00"):
        text = text[:-1]
    if len(text) % 2:
        return None
    try:
        # unhexlify, unlike bytes.fromhex, refuses embedded whitespace, as the reference does
        return binascii.unhexlify(text)
    except binascii.Error:
        return None


def _decode_base64(token: str) -> bytes | None:
    if len(token) > MAX_TOKEN_CHARS:
        return None
    try:
        text = token.encode("ascii")
    except UnicodeEncodeError:
        return None
    if not text.endswith(b"==="):  # strict mode takes "QUJD====" (padding after a whole group): never here
        try:
            # The fast path: a token as rt and the reference write it (no NUL, no whitespace, padding right or
            # absent) decodes strictly at once, about 2.5x faster than the steps below (bench/csrf.py).
            # Anything else fails here and takes the lenient path, which accepts a superset and decodes these
            # the same.
            return binascii.a2b_base64(
                text.translate(_URL_TO_STANDARD) + _PADDING[len(text) % 4], strict_mode=True
            )
        except binascii.Error:
            pass
    if text.endswith(b"\x00"):
        text = text[:-1]
    text = text.strip(_WHITESPACE).translate(_URL_TO_STANDARD)
    unpadded = text.rstrip(b"=")
    if len(text) - len(unpadded) > 2 or len(unpadded) % 4 == 1:  # base64 never pads with more than two
        return None
    text = unpadded
    text += b"=" * (-len(text) % 4)
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except binascii.Error:
        return None
