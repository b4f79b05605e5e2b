"""A real Linux Secret Service for the tests: a private D-Bus session bus and gnome-keyring-daemon.

The bus uses its own configuration with no service directories, so nothing is D-Bus-activated behind our
back (no stray daemons, and "nothing on the bus" stays nothing). gnome-keyring-daemon runs in the
foreground as our child, unlocked with a password on stdin, with HOME and XDG_* under a temporary directory,
so the user's real keyring is never touched. If the daemons cannot start the tests FAIL with the reason:
CI installs the Debian packages dbus, gnome-keyring and libsecret-tools.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
import pytest

KEYRING_PASSWORD = b"rt-test-keyring-password"
START_TIMEOUT = 60.0  # only bounds a hang: a loaded machine can take long to start the daemons

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@attrs.frozen
class SecretServiceSession:
    """A running bus (and maybe keyring daemon): the environment that reaches it."""

    address: str
    environ: dict[str, str]
    log: str | None = None  # gnome-keyring-daemon's stderr, for failure messages


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(
            f"{tool} is not installed; install the Debian packages dbus gnome-keyring "
            "libsecret-tools "
            "(.ci/run does) to test the Linux Secret Service for real",
            pytrace=False,
        )
    return path


def _service_owned(address: str) -> bool:
    from jeepney import DBus
    from jeepney.io.blocking import open_dbus_connection

    with open_dbus_connection(address) as connection:
        reply = connection.send_and_get_reply(DBus().NameHasOwner("org.freedesktop.secrets"))
        return bool(reply.body[0])


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextmanager
def running_bus(root: Path, *, with_keyring: bool = True) -> Iterator[SecretServiceSession]:
    """Start a private session bus, and gnome-keyring-daemon on it unless ``with_keyring`` is False."""
    root.mkdir(parents=True, exist_ok=True)
    runtime = root / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    for sub in ("home", "data", "config", "cache"):
        (root / sub).mkdir(exist_ok=True)
    socket = runtime / "bus"
    config = root / "bus.conf"
    config.write_text(BUS_CONFIG.format(socket=socket), encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    environ.update(
        HOME=str(root / "home"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_RUNTIME_DIR=str(runtime),
    )
    bus = subprocess.Popen(
        [_require("dbus-daemon"), f"--config-file={config}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environ,
    )
    processes = [bus]
    daemon_log = None
    try:
        assert bus.stdout is not None
        address = bus.stdout.readline().decode().strip()
        if not address:
            pytest.fail(
                f"dbus-daemon did not start: {bus.stderr.read().decode() if bus.stderr else ''}",
                pytrace=False,
            )
        environ["DBUS_SESSION_BUS_ADDRESS"] = address
        if with_keyring:
            daemon_log = (root / "gnome-keyring.log").open("wb")
            daemon = subprocess.Popen(
                [_require("gnome-keyring-daemon"), "--foreground", "--unlock", "--components=secrets"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=daemon_log,
                env=environ,
            )
            processes.append(daemon)
            assert daemon.stdin is not None
            daemon.stdin.write(KEYRING_PASSWORD)
            daemon.stdin.close()
            deadline = time.monotonic() + START_TIMEOUT
            while not _service_owned(address):
                if daemon.poll() is not None or time.monotonic() > deadline:
                    err = (root / "gnome-keyring.log").read_text(errors="replace")
                    pytest.fail(
                        f"gnome-keyring-daemon did not provide org.freedesktop.secrets within "
                        f"{START_TIMEOUT}s (exit {daemon.poll()}): {err}",
                        pytrace=False,
                    )
                time.sleep(0.05)
        yield SecretServiceSession(
            address, environ, str(root / "gnome-keyring.log") if with_keyring else None
        )
    finally:
        for process in reversed(processes):
            _stop(process)
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
        if daemon_log is not None:
            daemon_log.close()


@pytest.fixture(scope="session")
def secret_service_daemons(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecretServiceSession]:
    """One bus and gnome-keyring-daemon for the whole session; nothing in this process points at it yet."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the Linux Secret Service exists on Linux only")
    with running_bus(tmp_path_factory.mktemp("secret-service")) as session:
        yield session


ISOLATED_VARIABLES = ("DBUS_SESSION_BUS_ADDRESS", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR")


@pytest.fixture
def secret_service(
    secret_service_daemons: SecretServiceSession, monkeypatch: pytest.MonkeyPatch
) -> SecretServiceSession:
    """Point this test (and the subprocesses it starts) at the private Secret Service.

    Per test, through monkeypatch, so the tests of other plugins in the same pytest session never see a
    changed environment. keyring and secretstorage read os.environ on every call.
    """
    for variable in ISOLATED_VARIABLES:
        monkeypatch.setenv(variable, secret_service_daemons.environ[variable])
    for variable in ("DISPLAY", "WAYLAND_DISPLAY", "PYTHON_KEYRING_BACKEND"):
        monkeypatch.delenv(variable, raising=False)
    import keyring
    import keyring.backends.SecretService
    import keyring.core

    if not isinstance(keyring.get_keyring(), keyring.backends.SecretService.Keyring):
        keyring.core.init_backend()  # detect again now that a Secret Service is reachable
    return secret_service_daemons


@pytest.fixture
def start_bus(tmp_path: Path) -> Callable[..., object]:
    """Start one more private bus for one test (e.g. to lock its keyring without disturbing the others)."""
    stack: list[object] = []

    def start(*, with_keyring: bool = True) -> SecretServiceSession:
        manager = running_bus(tmp_path / f"bus{len(stack)}", with_keyring=with_keyring)
        session = manager.__enter__()
        stack.append(manager)
        return session

    yield start
    for manager in reversed(stack):
        manager.__exit__(None, None, None)  # type: ignore[attr-defined]
