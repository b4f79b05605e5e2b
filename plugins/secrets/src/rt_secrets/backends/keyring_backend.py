"""``keyring``: the OS credential store, through the ``keyring`` package.

keyring picks macOS Keychain, the Linux Secret Service (gnome-keyring, KWallet, KeePassXC) or Windows
Credential Manager (persisted per user with CRED_PERSIST_ENTERPRISE), and honours the user's own keyring
configuration (``PYTHON_KEYRING_BACKEND``, keyringrc.cfg), so ``keyring get SERVICE NAME`` reads what rt
stored.
Every call blocks; rt.secrets runs them on worker threads.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

from rt.interfaces import SecretBackendError
from rt_secrets import limits
from rt_secrets.backends.keyring_errors import translate
from rt_secrets.backends.secret_service import SCHEMAS, SecretServiceStore

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend as KeyringImpl


class KeyringBackend:
    """A :class:`rt.interfaces.SecretBackend` over one keyring implementation.

    ``keyring_impl`` defaults to ``keyring.get_keyring()`` (chosen on first use, as the ``keyring`` command
    chooses); pass one to pin a particular keyring backend.
    """

    name = "keyring"

    # gnome-keyring-daemon aborts (GLib assertion in invoke_get_property_in_idle_cb, seen on Debian 12) when
    # clients open, use and close D-Bus connections in quick succession, which is what keyring's SecretService
    # backend does per call. So rt talks to the Secret Service over a small pool of reused connections
    # (SecretServiceStore), one process-wide: it is thread-safe, and the event loop never waits on it.
    _secret_service_store: SecretServiceStore | None = None
    _store_lock = threading.Lock()

    def __init__(
        self,
        keyring_impl: KeyringImpl | None = None,
        *,
        platform: str = sys.platform,
        schema: str = "keyring",
    ) -> None:
        if schema not in SCHEMAS:
            raise SecretBackendError(
                f"Unknown [secrets] schema {schema!r}: use 'keyring' or 'reference'.",
                "ERR_SECRETS_PLATFORM_ERROR",
            )
        self._impl = keyring_impl
        self.platform = platform
        self.schema = schema
        self.max_value_bytes: int | None = limits.platform_max_value_bytes(platform)

    def __repr__(self) -> str:
        return f"<KeyringBackend {type(self._impl).__module__ if self._impl else 'default'} schema={self.schema}>"

    def _keyring(self) -> KeyringImpl:
        if self._impl is None:
            import keyring
            import keyring.backends.fail
            import keyring.core

            chosen = keyring.get_keyring()
            if isinstance(chosen, keyring.backends.fail.Keyring):
                # keyring chose once, maybe before the store was reachable (a daemon started later, a
                # D-Bus address set later): detect again rather than fail for the life of the process.
                keyring.core.init_backend()
                chosen = keyring.get_keyring()
            self._impl = chosen
        return self._impl

    def _is_secret_service(self) -> bool:
        return type(self._keyring()).__module__ == "keyring.backends.SecretService"

    @classmethod
    def _store(cls) -> SecretServiceStore:
        with cls._store_lock:
            if cls._secret_service_store is None:
                cls._secret_service_store = SecretServiceStore()
            return cls._secret_service_store

    def _invoke(self, method: str, *args: Any) -> Any:
        """keyring's ``method`` (get_password, ...); through the pooled connections and with the configured
        schema for the Secret Service."""
        impl = self._keyring()
        if self._is_secret_service():
            return getattr(self._store(), method)(impl, *args, schema=self.schema)
        return getattr(impl, method)(*args)

    def _call(self, operation: str, method: str, *args: Any) -> Any:
        try:
            return self._invoke(method, *args)
        except SecretBackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - every keyring failure is translated
            # `from None`: the raw D-Bus / OS error is replaced by one that says what to do.
            raise translate(exc, operation) from None

    def get(self, service: str, name: str) -> str | None:
        value: str | None = self._call("read", "get_password", service, name)
        return value

    def set(self, service: str, name: str, value: str) -> None:
        if self.platform.startswith("win"):
            blob = limits.windows_blob_bytes(value)
            if blob > limits.WINDOWS_MAX_BLOB_BYTES:
                raise SecretBackendError(
                    f"The value takes {blob} bytes as UTF-16, the form Windows Credential Manager keeps; a "
                    f"credential blob holds at most {limits.WINDOWS_MAX_BLOB_BYTES} bytes "
                    "(CRED_MAX_CREDENTIAL_BLOB_SIZE).",
                    "ERR_SECRETS_VALUE_TOO_LONG",
                )
        self._call("store", "set_password", service, name, value)

    def delete(self, service: str, name: str) -> bool:
        from keyring.errors import PasswordDeleteError

        try:
            self._invoke("delete_password", service, name)
        except PasswordDeleteError:
            # keyring reports "not found" with this error on every platform, but macOS also uses it for
            # real failures: tell them apart by reading the pair back.
            if self.get(service, name) is None:
                return False
            raise SecretBackendError(
                "Cannot delete the secret in the OS credential store: the store refused the deletion.",
                "ERR_SECRETS_ACCESS_DENIED",
            ) from None
        except Exception as exc:  # noqa: BLE001 - every keyring failure is translated
            raise translate(exc, "delete") from None
        return True
