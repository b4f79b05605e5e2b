"""The rules of spec section A and REFERENCE.md "Secrets", on the memory backend (the keyring path too)."""

from __future__ import annotations

import pytest

import rt
from rt.kernel import Kernel

pytestmark = pytest.mark.anyio

ODD_VALUES = [
    "line one\nline two\r\nthree",
    "quotes ' \" ` and \\ backslash",
    "emoji 🔑🦀 and CJK 秘密の鍵 and RTL مرحبا",
    "controls \x00\x01\x07\x1b[31m\x7f tab\t end",
    " leading and trailing spaces ",
]


@pytest.fixture
def memory_kernel(rt_make_kernel) -> Kernel:
    kernel = rt_make_kernel(environ={"RT_SECRETS_BACKEND": "memory"})
    with rt.use_kernel(kernel):
        yield kernel


async def test_set_replaces_get_reads_delete_removes(memory_kernel: Kernel) -> None:
    await rt.secrets.set(service="svc", name="alice", value="one")
    await rt.secrets.set("svc", "alice", "two")
    assert await rt.secrets.get(service="svc", name="alice") == "two"
    assert await rt.secrets.get("svc", "alice") == "two"
    assert await rt.secrets.delete(service="svc", name="alice") is True
    assert await rt.secrets.get("svc", "alice") is None


async def test_missing_get_is_none_and_missing_delete_is_false(memory_kernel: Kernel) -> None:
    assert await rt.secrets.get("svc", "nobody") is None
    assert await rt.secrets.delete("svc", "nobody") is False


async def test_empty_value_deletes(memory_kernel: Kernel) -> None:
    await rt.secrets.set("svc", "bob", "tok")
    await rt.secrets.set("svc", "bob", "")
    assert await rt.secrets.get("svc", "bob") is None


async def test_pairs_are_independent(memory_kernel: Kernel) -> None:
    await rt.secrets.set("svc-a", "x", "1")
    await rt.secrets.set("svc-b", "x", "2")
    await rt.secrets.set("svc-a", "y", "3")
    assert [await rt.secrets.get(s, n) for s, n in [("svc-a", "x"), ("svc-b", "x"), ("svc-a", "y")]] == [
        "1",
        "2",
        "3",
    ]


@pytest.mark.parametrize("value", ODD_VALUES)
async def test_exact_round_trip(memory_kernel: Kernel, value: str) -> None:
    await rt.secrets.set("svc", "odd", value)
    assert await rt.secrets.get("svc", "odd") == value


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: rt.secrets.get(), TypeError, "Expected service and name to be strings"),
        (lambda: rt.secrets.get("svc"), TypeError, "Expected service and name to be strings"),
        (lambda: rt.secrets.get(service=1, name="n"), TypeError, "Expected service and name to be strings"),
        (lambda: rt.secrets.get("", "n"), ValueError, "Expected service and name to not be empty"),
        (lambda: rt.secrets.delete("svc", ""), ValueError, "Expected service and name to not be empty"),
        (
            lambda: rt.secrets.set("svc", "n"),
            TypeError,
            "Expected 'value' to be a string. To delete the secret, call secrets.delete instead.",
        ),
        (
            lambda: rt.secrets.set("svc", "n", b"bytes"),
            TypeError,
            "Expected 'value' to be a string. To delete the secret, call secrets.delete instead.",
        ),
        (lambda: rt.secrets.set(name="n", value="v"), TypeError, "Expected service and name to be strings"),
    ],
)
async def test_argument_errors_have_reference_messages(memory_kernel, call, error, message) -> None:
    with pytest.raises(error) as info:
        await call()
    assert str(info.value) == message
    assert info.value.code == "ERR_INVALID_ARG_TYPE"


async def test_argument_errors_raise_before_any_backend_call(rt_register) -> None:
    """Errors come at once: a backend that records calls sees none."""
    from rt.hookspecs import hookimpl

    calls: list[str] = []

    class Recording:
        name = "recording"
        max_value_bytes = None

        def get(self, service, name):
            calls.append("get")

        def set(self, service, name, value):
            calls.append("set")

        def delete(self, service, name):
            calls.append("delete")
            return False

    class Plugin:
        @hookimpl
        def rt_register_secret_backends(self, register):
            register("recording", lambda config: Recording())

    kernel = rt.get_kernel()
    rt_register(Plugin(), "recording-plugin")
    kernel.with_overrides({"secrets.backend": "recording"})
    for bad in (
        lambda: rt.secrets.get("", "x"),
        lambda: rt.secrets.set("s", "n", 5),
        lambda: rt.secrets.delete(None, "x"),
    ):
        with pytest.raises((TypeError, ValueError)):
            await bad()
    assert calls == []
    await rt.secrets.get("s", "n")
    assert calls == ["get"]


async def test_each_kernel_has_its_own_memory_store(rt_make_kernel) -> None:
    first = rt_make_kernel(environ={"RT_SECRETS_BACKEND": "memory"})
    second = rt_make_kernel(environ={"RT_SECRETS_BACKEND": "memory"})
    with rt.use_kernel(first):
        await rt.secrets.set("svc", "n", "first")
    with rt.use_kernel(second):
        assert await rt.secrets.get("svc", "n") is None
    with rt.use_kernel(first):
        assert await rt.secrets.get("svc", "n") == "first"


async def test_a_lone_surrogate_is_refused_before_the_store(memory_kernel: Kernel) -> None:
    with pytest.raises(ValueError, match="lone surrogate") as info:
        await rt.secrets.set("svc", "alice", "half a pair \ud83d")
    assert info.value.code == "ERR_INVALID_ARG_TYPE"
    assert "\ud83d" not in str(info.value)
    assert await rt.secrets.get("svc", "alice") is None
