"""Turn what ``keyring`` and the libraries under it raise into :class:`SecretBackendError` with a code.

The raw errors say things like "FileNotFoundError(2)", "Environment variable DBUS_SESSION_BUS_ADDRESS is
unset" or "Prompt dismissed."; a user needs to know what to start or which backend to pick instead. The
mapping looks at the exception and its ``__cause__``/``__context__`` chain, by class name and module, so it
works on every platform without importing the platform-specific libraries (secretstorage, jeepney,
pywin32-ctypes, macOS Security bindings) that may not be installed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from rt.interfaces import SecretBackendError
from rt_secrets import errors as codes

START_SECRET_SERVICE = (
    "start one: on a desktop, log in to a session that runs gnome-keyring or KWallet; headless, run your "
    "command under `dbus-run-session -- sh -c 'echo -n PASSWORD | gnome-keyring-daemon --unlock "
    "--components=secrets >/dev/null; YOUR_COMMAND'` (Debian packages: dbus, gnome-keyring)"
)

# macOS Security framework OSStatus values (keyring.backends.macOS.api.error)
_MAC_STATUS = {
    -128: (codes.USER_CANCELED, "the Keychain prompt was canceled"),
    -25293: (codes.AUTH_FAILED, "the Keychain refused the password or the login keychain is locked"),
    -67030: (codes.AUTH_FAILED, "the Keychain could not authenticate this program"),
    -25308: (
        codes.INTERACTION_NOT_ALLOWED,
        (
            "the Keychain needs to show a prompt but user interaction is not allowed (ssh session or daemon); "
            "unlock it first with `security unlock-keychain`"
        ),
    ),
}

# Windows error codes (pywintypes.error.winerror)
_WINDOWS_ERROR = {
    5: (codes.ACCESS_DENIED, "Windows Credential Manager denied access"),
    1312: (
        codes.UNAVAILABLE,
        (
            "Windows Credential Manager has no logon session for this user (a service account or a "
            "non-interactive logon); run as an interactive user"
        ),
    ),
    1783: (codes.PLATFORM_ERROR, "Windows Credential Manager rejected the value (too long?)"),
}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _dbus_address_problem() -> str:
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        return "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset)"
    return f"nothing answers on the D-Bus session bus at DBUS_SESSION_BUS_ADDRESS={address}"


def translate(exc: BaseException, operation: str) -> SecretBackendError:
    """The :class:`SecretBackendError` to raise for ``exc`` (raised by keyring during ``operation``)."""
    chain = list(_chain(exc))
    names = set().union(*(_names(e) for e in chain))
    prefix = f"Cannot {operation} the secret in the OS credential store"

    if "NoKeyringError" in names:
        return SecretBackendError(
            f"{prefix}: the keyring package found no OS credential store on this machine. On Linux, "
            f"{START_SECRET_SERVICE}; {codes.CHOOSE_ANOTHER_BACKEND}.",
            codes.UNAVAILABLE,
        )
    if "PromptDismissedException" in names or "KeyringLocked" in names or "LockedException" in names:
        return SecretBackendError(
            f"{prefix}: the keyring is locked (or has no default collection yet) and the unlock prompt was "
            "dismissed or could not be shown. Unlock it in your desktop session; headless, start the daemon "
            "unlocked: `echo -n PASSWORD | gnome-keyring-daemon --replace --unlock --components=secrets`; "
            f"{codes.CHOOSE_ANOTHER_BACKEND}.",
            codes.INTERACTION_REQUIRED,
        )
    for error in chain:
        status = error.args[0] if error.args else None
        if type(error).__module__.endswith("macOS.api") and isinstance(status, int) and status in _MAC_STATUS:
            code, why = _MAC_STATUS[status]
            return SecretBackendError(f"{prefix}: {why}.", code)
        winerror = getattr(error, "winerror", None)
        if isinstance(winerror, int) and winerror in _WINDOWS_ERROR:
            code, why = _WINDOWS_ERROR[winerror]
            return SecretBackendError(f"{prefix}: {why}.", code)
        dbus_name = getattr(error, "name", None)
        if "DBusErrorResponse" in _names(error) and isinstance(dbus_name, str):
            if dbus_name.endswith(".AccessDenied"):
                return SecretBackendError(
                    f"{prefix}: the D-Bus policy denied access ({dbus_name}).", codes.ACCESS_DENIED
                )
            if dbus_name.endswith((".ServiceUnknown", ".NoReply", ".Spawn.ChildExited")):
                return SecretBackendError(
                    f"{prefix}: no Secret Service runs on the D-Bus session bus ({dbus_name}); "
                    f"{START_SECRET_SERVICE}; {codes.CHOOSE_ANOTHER_BACKEND}.",
                    codes.UNAVAILABLE,
                )
    if "SecretServiceNotAvailableException" in names or any(
        isinstance(e, OSError) and not isinstance(e, PermissionError) for e in chain
    ):
        return SecretBackendError(
            f"{prefix}: {_dbus_address_problem()}, or no Secret Service (gnome-keyring, KWallet, KeePassXC) "
            f"runs on it. {START_SECRET_SERVICE[0].upper()}{START_SECRET_SERVICE[1:]}; "
            f"{codes.CHOOSE_ANOTHER_BACKEND}.",
            codes.UNAVAILABLE,
        )
    if any(isinstance(e, PermissionError) for e in chain):
        return SecretBackendError(f"{prefix}: permission denied reaching the store.", codes.ACCESS_DENIED)
    # Unknown failure: name the exception type only; its message could echo arguments we do not control.
    return SecretBackendError(
        f"{prefix}: {type(exc).__module__}.{type(exc).__name__} from the keyring package; "
        f"check that the store works with `keyring --list-backends`, {codes.CHOOSE_ANOTHER_BACKEND}.",
        codes.PLATFORM_ERROR,
    )
