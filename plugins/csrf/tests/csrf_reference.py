"""The reference vectors, and an independent token codec built on hashlib/hmac only.

These helpers deliberately do not import rt_csrf: a test that decodes or forges tokens with them checks
rt's layout against REFERENCE.md, not against itself.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
# Made by the reference runtime; data/README.md says how.
VECTORS_PATH = Path(__file__).resolve().parent / "data" / "csrf-vectors.json"

# Independent digest constructors for each spec algorithm (REFERENCE.md: blake2b256 is BLAKE2b with a
# 32-byte digest, sha512-256 is SHA-512/256).
DIGESTS: dict[str, Callable[[], Any]] = {
    "blake2b256": lambda: hashlib.blake2b(digest_size=32),
    "blake2b512": lambda: hashlib.blake2b(digest_size=64),
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
    "sha512-256": lambda: hashlib.new("sha512_256"),
}
ENCODINGS = ("base64", "base64url", "hex")


def load_vectors() -> list[dict[str, Any]]:
    if not VECTORS_PATH.is_file():
        pytest.fail(
            f"the reference CSRF vectors are missing: expected {VECTORS_PATH} (part of the repository).",
            pytrace=False,
        )
    vectors: list[dict[str, Any]] = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    return vectors


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def to_raw(token: str, encoding: str) -> bytes:
    """Strict decoding of a token as the reference runtime writes it."""
    if encoding == "hex":
        return bytes.fromhex(token)
    if encoding == "base64":
        return base64.b64decode(token, validate=True)
    assert "=" not in token
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def from_raw(raw: bytes, encoding: str) -> str:
    if encoding == "hex":
        return raw.hex()
    if encoding == "base64":
        return base64.b64encode(raw).decode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def expected_signature(secret: str, raw_header: bytes, session_id: str | None, algorithm: str) -> bytes:
    message = raw_header + (session_id.encode("utf-8") if session_id is not None else b"")
    return hmac.new(secret.encode("utf-8"), message, DIGESTS[algorithm]).digest()


def forge(
    secret: str,
    *,
    timestamp_ms: int,
    expires_in_ms: int,
    session_id: str | None = None,
    algorithm: str = "sha256",
    encoding: str = "base64url",
    nonce: bytes = b"\x01" * 16,
) -> str:
    """A correctly signed token with any timestamp: how the tests make old tokens without waiting."""
    header = struct.pack(">Q16sQ", timestamp_ms, nonce, expires_in_ms)
    return from_raw(header + expected_signature(secret, header, session_id, algorithm), encoding)
