"""rt.secrets on the real Linux Secret Service (gnome-keyring on a private D-Bus bus; see conftest.py).

No mock of the OS store: values go through keyring -> secretstorage -> D-Bus -> gnome-keyring-daemon, and
`secret-tool` and the `keyring` package read back what rt stored.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import uuid

import anyio
import pytest

import rt
from rt.hookspecs import hookimpl

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux Secret Service only"),
]

ODD_VALUES = [
    "line one\nline two\r\nthree",
    "quotes ' \" ` and \\ backslash",
    "emoji 🔑🦀 and CJK 秘密の鍵 and RTL مرحبا",
    "controls \x01\x07\x1b[31m\x7f tab\t end",
    "nul \x00 inside",
    " leading and trailing spaces ",
]


@pytest.fixture
def service(secret_service, rt_kernel) -> str:
    """A unique service name per test, on the default `keyring` backend of a fresh kernel."""
    assert rt_kernel.config.get("secrets.backend") == "keyring"
    return f"rt-test-{uuid.uuid4().hex[:12]}"


def secret_tool(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["secret-tool", *args], capture_output=True, timeout=60, check=False)


def daemon_log_tail(session: object) -> str:
    """The end of gnome-keyring-daemon's log (conftest's SecretServiceSession.log), for a failure message."""
    log = getattr(session, "log", None)
    if log is None or not os.path.exists(log):
        return "no daemon log"
    lines = [
        line for line in open(log, encoding="utf-8", errors="replace").read().splitlines() if line.strip()
    ]
    interesting = [line for line in lines if "already registered" not in line]  # normal on every replace
    return "daemon log: " + " | ".join(interesting[-5:] or ["(nothing but replace warnings)"])


async def test_the_default_backend_is_the_secret_service(service) -> None:
    from rt_secrets.api import current_backend

    backend = current_backend()
    import keyring.backends.SecretService

    assert isinstance(backend._keyring(), keyring.backends.SecretService.Keyring)


async def test_store_read_replace_delete(service) -> None:
    assert await rt.secrets.get(service, "alice") is None
    await rt.secrets.set(service=service, name="alice", value="first")
    assert await rt.secrets.get(service=service, name="alice") == "first"
    await rt.secrets.set(service, "alice", "second")
    assert await rt.secrets.get(service, "alice") == "second"
    assert await rt.secrets.delete(service, "alice") is True
    assert await rt.secrets.get(service, "alice") is None
    assert await rt.secrets.delete(service, "alice") is False


async def test_replace_keeps_a_single_item(service) -> None:
    await rt.secrets.set(service, "alice", "first")
    await rt.secrets.set(service, "alice", "second")
    found = secret_tool("search", "--all", "service", service, "username", "alice")
    assert found.returncode == 0
    assert found.stdout.count(b"secret = ") == 1 and b"secret = second" in found.stdout


async def test_secret_tool_and_keyring_see_what_rt_stored(service) -> None:
    import keyring

    await rt.secrets.set(service, "alice", "tok-é-🔑")
    looked_up = secret_tool("lookup", "service", service, "username", "alice")
    assert looked_up.returncode == 0, looked_up.stderr
    assert looked_up.stdout.decode("utf-8") == "tok-é-🔑"
    assert keyring.get_password(service, "alice") == "tok-é-🔑"
    # and the other way round: what the keyring CLI stores, rt reads
    cli = subprocess.run(
        [sys.executable, "-m", "keyring", "set", service, "bob"],
        input=b"from-keyring\n",  # noqa: ASYNC221
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    assert await rt.secrets.get(service, "bob") == "from-keyring"


async def test_empty_value_deletes_from_the_os_store(service) -> None:
    await rt.secrets.set(service, "alice", "tok")
    await rt.secrets.set(service, "alice", "")
    assert secret_tool("lookup", "service", service, "username", "alice").returncode != 0
    assert await rt.secrets.get(service, "alice") is None


@pytest.mark.parametrize("value", ODD_VALUES)
async def test_exact_round_trip_through_the_os(service, value: str) -> None:
    await rt.secrets.set(service, "odd", value)
    assert await rt.secrets.get(service, "odd") == value
    assert secret_tool("lookup", "service", service, "username", "odd").stdout == value.encode("utf-8")


async def test_large_values_are_stored_and_one_over_the_limit_never_reaches_the_store(service) -> None:
    """The Secret Service takes large values (the reference runtime stores 64 KB and 1 MiB there); rt's limit
    is 1 MiB, named in the error. 4 KB was refused before."""
    limit = 1024 * 1024
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.set(service, "big", "x" * (limit + 1))
    assert info.value.code == "ERR_SECRETS_VALUE_TOO_LONG" and isinstance(info.value, ValueError)
    assert f"at most {limit} bytes" in str(info.value) and "1048577 bytes" in str(info.value)
    assert secret_tool("lookup", "service", service, "username", "big").returncode != 0
    for size in (64 * 1024, limit):
        await rt.secrets.set(service, "big", "é" * (size // 2))
        assert await rt.secrets.get(service, "big") == "é" * (size // 2)
    assert await rt.secrets.delete(service, "big") is True  # a 1 MiB item would slow every later write


async def test_hundred_concurrent_chains_lose_nothing(service, secret_service) -> None:
    results: dict[int, list[object]] = {}

    async def chain(i: int) -> None:
        name = f"user-{i}"
        seen: list[object] = []
        try:
            await rt.secrets.set(service, name, f"v1-{i}")
            seen.append(await rt.secrets.get(service, name))
            await rt.secrets.set(service, name, f"v2-{i}")
            seen.append(await rt.secrets.get(service, name))
            seen.append(await rt.secrets.delete(service, name))
            seen.append(await rt.secrets.get(service, name))
        except rt.SecretsError as exc:  # kept with the step it happened at, so a failure says which and why
            seen.append(f"{exc.code}: {exc}")
        results[i] = seen

    async with anyio.create_task_group() as tg:
        for i in range(100):
            tg.start_soon(chain, i)
    wrong = {i: seen for i, seen in results.items() if seen != [f"v1-{i}", f"v2-{i}", True, None]}
    assert not wrong, (
        f"{len(wrong)} chains went wrong, e.g. {list(wrong.items())[:3]}; {daemon_log_tail(secret_service)}"
    )
    assert sorted(results) == list(range(100))
    leftover = secret_tool("search", "--all", "service", service)
    assert b"secret = " not in leftover.stdout


async def test_calls_reuse_one_dbus_connection(service, monkeypatch) -> None:
    """keyring opens and closes a D-Bus connection per call, which can make gnome-keyring-daemon abort
    (see rt_secrets.backends.secret_service); rt keeps a small pool per bus and reuses it: calls one after
    the other use one connection."""
    import secretstorage

    from rt_secrets.backends.keyring_backend import KeyringBackend

    if KeyringBackend._secret_service_store is not None:
        KeyringBackend._secret_service_store.close()  # start from no connection
    opened = []
    real_dbus_init = secretstorage.dbus_init
    monkeypatch.setattr(secretstorage, "dbus_init", lambda: opened.append(1) or real_dbus_init())
    for i in range(20):
        await rt.secrets.set(service, f"user-{i}", f"v-{i}")
        assert await rt.secrets.get(service, f"user-{i}") == f"v-{i}"
        assert await rt.secrets.delete(service, f"user-{i}") is True
    assert await rt.secrets.delete(service, "nobody") is False  # "not found" keeps the connection too
    assert len(opened) == 1


async def test_a_broken_connection_is_replaced_and_a_fork_gets_its_own(service, monkeypatch) -> None:
    import secretstorage

    from rt_secrets.backends.keyring_backend import KeyringBackend

    await rt.secrets.set(service, "alice", "one")
    store = KeyringBackend._secret_service_store
    assert store is not None and len(store._idle) == 1
    opened = []
    real_dbus_init = secretstorage.dbus_init
    monkeypatch.setattr(secretstorage, "dbus_init", lambda: opened.append(1) or real_dbus_init())
    store._idle[0].connection.sock.close()  # as if the bus had restarted: the next use fails with an OSError
    assert await rt.secrets.get(service, "alice") == "one"  # made once more, on a new connection
    assert len(opened) == 1
    real_getpid = os.getpid
    monkeypatch.setattr(os, "getpid", lambda: real_getpid() + 1)  # as in a forked child
    assert await rt.secrets.get(service, "alice") == "one"
    assert len(opened) == 2
    monkeypatch.setattr(os, "getpid", real_getpid)
    assert await rt.secrets.delete(service, "alice") is True


async def test_ticker_keeps_ticking_during_real_calls(service) -> None:
    ticks = 0
    done = anyio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await anyio.sleep(0.001)

    during: list[int] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        await anyio.sleep(0.01)
        for i in range(20):
            before = ticks
            await rt.secrets.set(service, f"tick-{i}", "v")
            assert await rt.secrets.get(service, f"tick-{i}") == "v"
            during.append(ticks - before)
        done.set()
    print("ticks during each set+get:", during)
    # each real set+get is a few D-Bus round trips (about 15 ms here, 13+ ticks): a call that blocked the loop
    # would show 0 ticks. The deterministic proof is the next test; this one shows it with the real store.
    assert all(ticked > 0 for ticked in during), during


async def test_calls_run_on_worker_threads_bounded_by_the_limiter(rt_kernel, rt_register) -> None:
    """A backend call that only returns once the ticker has ticked proves the loop is free during it, and a
    count of threads inside the backend at once proves the limiter bounds them."""
    inside = 0
    most_inside = 0
    lock = threading.Lock()
    ticked_enough = threading.Event()
    loop_threads: set[int] = set()
    call_threads: set[int] = set()

    class Waiting:
        name = "waiting"
        max_value_bytes = None

        def get(self, service, name):
            nonlocal inside, most_inside
            with lock:
                inside += 1
                most_inside = max(most_inside, inside)
            call_threads.add(threading.get_ident())
            try:
                if not ticked_enough.wait(10):
                    raise AssertionError("the event loop did not run while the backend call was blocking")
                return "ok"
            finally:
                with lock:
                    inside -= 1

        def set(self, service, name, value):
            return None

        def delete(self, service, name):
            return False

    class Plugin:
        @hookimpl
        def rt_register_secret_backends(self, register):
            register("waiting", lambda config: Waiting())

    rt_register(Plugin(), "waiting-plugin")
    rt_kernel.with_overrides({"secrets.backend": "waiting"})
    loop_threads.add(threading.get_ident())
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while ticks < 50:
            ticks += 1
            await anyio.sleep(0.001)
        ticked_enough.set()

    results: list[str | None] = []

    async def call(i: int) -> None:
        results.append(await rt.secrets.get("svc", f"n{i}"))

    async with anyio.create_task_group() as tg:
        for i in range(12):
            tg.start_soon(call, i)
        tg.start_soon(ticker)
    assert results == ["ok"] * 12
    assert ticks == 50
    assert not call_threads & loop_threads
    assert 1 <= most_inside <= 8  # [secrets] max_threads defaults to 8


async def test_no_secret_in_logs(service, caplog) -> None:
    value = f"log-canary-{uuid.uuid4().hex}"
    with caplog.at_level(logging.DEBUG):
        await rt.secrets.set(service, "alice", value)
        assert await rt.secrets.get(service, "alice") == value
        await rt.secrets.delete(service, "alice")
    assert value not in caplog.text


def test_secret_service_env_is_isolated(secret_service) -> None:
    """The tests talk to our private bus, never to a user's session keyring."""
    assert os.environ["DBUS_SESSION_BUS_ADDRESS"] == secret_service.address
    assert "DISPLAY" not in os.environ


async def test_an_item_deleted_by_another_client_mid_call_is_not_found_not_an_error(
    service, monkeypatch
) -> None:
    """Another program deletes the item between our search and our read (or our delete): the Secret Service
    answers "no such object" for the path the search gave. rt reads that as "not found" (get is None, delete
    is False), as it would have been a moment later, never as a failure of the call."""
    from rt_secrets.backends import secret_service

    real_search = secret_service._Channel.search
    racing = {"on": False}

    def search_then_lose_the_race(self: object, attributes: dict[str, str]) -> list[str]:
        found = real_search(self, attributes)  # type: ignore[arg-type]
        if racing["on"] and found:
            gone = secret_tool("clear", "service", service, "username", "alice")  # another client
            assert gone.returncode == 0, gone.stderr
        return found

    monkeypatch.setattr(secret_service._Channel, "search", search_then_lose_the_race)
    for call in ("get", "delete"):
        await rt.secrets.set(service, "alice", "tok")
        racing["on"] = True
        result = await getattr(rt.secrets, call)(service, "alice")
        racing["on"] = False
        assert result is (None if call == "get" else False)
        assert await rt.secrets.get(service, "alice") is None
