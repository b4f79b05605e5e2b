"""After any failure, no secret value is reachable from the exception: not in a frame's locals anywhere in the
traceback (what Sentry-style reporters capture), not in ``__context__``/``__cause__`` (the backend's raw
error), not in a message, ``args`` or ``repr``, not in the log.

Each error path gets a canary value; :func:`assert_unreachable` walks everything an error reporter could walk.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import pytest

import rt
from rt.hookspecs import hookimpl
from rt.interfaces import SecretBackendError

pytestmark = pytest.mark.anyio
THIS_FILE = str(Path(__file__).resolve())


def canary() -> str:
    return f"canary-{uuid.uuid4().hex}"


def _exceptions(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    stack = [error]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)


def _frames(tb: TracebackType | None) -> Iterator[Any]:
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def _shown(value: object) -> str:
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails shows nothing
        return ""


def assert_unreachable(error: BaseException, secret: str) -> None:
    for each in _exceptions(error):
        assert secret not in str(each) and secret not in _shown(each) and secret not in _shown(each.args)
        for frame in _frames(each.__traceback__):
            if frame.f_code.co_filename == THIS_FILE:  # the test's own frames hold the canary, of course
                continue
            for name, value in frame.f_locals.items():
                assert secret not in _shown(value), (frame.f_code.co_qualname, name)
    # what a reporter renders: the text never has the value, outside this file's own frames
    rendered = traceback.TracebackException.from_exception(error, capture_locals=True)
    frames = [frame for each in _exceptions(error) for frame in traceback.extract_tb(each.__traceback__)]
    ours = [frame for frame in rendered.stack if frame.filename != THIS_FILE]
    assert all(secret not in _shown(frame.locals) for frame in ours) and frames is not None


def register_backend(rt_register: Any, rt_kernel: Any, backend: Any) -> None:
    class Plugin:
        @hookimpl
        def rt_register_secret_backends(self, register: Any) -> None:
            register(backend.name, lambda config: backend)

    rt_register(Plugin(), f"{backend.name}-plugin")
    rt_kernel.with_overrides({"secrets.backend": backend.name})


class Failing:
    """A backend whose every method fails after it has held the value (or read one) in its locals."""

    name = "failing"

    def __init__(self, how: str, max_value_bytes: int | None = None) -> None:
        self.how = how
        self.max_value_bytes = max_value_bytes
        self.read = canary()

    def _fail(self, value: str) -> None:
        held = value  # noqa: F841 - a local a reporter would capture
        if self.how == "backend-error":
            raise SecretBackendError("The vault refused the call.", "ERR_SECRETS_ACCESS_DENIED")
        if self.how == "raw-error":  # a bug in a backend: its message quotes the value
            raise RuntimeError(f"could not store {value!r}")
        if self.how == "chained":  # a backend error raised while handling a raw one that quotes the value
            try:
                raise OSError(f"socket said {value}")
            except OSError:
                raise SecretBackendError("The vault is down.", "ERR_SECRETS_UNAVAILABLE")  # noqa: B904 - the chain is the point
        if self.how == "slow":
            time.sleep(0.3)

    def get(self, service: str, name: str) -> str | None:
        secret = self.read
        self._fail(secret)
        return secret

    def set(self, service: str, name: str, value: str) -> None:
        self._fail(value)

    def delete(self, service: str, name: str) -> bool:
        return False

    def __repr__(self) -> str:
        return "<Failing>"


@pytest.mark.parametrize("how", ["backend-error", "raw-error", "chained"])
async def test_backend_failures_of_set_and_get(rt_kernel, rt_register, caplog, how: str) -> None:
    backend = Failing(how)
    register_backend(rt_register, rt_kernel, backend)
    secret = canary()
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(rt.SecretsError) as info:
            await rt.secrets.set("svc", "n", secret)
        assert_unreachable(info.value, secret)
        with pytest.raises(rt.SecretsError) as info:
            await rt.secrets.get("svc", "n")
        assert_unreachable(info.value, backend.read)
    assert secret not in caplog.text and backend.read not in caplog.text
    assert info.value.__context__ is None and info.value.__cause__ is None


async def test_raw_backend_errors_are_named_not_quoted(rt_kernel, rt_register) -> None:
    register_backend(rt_register, rt_kernel, Failing("raw-error"))
    with pytest.raises(rt.SecretsError, match="'failing' secrets backend failed: builtins.RuntimeError"):
        await rt.secrets.set("svc", "n", canary())


@pytest.mark.parametrize(
    "make_value",
    [lambda c: c.encode(), lambda c: c + "\ud800", lambda c: c * 3],
    ids=["not-a-str", "lone-surrogate", "too-long"],
)
async def test_argument_and_limit_errors(rt_kernel, rt_register, make_value: Any) -> None:
    register_backend(rt_register, rt_kernel, Failing("none", max_value_bytes=64))
    secret = canary()
    with pytest.raises((TypeError, ValueError)) as info:
        await rt.secrets.set("svc", "n", make_value(secret))
    assert_unreachable(info.value, secret)


async def test_cancellation_during_set(rt_kernel, rt_register) -> None:
    """Cancelled while waiting for a worker thread: anyio's frames held the call with the value."""
    release = threading.Event()
    entered = threading.Event()

    class Blocking(Failing):
        def set(self, service: str, name: str, value: str) -> None:
            entered.set()
            release.wait(60)

    register_backend(rt_register, rt_kernel, Blocking("none"))
    rt_kernel.with_overrides({"secrets.max_threads": 1})
    secret = canary()
    async with anyio.create_task_group() as tg:
        tg.start_soon(rt.secrets.set, "svc", "first", "holds the only thread")
        with anyio.fail_after(
            60
        ):  # until the first call holds the thread (a moment's sleep could be too short)
            while not entered.is_set():
                await anyio.sleep(0.01)
        try:
            with pytest.raises(TimeoutError) as info, anyio.fail_after(0.05):
                await rt.secrets.set("svc", "n", secret)
        finally:
            release.set()
    assert_unreachable(info.value, secret)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux Secret Service only")
async def test_the_real_keyring_backend_raw_errors(
    secret_service, rt_kernel, start_bus, monkeypatch, tmp_path
):
    """The keyring backend's raw errors (an OSError from a dead socket, a D-Bus error from a bus with no
    Secret Service) are not kept anywhere: no __context__, no frame of keyring, secretstorage or jeepney."""
    secret = canary()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus-here")
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.set("svc", "n", secret)
    assert_unreachable(info.value, secret)
    assert info.value.__context__ is None
    assert [
        f.f_code.co_qualname for f in _frames(info.value.__traceback__) if f.f_code.co_filename != THIS_FILE
    ] == ["Secrets.set"]
    bare = start_bus(with_keyring=False)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bare.address)
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.set("svc", "n", secret)
    assert_unreachable(info.value, secret)
    assert info.value.__context__ is None
