"""The largest value each OS store takes, so rt refuses a longer one with a clear error before the OS call.

Why our own table: the OS limits surface as vague platform errors (Windows: "Stub received bad data"), and
keyring does not expose them. rt's API measures values in UTF-8 bytes (``max_value_bytes``); Windows is
checked in the form it stores.

- Windows Credential Manager: a credential blob holds at most 2560 bytes (CRED_MAX_CREDENTIAL_BLOB_SIZE), and
  keyring stores the value as UTF-16-LE, so a value may take at most 2560 bytes *as UTF-16* (1280 code units:
  1280 ASCII characters, or 1280 CJK ones, or 640 emoji). That is checked exactly by the keyring backend
  (:func:`windows_blob_bytes`); ``max_value_bytes`` is only the UTF-8 bound that no fitting value exceeds.
- Linux Secret Service: no fixed limit (D-Bus messages may be 128 MiB; gnome-keyring keeps the whole keyring
  in memory and rewrites its file on each change). The reference runtime stores 64 KB and 1 MiB values there
  (measured with gnome-keyring 42.1), and rt's tests store 1 MiB: rt allows 1 MiB, as much as `rt secrets set`
  reads from stdin.
- macOS Keychain: no documented small limit; rt allows 64 KiB, the size the reference runtime is known to
  store on Linux, so code that works on one desktop works on the other.
"""

from __future__ import annotations

import sys
from typing import Final

WINDOWS_MAX_BLOB_BYTES: Final = 2560
WINDOWS_MAX_UTF16_UNITS: Final = WINDOWS_MAX_BLOB_BYTES // 2
WINDOWS_MAX_VALUE_BYTES: Final = WINDOWS_MAX_UTF16_UNITS * 3  # 1280 BMP characters of 3 UTF-8 bytes each
SECRET_SERVICE_MAX_VALUE_BYTES: Final = 1024 * 1024
KEYCHAIN_MAX_VALUE_BYTES: Final = 64 * 1024


def platform_max_value_bytes(platform: str = sys.platform) -> int:
    """The UTF-8 byte limit rt applies to values for the OS store of ``platform``."""
    if platform.startswith("win"):
        return WINDOWS_MAX_VALUE_BYTES
    if platform == "darwin":
        return KEYCHAIN_MAX_VALUE_BYTES
    return SECRET_SERVICE_MAX_VALUE_BYTES


def windows_blob_bytes(value: str) -> int:
    """How many bytes ``value`` takes in a Windows credential blob (UTF-16-LE, as keyring writes it)."""
    return len(value.encode("utf-16-le", "surrogatepass"))


def utf16_units(value: str) -> int:
    """How many UTF-16 code units ``value`` takes (characters outside the BMP take two)."""
    return windows_blob_bytes(value) // 2
