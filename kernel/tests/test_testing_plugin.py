"""rt.testing, the pytest plugin for plugin authors."""

from __future__ import annotations

import sniffio
import pytest

import rt
from rt.hookspecs import hookimpl
from rt.interfaces import NamespaceEntry

seen_backends: list[str] = []


@pytest.mark.anyio
async def test_async_tests_run_on_each_backend(anyio_backend):
    seen_backends.append(sniffio.current_async_library())
    assert sniffio.current_async_library() == anyio_backend


def test_both_backends_ran():
    assert sorted(seen_backends) == ["asyncio", "trio"]


def test_rt_kernel_is_current_and_isolated_from_rt_environment(rt_kernel, monkeypatch):
    assert rt.get_kernel() is rt_kernel
    assert rt_kernel.config.source("backend") == "default"


class Temp:
    @hookimpl
    def rt_register_namespace(self, register):
        register(NamespaceEntry("temporary", lambda: "here"))


def test_rt_register_registers_for_one_test(rt_register):
    rt_register(Temp(), "temp")
    assert rt.temporary == "here"


def test_rt_register_cleaned_up(rt_kernel):
    assert "temp" not in {p.name for p in rt_kernel.plugins()}
    assert not hasattr(rt, "temporary")


def test_rt_make_kernel_reads_given_config(rt_make_kernel):
    kernel = rt_make_kernel('backend = "trio"\n', environ={"RT_BACKEND": "asyncio"})
    assert kernel.config["backend"] == "asyncio"
    assert kernel.config.source("backend") == "RT_BACKEND"


def test_without_trio_only_asyncio_is_offered(monkeypatch):
    """Projects that install rt-kernel without its trio extra must not get trio runs they cannot pass."""
    import importlib.util

    from rt import testing

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "trio" else real(name, *a))
    assert testing._installed_backends() == ("asyncio",)
    monkeypatch.undo()
    assert testing._installed_backends() == ("asyncio", "trio")
