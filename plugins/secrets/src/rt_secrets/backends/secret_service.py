"""The Linux Secret Service over one D-Bus connection, for keyring's SecretService backend.

Why not keyring's own ``get_password``/``set_password``/``delete_password``: each opens a D-Bus connection
and closes it when done, and gnome-keyring-daemon (42.1, Debian 12) aborts on a GLib assertion
(``invoke_get_property_in_idle_cb``) when clients connect and disconnect in quick succession. Serialising the
calls (``KeyringBackend._secret_service_lock``) made that rare but not impossible: on a loaded machine the
100-chain test still brought the daemon down about once in several runs, and with it every later call. One
connection per bus, reused by every call, removes the churn.

The items are keyring's: its attribute scheme (``_query``), application id and label, and its preferred
collection, taken from the keyring object itself, so ``keyring get SERVICE NAME`` reads what rt stored and
the other way round. Errors are the ones keyring raises (``InitError``, ``KeyringLocked``,
``PasswordDeleteError``) or secretstorage's, so ``keyring_errors.translate`` maps them as before.

Not thread-safe by itself: the caller holds ``KeyringBackend._secret_service_lock`` around every call.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_NOT_FOUND = object()


class SecretServiceStore:
    """get/set/delete with keyring's semantics on one reused connection (see the module docstring)."""

    def __init__(self) -> None:
        self._connection: Any = None
        self._bus: tuple[str | None, str | None, int] | None = None
        atexit.register(self.close)

    @staticmethod
    def _current_bus() -> tuple[str | None, str | None, int]:
        """What the connection is for. keyring and secretstorage find the bus through the environment on
        every call, so do we; and a forked child must not share its parent's socket (replies would mix)."""
        return os.environ.get("DBUS_SESSION_BUS_ADDRESS"), os.environ.get("XDG_RUNTIME_DIR"), os.getpid()

    def close(self) -> None:
        connection, self._connection, self._bus = self._connection, None, None
        if connection is not None:
            try:
                connection.close()
            except OSError:
                pass

    def _collection(self, keyring_impl: Any) -> Any:
        import secretstorage
        from keyring.errors import InitError, KeyringLocked

        bus = self._current_bus()
        if self._connection is None or bus != self._bus:
            self.close()
            self._connection = secretstorage.dbus_init()
            self._bus = bus
        path = getattr(keyring_impl, "preferred_collection", None)
        try:
            if path:
                collection = secretstorage.Collection(self._connection, path)
            else:
                collection = secretstorage.get_default_collection(self._connection)
        except secretstorage.exceptions.SecretStorageException as exc:
            raise InitError(f"Failed to create the collection: {exc}.") from exc
        if collection.is_locked():
            collection.unlock()
            if collection.is_locked():  # the prompt was dismissed, or none could be shown
                raise KeyringLocked("Failed to unlock the collection!")
        return collection

    def _run(self, keyring_impl: Any, action: Callable[[Any], T]) -> T:
        """``action(collection)``. After a failure the connection is dropped, so the next call starts afresh.
        A connection that broke since the last call (the bus restarted: an OSError) is replaced and the call
        made once more, as keyring's fresh connection per call would have succeeded; get, set with replace
        and delete can all be repeated."""
        while True:
            reused = self._connection is not None and self._bus == self._current_bus()
            try:
                return action(self._collection(keyring_impl))
            except BaseException as exc:
                self.close()
                if not (reused and isinstance(exc, OSError)):  # after a retry, the connection is new
                    raise

    @staticmethod
    def _unlock(item: Any) -> None:
        from keyring.errors import KeyringLocked

        if item.is_locked():
            item.unlock()
            if item.is_locked():
                raise KeyringLocked("Failed to unlock the item!")

    def get_password(self, keyring_impl: Any, service: str, username: str) -> str | None:
        def get(collection: Any) -> str | None:
            for item in collection.search_items(keyring_impl._query(service, username)):
                self._unlock(item)
                return str(item.get_secret().decode("utf-8"))
            return None

        return self._run(keyring_impl, get)

    def set_password(self, keyring_impl: Any, service: str, username: str, password: str) -> None:
        attributes = keyring_impl._query(service, username, application=keyring_impl.appid)
        label = f"Password for '{username}' on '{service}'"
        self._run(keyring_impl, lambda collection: collection.create_item(label, attributes, password,
                                                                          replace=True))

    def delete_password(self, keyring_impl: Any, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        def delete(collection: Any) -> object:
            for item in collection.search_items(keyring_impl._query(service, username)):
                item.delete()  # the first one only, as keyring does
                return None
            return _NOT_FOUND  # not an exception inside _run: "not found" keeps the connection

        if self._run(keyring_impl, delete) is _NOT_FOUND:
            raise PasswordDeleteError("No such password!")
