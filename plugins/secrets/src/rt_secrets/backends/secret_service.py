"""The Linux Secret Service over a small pool of reused D-Bus connections, in few round trips per call.

Why not keyring's own ``get_password``/``set_password``/``delete_password``:

- each opens a D-Bus connection and closes it when done, and gnome-keyring-daemon (42.1, Debian 12) aborts on a
  GLib assertion (``invoke_get_property_in_idle_cb``) when clients connect and disconnect in quick succession.
  Connections here are opened once and reused (at most :data:`POOL_SIZE` of them, never churned);
- each also opens a new encrypted session (a Diffie-Hellman exchange on both sides) and reads properties it
  does not need (the collection's label, its ``Locked`` flag, each item's label and flag): about seven round
  trips for a ``get``. Here a connection keeps its session, and a call is the D-Bus methods it needs: ``get``
  is ``SearchItems`` + ``GetSecret``, ``set`` is one ``CreateItem``. A locked collection is noticed from the
  ``IsLocked`` error, unlocked (prompt) and the call made once more;
- one connection used by one thread at a time made 200 concurrent chains wait on each other (2.4x the
  reference runtime's time); with a pool, several requests are in flight at once (bench/secret_store.py).

Items are stored under one of two schemas (``[secrets] schema``) and found under either:

- ``keyring``: the ``keyring`` package's items (its attribute scheme ``_query``, application id and label, its
  preferred collection), so ``keyring get SERVICE NAME`` reads what rt stored and the other way round;
- ``reference``: the reference runtime's items (REFERENCE.md): ``xdg:schema`` ``com.oven-sh.bun.Secret`` with
  attributes ``service`` and ``account``, label ``service/name``, so the reference reads what rt stored.

Errors are the ones keyring and secretstorage raise (``KeyringLocked``, ``PasswordDeleteError``,
``SecretServiceNotAvailableException``, jeepney's ``DBusErrorResponse``), so ``keyring_errors.translate``
maps them as before.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar

T = TypeVar("T")

SCHEMAS: Final = ("keyring", "reference")
REFERENCE_SCHEMA: Final = "com.oven-sh.bun.Secret"
POOL_SIZE: Final = 8  # as many as rt.secrets' default worker threads (bench/secret_store.py measured 4 and 8)
CONTENT_TYPE: Final = "text/plain"
_IS_LOCKED: Final = "org.freedesktop.Secret.Error.IsLocked"
_SS_PREFIX: Final = "org.freedesktop.Secret."

Bus = tuple[str | None, str | None, int]


def _current_bus() -> Bus:
    """What a connection is for. keyring and secretstorage find the bus through the environment on every call,
    so do we; and a forked child must not share its parent's sockets (replies would mix)."""
    return os.environ.get("DBUS_SESSION_BUS_ADDRESS"), os.environ.get("XDG_RUNTIME_DIR"), os.getpid()


