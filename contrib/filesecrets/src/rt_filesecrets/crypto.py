"""The encrypted file's format: a small header, then AES-256-GCM over the JSON of all secrets.

Layout: ``MAGIC`` (8 bytes) | mode (1 byte: 1 passphrase, 2 key file) | salt (16) | nonce (12) | ciphertext.
The header is authenticated as associated data, so a changed mode or salt fails like a wrong key.
A passphrase is stretched with scrypt (n=2**15, r=8, p=1: ~32 MiB and tens of ms, once per process); a key
file already holds random key material, so HKDF-SHA256 suffices. Both use the file's salt.
"""

from __future__ import annotations

import os

import attrs
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

MAGIC = b"RTSECv1\n"
MODE_PASSPHRASE = 1
MODE_KEY_FILE = 2
SALT_BYTES = 16
NONCE_BYTES = 12
HEADER_BYTES = len(MAGIC) + 1 + SALT_BYTES + NONCE_BYTES
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1


class WrongKeyError(Exception):
    """The file does not decrypt with this key (wrong passphrase or key file, or a modified file)."""


class FormatError(Exception):
    """The file is not an rt-filesecrets file."""


@attrs.frozen
class Header:
    mode: int
    salt: bytes = attrs.field(repr=False)
    nonce: bytes = attrs.field(repr=False)

    def to_bytes(self) -> bytes:
        return MAGIC + bytes([self.mode]) + self.salt + self.nonce


def parse_header(blob: bytes) -> Header:
    if len(blob) < HEADER_BYTES + 16 or not blob.startswith(MAGIC):
        raise FormatError("not an rt-filesecrets file (bad header)")
    mode = blob[len(MAGIC)]
    if mode not in (MODE_PASSPHRASE, MODE_KEY_FILE):
        raise FormatError(f"unknown key mode {mode}")
    start = len(MAGIC) + 1
    return Header(mode, blob[start:start + SALT_BYTES], blob[start + SALT_BYTES:HEADER_BYTES])


def derive_key(mode: int, material: bytes, salt: bytes) -> bytes:
    """A 32-byte AES key from a passphrase (scrypt) or key-file bytes (HKDF)."""
    if mode == MODE_PASSPHRASE:
        return Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P).derive(material)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=b"rt-filesecrets v1").derive(material)


def new_salt() -> bytes:
    return os.urandom(SALT_BYTES)


def seal(mode: int, salt: bytes, key: bytes, plaintext: bytes) -> bytes:
    header = Header(mode, salt, os.urandom(NONCE_BYTES))
    head = header.to_bytes()
    return head + AESGCM(key).encrypt(header.nonce, plaintext, head)


def open_sealed(blob: bytes, key: bytes) -> bytes:
    header = parse_header(blob)
    try:
        return AESGCM(key).decrypt(header.nonce, blob[HEADER_BYTES:], blob[:HEADER_BYTES])
    except InvalidTag:
        raise WrongKeyError from None
