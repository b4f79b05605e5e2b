"""``file``: secrets in one AES-GCM encrypted file, for servers and CI with no OS keyring.

Why a file lock *and* write-then-rename: the lock serializes read-modify-write cycles of several processes
(two `rt secrets set` at once must not lose either), and the rename makes each write atomic for readers,
which therefore need no lock: they see the old file or the new one, never half of one. The temporary file is
fsynced before the rename and the directory after it, so a crash leaves one complete version.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

from rt.interfaces import SecretBackendError
from rt_filesecrets import crypto

MAX_FILE_BYTES = 16 * 1024 * 1024  # refuse to read a file larger than this: it is not ours, or it is damaged
MAX_VALUE_BYTES = 64 * 1024
LOCK_TIMEOUT_SECONDS = 30.0
MAX_KEY_FILE_BYTES = 4096

Store = dict[str, dict[str, str]]


class FileSecretsBackend:
    """A :class:`rt.interfaces.SecretBackend` over one encrypted file. Key: a passphrase or a key file."""

    name = "file"
    max_value_bytes: int | None = MAX_VALUE_BYTES

    def __init__(self, path: Path, *, passphrase: str | None = None, key_file: Path | None = None) -> None:
        if passphrase and key_file is not None:
            # Refused rather than one silently winning: a user who set both cannot tell which key encrypts the
            # file, and finds out only when the other one is the one left.
            raise SecretBackendError(
                f"The file secrets backend got two keys: RT_SECRETS_PASSPHRASE and the key file {key_file} "
                "([filesecrets] key_file / RT_FILESECRETS_KEY_FILE). Set only one of them.",
                "ERR_SECRETS_UNAVAILABLE",
            )
        if not passphrase and key_file is None:
            raise SecretBackendError(
                "The file secrets backend needs a key: set RT_SECRETS_PASSPHRASE in the environment, or "
                "[filesecrets] key_file (RT_FILESECRETS_KEY_FILE) to a path: the first `set` creates the key "
                "file there (mode 0600, folder 0700) when neither it nor the secrets file exists yet.",
                "ERR_SECRETS_UNAVAILABLE",
            )
        self.path = path
        self._mode = crypto.MODE_KEY_FILE if key_file is not None else crypto.MODE_PASSPHRASE
        self._key_file = key_file
        self._material: Callable[[], bytes] = (
            (lambda: _read_key_file(key_file)) if key_file is not None
            else (lambda: (passphrase or "").encode("utf-8"))
        )  # fmt: skip
        self._key_source = f"the key file {key_file}" if key_file is not None else "RT_SECRETS_PASSPHRASE"
        # (salt, cost) -> derived key: scrypt runs once per file per process
        self._keys: dict[tuple[bytes, crypto.ScryptCost], bytes] = {}
        self._thread_lock = threading.Lock()
        self._file_lock = FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_SECONDS)

    def __repr__(self) -> str:
        return f"<FileSecretsBackend {self.path}>"

    # -- the SecretBackend methods ---------------------------------------------------------------------------

    def get(self, service: str, name: str) -> str | None:
        return self._read().get(service, {}).get(name)

    def set(self, service: str, name: str, value: str) -> None:
        def change(store: Store) -> None:
            store.setdefault(service, {})[name] = value

        self._update(change)

    def delete(self, service: str, name: str) -> bool:
        deleted = False

        def change(store: Store) -> None:
            nonlocal deleted
            names = store.get(service, {})
            if name in names:
                del names[name]
                deleted = True
                if not names:
                    del store[service]

        self._update(change)
        return deleted

    # -- reading and writing ---------------------------------------------------------------------------------

    def _key(self, salt: bytes, cost: crypto.ScryptCost = crypto.SCRYPT_COST) -> bytes:
        key = self._keys.get((salt, cost))
        if key is None:
            key = crypto.derive_key(self._mode, self._material(), salt, cost)
            self._keys[(salt, cost)] = key
        return key

    def _read_blob(self) -> bytes | None:
        try:
            with self.path.open("rb") as f:
                blob = f.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SecretBackendError(
                f"Cannot read {self.path}: {exc.strerror}.", "ERR_SECRETS_ACCESS_DENIED"
            ) from None
        if len(blob) > MAX_FILE_BYTES:
            raise SecretBackendError(
                f"{self.path} is larger than {MAX_FILE_BYTES} bytes; it is not an rt secrets file.",
                "ERR_SECRETS_PLATFORM_ERROR",
            )
        return blob

    def _decode(self, blob: bytes) -> tuple[Store, bytes]:
        try:
            header = crypto.parse_header(blob)
        except crypto.FormatError as exc:
            raise SecretBackendError(f"{self.path}: {exc}.", "ERR_SECRETS_PLATFORM_ERROR") from None
        if header.mode != self._mode:
            kinds = {crypto.MODE_PASSPHRASE: "a passphrase", crypto.MODE_KEY_FILE: "a key file"}
            raise SecretBackendError(
                f"{self.path} was encrypted with {kinds[header.mode]}, but {self._key_source} was given.",
                "ERR_SECRETS_AUTH_FAILED",
            )
        try:
            plaintext = crypto.open_sealed(blob, self._key(header.salt, header.cost))
        except crypto.WrongKeyError:
            raise SecretBackendError(
                f"Cannot decrypt {self.path}: wrong passphrase or key ({self._key_source}), or the file was "
                "modified.",
                "ERR_SECRETS_AUTH_FAILED",
            ) from None
        return json.loads(plaintext.decode("utf-8")), header.salt

    def _read(self) -> Store:
        blob = self._read_blob()
        return {} if blob is None else self._decode(blob)[0]

    def _update(self, change: Callable[[Store], None]) -> None:
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with self._thread_lock, self._file_lock:
                blob = self._read_blob()
                if blob is None and self._key_file is not None and not self._key_file.exists():
                    create_key_file(self._key_file)  # a fresh setup: nothing is encrypted with another key
                store, salt = ({}, crypto.new_salt()) if blob is None else self._decode(blob)
                change(store)
                plaintext = json.dumps(store, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
                # always at today's cost: a version 1 file is upgraded by its next change
                self._write_atomically(crypto.seal(self._mode, salt, self._key(salt), plaintext))
        except Timeout:
            raise SecretBackendError(
                f"Another process holds {self._file_lock.lock_file} for over {LOCK_TIMEOUT_SECONDS:.0f}s.",
                "ERR_SECRETS_PLATFORM_ERROR",
            ) from None
        except OSError as exc:  # after Timeout, which is one: no directory, read-only disk, disk full ...
            # strerror only: the message never carries more than the path, which is configuration.
            raise SecretBackendError(
                f"Cannot write {self.path}: {exc.strerror or type(exc).__name__}.",
                "ERR_SECRETS_ACCESS_DENIED"
                if isinstance(exc, PermissionError)
                else "ERR_SECRETS_PLATFORM_ERROR",
            ) from None

    def _write_atomically(self, blob: bytes) -> None:
        fd, temporary = tempfile.mkstemp(prefix=".secrets-", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as f:  # mkstemp creates it 0600
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        if hasattr(os, "O_DIRECTORY"):
            dir_fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


KEY_FILE_BYTES = 32


def create_key_file(path: Path) -> None:
    """Write ``KEY_FILE_BYTES`` random bytes to a new file ``path``, private from its first byte.

    ``os.open(..., O_CREAT | O_EXCL, 0o600)`` creates the file with its final mode, so there is no moment at
    which another user can open it (``head -c 32 /dev/urandom > key; chmod 600 key`` has one), and O_EXCL
    never overwrites an existing key (which would make the secrets encrypted with it unreadable). The folder
    is created 0700 when missing.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, os.urandom(KEY_FILE_BYTES))
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)