class _Channel:
    """One D-Bus connection, its collection and its open session. Used by one thread at a time."""

    def __init__(self, bus: Bus, keyring_impl: Any) -> None:
        import secretstorage
        from secretstorage.util import open_session

        self.bus = bus
        self.connection = secretstorage.dbus_init()
        try:
            self.collection = self._collection(keyring_impl)
            self.session = open_session(self.connection)
        except BaseException:
            self.close()
            raise

    def _collection(self, keyring_impl: Any) -> Any:
        import secretstorage
        from keyring.errors import InitError

        path = getattr(keyring_impl, "preferred_collection", None)
        try:
            if path:
                return secretstorage.Collection(self.connection, path)
            return secretstorage.get_default_collection(self.connection)
        except secretstorage.exceptions.SecretStorageException as exc:
            raise InitError(f"Failed to create the collection: {exc}.") from exc

    def close(self) -> None:
        try:
            self.connection.close()
        except OSError:
            pass

    def _wrapper(self, path: str, interface: str) -> Any:
        from secretstorage.util import DBusAddressWrapper

        return DBusAddressWrapper(path, _SS_PREFIX + interface, self.connection)

    def unlock(self) -> None:
        """Ask the daemon to unlock the collection (it may prompt); KeyringLocked when it stays locked."""
        from keyring.errors import KeyringLocked

        dismissed = self.collection.unlock()
        if dismissed or self.collection.is_locked():
            raise KeyringLocked("Failed to unlock the collection!")

    # -- the D-Bus methods ----------------------------------------------------------------------------------

    def search(self, attributes: dict[str, str]) -> list[str]:
        (paths,) = self._wrapper(self.collection.collection_path, "Collection").call(
            "SearchItems", "a{ss}", attributes
        )
        return list(paths)

    def secret(self, item_path: str) -> bytes:
        (secret,) = self._wrapper(item_path, "Item").call("GetSecret", "o", self.session.object_path)
        return _decrypt(self.session, secret)

    def create(self, label: str, attributes: dict[str, str], value: bytes) -> None:
        from secretstorage.exceptions import PromptDismissedException
        from secretstorage.util import exec_prompt, format_secret

        properties = {
            _SS_PREFIX + "Item.Label": ("s", label),
            _SS_PREFIX + "Item.Attributes": ("a{ss}", attributes),
        }
        secret = format_secret(self.session, value, CONTENT_TYPE)
        item_path, prompt = self._wrapper(self.collection.collection_path, "Collection").call(
            "CreateItem", "a{sv}(oayays)b", properties, secret, True
        )
        if len(item_path) <= 1:  # "/": the daemon asks for a prompt first
            dismissed, _ = exec_prompt(self.connection, prompt)
            if dismissed:
                raise PromptDismissedException("Prompt dismissed.")

    def delete(self, item_path: str) -> None:
        from secretstorage.exceptions import PromptDismissedException
        from secretstorage.util import exec_prompt

        (prompt,) = self._wrapper(item_path, "Item").call("Delete", "")
        if prompt != "/":
            dismissed, _ = exec_prompt(self.connection, prompt)
            if dismissed:
                raise PromptDismissedException("Prompt dismissed.")


def _decrypt(session: Any, secret: tuple[Any, ...]) -> bytes:
    """The value of a ``GetSecret`` answer: AES-128-CBC with PKCS#7 padding under the session key, as the
    Secret Service's dh-ietf1024-sha256-aes128-cbc-pkcs7 algorithm defines (or plain, when negotiated)."""
    if not session.encrypted:
        return bytes(secret[2])
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    decryptor = Cipher(algorithms.AES(session.aes_key), modes.CBC(bytes(secret[1]))).decryptor()
    padded = decryptor.update(bytes(secret[2])) + decryptor.finalize()
    return padded[: -padded[-1]]


def _schemas(preferred: str) -> Iterator[str]:
    yield preferred
    yield from (schema for schema in SCHEMAS if schema != preferred)


def _search_attributes(schema: str, keyring_impl: Any, service: str, name: str) -> dict[str, str]:
    if schema == "reference":
        return {"xdg:schema": REFERENCE_SCHEMA, "service": service, "account": name}
    query: dict[str, str] = keyring_impl._query(service, name)
    return query


