"""rt.secrets: the OS credential store (Keychain, Secret Service, Credential Manager) from async Python.

Use it as ``rt.secrets`` (``await rt.secrets.get("my-cli", "alice")``); ``rt.SecretsError`` is the error type.
"""

from __future__ import annotations

from rt_secrets.errors import SecretsError

__all__ = ["SecretsError"]
