"""rt.testing, the pytest plugin for plugin authors."""

from __future__ import annotations

import pytest
import sniffio

import rt
from rt.hookspecs import hookimpl
from rt.interfaces import NamespaceEntry


@pytest.mark.anyio
async def test_async_tests_run_on_each_backend(anyio_backend):
    assert sniffio.current_async_library() == anyio_backend


def test_both_backends_ran(request):
    # Read from the collected items, not from a list the async test fills: under `pytest -n 2` xdist may run
    # the two parametrizations in another worker than this test.
    backends = [
        item.callspec.params["anyio_backend"]
        for item in request.session.items
        if getattr(item, "originalname", None) == "test_async_tests_run_on_each_backend"
    ]
    assert sorted(backends) == ["asyncio", "trio"]


def test_rt_kernel_is_current_and_isolated_from_rt_environment(rt_kernel, monkeypatch):
    assert rt.get_kernel() is rt_kernel
    assert rt_kernel.config.source("backend") == "default"


class Temp:
    @hookimpl
    def rt_register_namespace(self, register):
        register(NamespaceEntry("temporary", lambda kernel: "here"))


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
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "trio" else real(name, *a)
    )
    assert testing._installed_backends() == ("asyncio",)
    monkeypatch.undo()
    assert testing._installed_backends() == ("asyncio", "trio")


def _fixtures(directory, *, opt_in: bool) -> str:
    """``pytest --fixtures -v`` in a throwaway project outside this repository: which fixture comes from where."""
    import subprocess
    import sys

    from rt.testing import clean_environ

    (directory / "test_project.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    if opt_in:
        (directory / "conftest.py").write_text('pytest_plugins = ["rt.testing"]\n', encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--fixtures", "-v", str(directory)],
        capture_output=True,
        text=True,
        cwd=directory,
        env=clean_environ(),
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_unrelated_project_pytest_run_is_unchanged(tmp_path):
    """Installing rt-kernel must not give another project rt's fixtures or replace its anyio_backend."""
    output = _fixtures(tmp_path, opt_in=False)
    assert "rt/testing.py" not in output
    assert "rt_kernel" not in output
    assert "anyio/pytest_plugin.py" in output.split("anyio_backend ", 1)[1].splitlines()[0]


def test_project_that_opts_in_gets_rt_fixtures(tmp_path):
    output = _fixtures(tmp_path, opt_in=True)
    for fixture in ("rt_kernel", "rt_make_kernel", "rt_register", "anyio_backend"):
        lines = [line for line in output.splitlines() if line.startswith(f"{fixture} ")]
        assert any("rt/testing.py" in line for line in lines), lines