class SecretServiceStore:
    """get/set/delete over a pool of at most :data:`POOL_SIZE` reused connections (see the module docstring).

    Thread-safe: each call takes a connection of its own from the pool, so up to ``POOL_SIZE`` requests are in
    flight at once; a further call waits for one to come back.
    """

    def __init__(self, size: int = POOL_SIZE) -> None:
        self._size = size
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._idle: list[_Channel] = []
        self._bus: Bus | None = None
        self.opened = 0  # connections opened so far (the tests check that they are reused)
        atexit.register(self.close)

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._bus = self._idle, [], None
        for channel in idle:
            channel.close()

    def _take(self, keyring_impl: Any) -> tuple[_Channel, bool]:
        """A connection for this thread, and whether it was used before. The caller holds a slot."""
        bus = _current_bus()
        with self._lock:
            if bus != self._bus:  # another bus, or a forked child: the old connections are not ours to use
                stale, self._idle, self._bus = self._idle, [], bus
            else:
                stale = []
            channel = self._idle.pop() if self._idle else None
        for old in stale:
            old.close()
        if channel is not None:
            return channel, True
        channel = _Channel(bus, keyring_impl)
        with self._lock:
            self.opened += 1
        return channel, False

    def _give_back(self, channel: _Channel) -> None:
        with self._lock:
            if channel.bus == self._bus and len(self._idle) < self._size:
                self._idle.append(channel)
                return
        channel.close()

    def _run(self, keyring_impl: Any, action: Callable[[_Channel], T]) -> T:
        """``action(channel)`` on a pooled connection. A locked collection is unlocked and the action made once
        more. After a failure the connection is closed, not pooled; one that broke since its last use (the
        bus restarted: an OSError) is replaced and the action made once more, as keyring's fresh connection
        per call would have succeeded: get, set with replace and delete can all be repeated."""
        from jeepney.wrappers import DBusErrorResponse  # type: ignore[import-untyped]

        with self._slots:
            while True:
                channel, reused = self._take(keyring_impl)
                try:
                    try:
                        result = action(channel)
                    except DBusErrorResponse as exc:
                        if exc.name != _IS_LOCKED:
                            raise
                        channel.unlock()
                        result = action(channel)
                except BaseException as exc:
                    channel.close()
                    if reused and isinstance(exc, OSError):
                        continue
                    raise
                self._give_back(channel)
                return result

    # -- keyring's three operations, with a schema -----------------------------------------------------------

    def get_password(
        self, keyring_impl: Any, service: str, username: str, schema: str = "keyring"
    ) -> str | None:
        """The value under either schema, or None. An item found by the search but deleted by another client
        before its secret is read counts as not found: a get never fails because of a concurrent delete."""
        from secretstorage.exceptions import ItemNotFoundException

        def get(channel: _Channel) -> str | None:
            for each in _schemas(schema):
                for path in channel.search(_search_attributes(each, keyring_impl, service, username)):
                    try:
                        return channel.secret(path).decode("utf-8")
                    except ItemNotFoundException:
                        continue  # deleted by another client since the search: as if not found
            return None

        return self._run(keyring_impl, get)

    def set_password(
        self, keyring_impl: Any, service: str, username: str, password: str, schema: str = "keyring"
    ) -> None:
        if schema == "reference":
            attributes = _search_attributes(schema, keyring_impl, service, username)
            label = f"{service}/{username}"
        else:
            attributes = keyring_impl._query(service, username, application=keyring_impl.appid)
            label = f"Password for '{username}' on '{service}'"
        encoded = password.encode("utf-8")
        self._run(keyring_impl, lambda channel: channel.create(label, attributes, encoded))

    def delete_password(
        self, keyring_impl: Any, service: str, username: str, schema: str = "keyring"
    ) -> None:
        """Delete the pair under both schemas (else a read would find the other one); PasswordDeleteError
        when there was nothing, as keyring says "not found". An item another client deletes between the
        search and our Delete is not counted as ours, and is no error."""
        from keyring.errors import PasswordDeleteError
        from secretstorage.exceptions import ItemNotFoundException

        def delete(channel: _Channel) -> bool:
            deleted = False
            for each in _schemas(schema):
                for path in channel.search(_search_attributes(each, keyring_impl, service, username)):
                    try:
                        channel.delete(path)
                    except ItemNotFoundException:
                        continue  # another client deleted it since the search: not ours to report
                    deleted = True
            return deleted

        if not self._run(
            keyring_impl, delete
        ):  # not an exception inside _run: "not found" keeps the connection
            raise PasswordDeleteError("No such password!")
