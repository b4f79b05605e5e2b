"""The encrypted file's format: a small header, then AES-256-GCM over the JSON of all secrets.

Layout (version 2, written since scrypt's cost moved to current recommendations)::

    MAGIC_V2 (8) | mode (1: 1 passphrase, 2 key file) | log2(N) (1) | r (1) | p (1) | salt (16) | nonce (12)
    | ciphertext

Version 1 files (``MAGIC_V1``, no cost bytes, scrypt n=2**15 r=8 p=1) are still read, and rewritten as
version 2 on the next change. The header is authenticated as associated data, so a changed mode, cost or
salt fails like a wrong key (an attacker cannot lower the cost of a file to speed up guessing).

Why these scrypt parameters: n=2**17, r=8, p=1 is OWASP's current minimum for scrypt (Password Storage Cheat
Sheet): 128 MiB of memory and about 0.3 s of one core (0.7 s measured on a loaded 2-core machine), paid once
per process per file, since the derived key is cached. The cost is what a passphrase guesser pays per guess.
A key file already holds random key material, so HKDF-SHA256 suffices there. Both use the file's salt.
"""

from __future__ import annotations

import os
from typing import Final

import attrs
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

MAGIC_V1: Final = b"RTSECv1\n"
MAGIC_V2: Final = b"RTSECv2\n"
MAGIC: Final = MAGIC_V2
MODE_PASSPHRASE: Final = 1
MODE_KEY_FILE: Final = 2
SALT_BYTES: Final = 16
NONCE_BYTES: Final = 12
TAG_BYTES: Final = 16


@attrs.frozen
class ScryptCost:
    """scrypt's parameters: N = 2**log2_n (CPU and memory), r (block size), p (parallelism)."""

    log2_n: int
    r: int
    p: int

    @property
    def memory_bytes(self) -> int:
        return int(128 * self.r * 2**self.log2_n)


SCRYPT_COST: Final = ScryptCost(17, 8, 1)  # OWASP's minimum for scrypt: 128 MiB
V1_SCRYPT_COST: Final = ScryptCost(15, 8, 1)  # what version 1 files used
# Refused when reading: a file asking for more would make every process that opens it allocate gigabytes.
MAX_LOG2_N: Final = 20


class WrongKeyError(Exception):
    """The file does not decrypt with this key (wrong passphrase or key file, or a modified file)."""


class FormatError(Exception):
    """The file is not an rt-filesecrets file."""


@attrs.frozen
class Header:
    mode: int
    salt: bytes = attrs.field(repr=False)
    nonce: bytes = attrs.field(repr=False)
    cost: ScryptCost = SCRYPT_COST
    version: int = 2

    def to_bytes(self) -> bytes:
        if self.version == 1:
            return MAGIC_V1 + bytes([self.mode]) + self.salt + self.nonce
        cost = bytes([self.cost.log2_n, self.cost.r, self.cost.p])
        return MAGIC_V2 + bytes([self.mode]) + cost + self.salt + self.nonce

    @property
    def size(self) -> int:
        return len(self.to_bytes())


def parse_header(blob: bytes) -> Header:
    if blob.startswith(MAGIC_V1):
        version, cost_bytes = 1, 0
    elif blob.startswith(MAGIC_V2):
        version, cost_bytes = 2, 3
    else:
        raise FormatError("not an rt-filesecrets file (bad header)")
    start = len(MAGIC_V2)
    header_bytes = start + 1 + cost_bytes + SALT_BYTES + NONCE_BYTES
    if len(blob) < header_bytes + TAG_BYTES:
        raise FormatError("not an rt-filesecrets file (truncated)")
    mode = blob[start]
    if mode not in (MODE_PASSPHRASE, MODE_KEY_FILE):
        raise FormatError(f"unknown key mode {mode}")
    cost = V1_SCRYPT_COST
    if version == 2:
        cost = ScryptCost(blob[start + 1], blob[start + 2], blob[start + 3])
        if not (10 <= cost.log2_n <= MAX_LOG2_N and 1 <= cost.r <= 32 and 1 <= cost.p <= 16):
            raise FormatError(f"unsupported scrypt cost (log2 N {cost.log2_n}, r {cost.r}, p {cost.p})")
    salt_at = start + 1 + cost_bytes
    return Header(mode, blob[salt_at : salt_at + SALT_BYTES], blob[salt_at + SALT_BYTES : header_bytes], cost,
                  version)  # fmt: skip


def derive_key(mode: int, material: bytes, salt: bytes, cost: ScryptCost = SCRYPT_COST) -> bytes:
    """A 32-byte AES key from a passphrase (scrypt at ``cost``) or key-file bytes (HKDF)."""
    if mode == MODE_PASSPHRASE:
        return Scrypt(salt=salt, length=32, n=2**cost.log2_n, r=cost.r, p=cost.p).derive(material)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=b"rt-filesecrets v1").derive(material)


def new_salt() -> bytes:
    return os.urandom(SALT_BYTES)


def seal(mode: int, salt: bytes, key: bytes, plaintext: bytes, cost: ScryptCost = SCRYPT_COST) -> bytes:
    """A version 2 file; ``key`` must have been derived with ``cost`` (for a passphrase)."""
    header = Header(mode, salt, os.urandom(NONCE_BYTES), cost)
    head = header.to_bytes()
    return head + AESGCM(key).encrypt(header.nonce, plaintext, head)


def open_sealed(blob: bytes, key: bytes) -> bytes:
    header = parse_header(blob)
    size = header.size
    try:
        return AESGCM(key).decrypt(header.nonce, blob[size:], blob[:size])
    except InvalidTag:
        raise WrongKeyError from None
