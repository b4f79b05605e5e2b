"""An unavailable OS store raises SecretsError with a code and a message that says what to do.

Each condition is real: a D-Bus address with nothing behind it, no address at all, a bus with no Secret
Service, a locked keyring, keyring's own "no backend" keyring. macOS and Windows failures cannot happen on
Linux; their mapping is checked on exceptions shaped as keyring raises them there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
import uuid

import pytest

import rt

pytestmark = pytest.mark.anyio

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux Secret Service only")
CANARY = "value-canary-" + uuid.uuid4().hex


def assert_helpful(error: BaseException, code: str) -> None:
    assert isinstance(error, rt.SecretsError)
    assert error.code == code
    message = str(error)
    assert "RT_SECRETS_BACKEND=file" in message and "RT_SECRETS_BACKEND=memory" in message
    assert CANARY not in message and CANARY not in repr(error)
    assert CANARY not in "".join(traceback.format_exception(error))
    assert error.__cause__ is None
    assert "Cannot autolaunch D-Bus" not in message


@linux_only
async def test_dead_dbus_socket(secret_service, rt_kernel, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus-here")
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.set("svc", "n", CANARY)
    assert_helpful(info.value, "ERR_SECRETS_UNAVAILABLE")
    assert "nothing answers on the D-Bus session bus" in str(info.value)
    assert "dbus-run-session" in str(info.value)
    assert "FileNotFoundError" not in str(info.value)


@linux_only
async def test_no_dbus_address(secret_service, rt_kernel, monkeypatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "n")
    assert_helpful(info.value, "ERR_SECRETS_UNAVAILABLE")
    assert "DBUS_SESSION_BUS_ADDRESS is unset" in str(info.value)


@linux_only
async def test_bus_without_a_secret_service(secret_service, rt_kernel, start_bus, monkeypatch) -> None:
    bare = start_bus(with_keyring=False)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bare.address)
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "n")
    assert_helpful(info.value, "ERR_SECRETS_UNAVAILABLE")
    assert "gnome-keyring-daemon" in str(info.value)


@linux_only
async def test_locked_keyring(secret_service, rt_kernel, start_bus, monkeypatch) -> None:
    import secretstorage

    other = start_bus()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", other.address)
    await rt.secrets.set("svc", "n", "stored-before-locking")
    connection = secretstorage.dbus_init()
    try:
        collection = secretstorage.get_default_collection(connection)
        collection.lock()
        assert collection.is_locked()
    finally:
        connection.close()
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "n")
    assert_helpful(info.value, "ERR_SECRETS_INTERACTION_REQUIRED")
    assert "locked" in str(info.value) and "--unlock" in str(info.value)


def run_rt(args: list[str], environ: dict[str, str], stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [sys.executable, "-m", "rt", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env=environ,
        check=False,
    )
    return subprocess.CompletedProcess(
        completed.args, completed.returncode, completed.stdout.decode(), completed.stderr.decode()
    )


def test_no_keyring_backend_at_all(tmp_path) -> None:
    """keyring's own fail backend, as on a machine with no store: a clear message, exit 1."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RT_")}
    environ.update(PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring", HOME=str(tmp_path))
    result = run_rt(["secrets", "get", "-s", "svc", "-n", "n"], environ)
    assert result.returncode == 1
    assert "ERR_SECRETS_UNAVAILABLE" in result.stderr
    assert "found no OS credential store" in result.stderr and "RT_SECRETS_BACKEND=file" in result.stderr
    assert "Traceback" not in result.stderr


@linux_only
def test_headless_machine_without_dbus(tmp_path) -> None:
    """No D-Bus session and no DISPLAY, as on a server: keyring detects nothing, rt says what to do."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RT_", "DBUS_", "PYTHON_KEYRING")) and k not in ("DISPLAY", "WAYLAND_DISPLAY")
    }
    environ.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path))
    result = run_rt(["secrets", "set", "-s", "svc", "-n", "n"], environ, stdin=CANARY.encode())
    assert result.returncode == 1
    assert "ERR_SECRETS_UNAVAILABLE" in result.stderr
    assert "dbus-run-session" in result.stderr and "RT_SECRETS_BACKEND=file" in result.stderr
    assert CANARY not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


class _MacApiError(Exception):
    """Shaped as keyring.backends.macOS.api.Error: args (OSStatus, text)."""


_MacApiError.__module__ = "keyring.backends.macOS.api"


class _WinError(Exception):
    """Shaped as pywintypes.error: a winerror attribute."""

    def __init__(self, winerror: int) -> None:
        super().__init__(winerror, "CredWrite", "text")
        self.winerror = winerror


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (-128, "ERR_SECRETS_USER_CANCELED"),
        (-25293, "ERR_SECRETS_AUTH_FAILED"),
        (-25308, "ERR_SECRETS_INTERACTION_NOT_ALLOWED"),
    ],
)
def test_macos_statuses_map_to_codes(status: int, code: str) -> None:
    from keyring.errors import KeyringError

    from rt_secrets.backends.keyring_errors import translate

    try:
        try:
            raise _MacApiError(status, "Unknown Error")
        except _MacApiError as inner:
            raise KeyringError("Can't get password from keychain") from inner
    except KeyringError as exc:
        assert translate(exc, "read").code == code


@pytest.mark.parametrize(
    ("winerror", "code"), [(5, "ERR_SECRETS_ACCESS_DENIED"), (1312, "ERR_SECRETS_UNAVAILABLE")]
)
def test_windows_errors_map_to_codes(winerror: int, code: str) -> None:
    from rt_secrets.backends.keyring_errors import translate

    assert translate(_WinError(winerror), "store").code == code


def test_unknown_failure_names_only_the_type() -> None:
    from rt_secrets.backends.keyring_errors import translate

    error = translate(RuntimeError(f"echoes {CANARY}"), "store")
    assert error.code == "ERR_SECRETS_PLATFORM_ERROR"
    assert CANARY not in str(error) and "builtins.RuntimeError" in str(error)
