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
from rt_secrets.backends.secret_service import SecretServiceStore

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend as KeyringImpl


class KeyringBackend:
    """A :class:`rt.interfaces.SecretBackend` over one keyring implementation.

    ``keyring_impl`` defaults to ``keyring.get_keyring()`` (chosen on first use, as the ``keyring`` command
    chooses); pass one to pin a particular keyring backend.
    """

    name = "keyring"

    # gnome-keyring-daemon aborts (GLib assertion in invoke_get_property_in_idle_cb, seen on Debian 12)
    # when clients open, use and close D-Bus connections in quick succession, which is what keyring's
    # SecretService backend does per call. So rt talks to the Secret Service over one reused connection
    # (SecretServiceStore), and serializes the calls process-wide: the daemon handles one request at a time
    # anyway, and the event loop still never waits on them.
    _secret_service_lock = threading.Lock()
    _secret_service_store: SecretServiceStore | None = None

    def __init__(self, keyring_impl: KeyringImpl | None = None, *, platform: str = sys.platform) -> None:
        self._impl = keyring_impl
        self.platform = platform
        self.max_value_bytes: int | None = limits.platform_max_value_bytes(platform)

    def __repr__(self) -> str:
        return f"<KeyringBackend {type(self._impl).__module__ if self._impl else 'default'}>"

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

    def _serialized(self) -> threading.Lock | _NoLock:
        return self._secret_service_lock if self._is_secret_service() else _NO_LOCK

    def _invoke(self, method: str, *args: Any) -> Any:
        """keyring's ``method`` (get_password, ...), through the reused connection for the Secret Service.
        The caller holds :meth:`_serialized`."""
        impl = self._keyring()
        if self._is_secret_service():
            store = KeyringBackend._secret_service_store
            if store is None:
                store = KeyringBackend._secret_service_store = SecretServiceStore()
            return getattr(store, method)(impl, *args)
        return getattr(impl, method)(*args)

    def _call(self, operation: str, method: str, *args: Any) -> Any:
        try:
            with self._serialized():
                return self._invoke(method, *args)
        except SecretBackendError:
            raise
        except Exception as exc:
            # `from None`: the raw D-Bus / OS error is replaced by one that says what to do.
            raise translate(exc, operation) from None

    def get(self, service: str, name: str) -> str | None:
        value: str | None = self._call("read", "get_password", service, name)
        return value

    def set(self, service: str, name: str, value: str) -> None:
        if self.platform.startswith("win") and limits.utf16_units(value) > limits.WINDOWS_MAX_UTF16_UNITS:
            raise SecretBackendError(
                f"The value is {limits.utf16_units(value)} UTF-16 code units long; Windows Credential "
                f"Manager stores at most {limits.WINDOWS_MAX_UTF16_UNITS}.",
                "ERR_SECRETS_VALUE_TOO_LONG",
            )
        self._call("store", "set_password", service, name, value)

    def delete(self, service: str, name: str) -> bool:
        from keyring.errors import PasswordDeleteError

        try:
            with self._serialized():
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
        except Exception as exc:
            raise translate(exc, "delete") from None
        return True


class _NoLock:
    """A context manager that does nothing: stores that are safe to call from several threads at once."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


_NO_LOCK = _NoLock()
