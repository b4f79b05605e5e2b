"""One place decides the async backend: argument, then --backend / RT_BACKEND / config, then asyncio."""

from __future__ import annotations

import importlib.util

import pytest
import sniffio

from rt.backend import resolve_backend, run
from rt.config import Config
from rt.errors import BackendError


def test_default_is_asyncio(tmp_path):
    assert resolve_backend(config=Config.load(tmp_path, {})) == "asyncio"


def test_precedence_argument_flag_env_file(tmp_path):
    (tmp_path / "rt.toml").write_text('backend = "trio"\n')
    from_file = Config.load(tmp_path, {})
    assert resolve_backend(config=from_file) == "trio"
    from_env = Config.load(tmp_path, {"RT_BACKEND": "asyncio"})
    assert resolve_backend(config=from_env) == "asyncio"
    from_flag = from_env.with_overrides({"backend": "trio"})
    assert resolve_backend(config=from_flag) == "trio"
    assert resolve_backend("asyncio", config=from_flag) == "asyncio"


def test_unknown_backend_names_its_source():
    with pytest.raises(BackendError, match="unknown async backend 'curio' .*the backend= argument"):
        resolve_backend("curio")


def test_missing_trio_says_how_to_install(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "trio" else real(name, *a)
    )
    with pytest.raises(BackendError, match=r"trio is not installed: pip install 'rt-kernel\[trio\]'.*"):
        resolve_backend(config=Config.load(tmp_path, {"RT_BACKEND": "trio"}))


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_run_runs_on_the_chosen_backend(backend, tmp_path):
    async def which(x: int) -> tuple[str, int]:
        return sniffio.current_async_library(), x * 2

    config = Config.load(tmp_path, {"RT_BACKEND": backend})
    assert run(which, 21, config=config) == (backend, 42)


def test_run_uses_the_current_kernel(rt_make_kernel):
    import rt

    async def which() -> str:
        return sniffio.current_async_library()

    with rt.use_kernel(rt_make_kernel('backend = "trio"\n')):
        assert run(which) == "trio"


@pytest.mark.parametrize("setting", [None, "auto", "asyncio", "uvloop"])
def test_asyncio_runs_on_uvloop_when_installed_unless_loop_says_asyncio(tmp_path, setting):
    """API.md: uvloop is used when it is installed (rt-http depends on it); ``loop = "asyncio"`` turns it off."""
    installed = importlib.util.find_spec("uvloop") is not None

    async def loop_module():
        import asyncio

        return type(asyncio.get_running_loop()).__module__.split(".")[0]

    environ = {} if setting is None else {"RT_LOOP": setting}
    config = Config.load(tmp_path, {"RT_BACKEND": "asyncio", **environ})
    if setting == "uvloop" and not installed:
        with pytest.raises(BackendError, match="uvloop is not installed"):
            run(loop_module, config=config)
        return
    expected = "asyncio" if setting == "asyncio" or not installed else "uvloop"
    assert run(loop_module, config=config) == expected
