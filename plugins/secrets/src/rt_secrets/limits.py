"""The largest value each OS store takes, so rt refuses a longer one with a clear error before the OS call.

Why our own table: the OS limits surface as vague platform errors (Windows: "Stub received bad data"), and
keyring does not expose them. Values are measured in UTF-8 bytes, the form rt's API promises.

- Windows Credential Manager: a credential blob holds at most 2560 bytes (CRED_MAX_CREDENTIAL_BLOB_SIZE) and
  keyring stores the value as UTF-16, so rt allows 2048 UTF-8 bytes *and* at most 1280 UTF-16 code units.
- macOS Keychain: no small hard limit; rt keeps the reference runtime's 4096 bytes so code stays portable.
- Linux Secret Service: no fixed limit (D-Bus messages may be 128 MiB); rt keeps 4096 bytes, for the
  same reason.
"""

from __future__ import annotations

import sys

WINDOWS_MAX_VALUE_BYTES = 2048
WINDOWS_MAX_UTF16_UNITS = 2560 // 2
DEFAULT_MAX_VALUE_BYTES = 4096


def platform_max_value_bytes(platform: str = sys.platform) -> int:
    """The UTF-8 byte limit rt applies to values for the OS store of ``platform``."""
    if platform.startswith("win"):
        return WINDOWS_MAX_VALUE_BYTES
    return DEFAULT_MAX_VALUE_BYTES


def utf16_units(value: str) -> int:
    """How many UTF-16 code units ``value`` takes (characters outside the BMP take two)."""
    return len(value.encode("utf-16-le")) // 2