def _read_key_file(path: Path) -> bytes:
    try:
        info = path.stat()
    except OSError as exc:
        raise SecretBackendError(
            f"Cannot read the key file {path}: {exc.strerror}.", "ERR_SECRETS_UNAVAILABLE"
        ) from None
    if not sys.platform.startswith("win") and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SecretBackendError(
            f"The key file {path} is accessible by other users (mode {stat.S_IMODE(info.st_mode):04o}); "
            f"run `chmod 600 {path}`.",
            "ERR_SECRETS_ACCESS_DENIED",
        )
    try:
        # Only the first MAX_KEY_FILE_BYTES are key material (as before); reading just those keeps a key file
        # named by mistake (a device, a huge file) from being read whole.
        with path.open("rb") as f:
            material = f.read(MAX_KEY_FILE_BYTES)
    except OSError as exc:
        raise SecretBackendError(
            f"Cannot read the key file {path}: {exc.strerror}.", "ERR_SECRETS_UNAVAILABLE"
        ) from None
    if len(material) < 32:
        raise SecretBackendError(
            f"The key file {path} holds {len(material)} bytes; it needs at least 32 random bytes "
            "(`head -c 32 /dev/urandom > FILE`).",
            "ERR_SECRETS_UNAVAILABLE",
        )
    return material
