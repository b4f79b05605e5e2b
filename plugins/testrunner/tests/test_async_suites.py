"""``rt test`` on async pytest suites: anyio's pytest plugin (a test per backend, each on its own loop),
pytest's order of tests sharing a wider-scoped parameter, and pytest's ids (issue 15).

Each test writes a small project, runs ``rt test`` and pytest on it and compares the outcome counts and the
tests' ids; the tests of the projects assert the backend they run on (``sniffio``), so a test run on the
wrong loop fails under rt even where the counts could agree.
"""

from __future__ import annotations

import re
from pathlib import Path

from rt.testing import (
    CliResult,
    counts_from_pytest,
    run_cli,
    run_pytest,
    summary_counts,
    write_files,
)

_RT_TEST_LINE = re.compile(r"^\((?:pass|fail|skip|xfail|xpass|error)\) (.+?) \[", re.MULTILINE)


def run_rt_test(cwd: Path, *args: str) -> CliResult:
    return run_cli("test", *args, cwd=cwd, timeout=180)


def _pytest(cwd: Path, *args: str) -> str:
    return run_pytest(*args, cwd=cwd).stdout


def pytest_counts(cwd: Path, *args: str) -> dict[str, int]:
    return counts_from_pytest(_pytest(cwd, *args))


def pytest_ids(cwd: Path, *args: str) -> list[str]:
    """The node ids pytest runs, in its order (``--collect-only -q``), without the file's path."""
    lines = _pytest(cwd, "--collect-only", "-q", *args).splitlines()
    return [line.split("::", 1)[1] for line in lines if "::" in line]


def rt_ids(result: CliResult) -> list[str]:
    """The tests rt ran, in its order, as pytest's node ids without the file's path."""
    return [name.replace(" > ", "::") for name in _RT_TEST_LINE.findall(result.output)]


BACKENDS = {
    "test_backends.py": """
        import pytest
        import sniffio

        SETUPS = []

        @pytest.fixture(scope="module")
        async def server(anyio_backend):
            SETUPS.append(anyio_backend)
            yield sniffio.current_async_library()
            assert sniffio.current_async_library() == anyio_backend

        @pytest.fixture
        async def client(server):
            yield server

        @pytest.mark.anyio
        async def test_runs_on_its_backend(anyio_backend_name, client):
            assert sniffio.current_async_library() == anyio_backend_name == client

        def test_sync():
            pass

        @pytest.mark.anyio
        async def test_module_fixture_once_per_backend(anyio_backend, server):
            assert SETUPS.count(anyio_backend) == 1, SETUPS

        @pytest.mark.anyio
        class TestMarkedClass:
            async def test_method(self, anyio_backend):
                assert sniffio.current_async_library() == anyio_backend

            @pytest.mark.parametrize("x", [1, 2])
            async def test_param(self, x, anyio_backend):
                assert sniffio.current_async_library() == anyio_backend

            def test_sync_method(self):
                pass
    """,
    "test_module_mark.py": """
        import pytest
        import sniffio

        pytestmark = pytest.mark.anyio

        async def test_x(anyio_backend_name):
            assert sniffio.current_async_library() == anyio_backend_name

        async def test_y(anyio_backend_name):
            assert sniffio.current_async_library() == anyio_backend_name
    """,
    "own/conftest.py": """
        import pytest

        @pytest.fixture(
            scope="session",
            params=[pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop"), "trio"],
        )
        def anyio_backend(request):
            return request.param
    """,
    "own/test_own.py": """
        import asyncio
        import pytest
        import sniffio

        pytestmark = pytest.mark.anyio

        async def test_own_backend(anyio_backend_name, anyio_backend_options):
            assert sniffio.current_async_library() == anyio_backend_name
            if anyio_backend_name == "asyncio":
                assert anyio_backend_options == {"use_uvloop": True}
                assert "uvloop" in type(asyncio.get_running_loop()).__module__
    """,
    "trio_only/conftest.py": """
        import pytest

        @pytest.fixture
        def anyio_backend():
            return "trio"
    """,
    "trio_only/test_trio_only.py": """
        import pytest
        import sniffio

        @pytest.mark.anyio
        async def test_trio():
            assert sniffio.current_async_library() == "trio"
    """,
}


def test_anyio_marked_tests_run_once_per_backend_on_that_backend(tmp_path: Path) -> None:
    """anyio's pytest plugin runs a test marked ``anyio`` (itself, its class, its module) once per available
    backend, or on the suite's own ``anyio_backend`` (any scope, with options such as uvloop), with its
    async fixtures on the same loop; rt ran it once, on ``--backend``'s loop."""
    write_files(tmp_path, BACKENDS)
    result = run_rt_test(tmp_path)
    expected = {"pass": 19}
    assert summary_counts(result.stderr) == expected, result.output
    assert pytest_counts(tmp_path) == expected
    assert result.code == 0


def test_tests_sharing_a_module_scoped_parameter_run_together_as_under_pytest(tmp_path: Path) -> None:
    """pytest runs every test of a module with ``anyio_backend == "asyncio"`` before those with trio (and so
    for any parametrized fixture wider than a function), so a module-scoped fixture over that parameter is set
    up once per value: same ids, in the same order."""
    write_files(tmp_path, {"test_backends.py": BACKENDS["test_backends.py"]})
    result = run_rt_test(tmp_path)
    assert summary_counts(result.stderr) == {"pass": 12}, result.output
    assert rt_ids(result) == pytest_ids(tmp_path)
    assert rt_ids(result)[:3] == [
        "test_runs_on_its_backend[asyncio]",
        "test_module_fixture_once_per_backend[asyncio]",
        "TestMarkedClass::test_method[asyncio]",
    ]


def test_ids_put_fixture_params_first_widest_scope_first(tmp_path: Path) -> None:
    """pytest's ids name a fixture's params before ``parametrize``'s, the widest scope first
    (``test[m1-f1-1]``), and a conftest's ``pytest_generate_tests`` between them."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            def pytest_generate_tests(metafunc):
                if "g" in metafunc.fixturenames:
                    metafunc.parametrize("g", ["g1", "g2"])
            """,
            "test_ids.py": """
            import pytest

            @pytest.fixture(params=["f1", "f2"])
            def ffix(request):
                return request.param

            @pytest.fixture(scope="module", params=["m1", "m2"])
            def mfix(request):
                return request.param

            @pytest.mark.parametrize("x", [1, 2])
            def test_func_scope(ffix, x):
                pass

            @pytest.mark.parametrize("x", [1, 2])
            def test_both(x, ffix, mfix):
                pass

            @pytest.mark.parametrize("x", [1])
            def test_generated(x, ffix, g):
                pass

            @pytest.mark.usefixtures("mfix")
            @pytest.mark.parametrize("x", [1])
            def test_use(x):
                pass
            """,
        },
    )
    result = run_rt_test(tmp_path)
    assert summary_counts(result.stderr) == {"pass": 18}, result.output
    assert rt_ids(result) == pytest_ids(tmp_path)


def test_anyio_auto_mode_claims_every_async_test(tmp_path: Path) -> None:
    """``anyio_mode = auto``: every coroutine test is anyio's, marked or not."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nanyio_mode = auto\n",
            "test_auto.py": """
            import sniffio

            async def test_unmarked(anyio_backend_name):
                assert sniffio.current_async_library() == anyio_backend_name

            def test_sync():
                pass
            """,
        },
    )
    result = run_rt_test(tmp_path)
    assert summary_counts(result.stderr) == {"pass": 3}, result.output
    assert (
        rt_ids(result)
        == pytest_ids(tmp_path)
        == ["test_unmarked[asyncio]", "test_unmarked[trio]", "test_sync"]
    )


def test_async_tests_and_fixtures_no_plugin_claims_fail_as_under_pytest(tmp_path: Path) -> None:
    """pytest 9 runs no coroutine itself: an async test no plugin claims fails ("async def functions are not
    natively supported"), an async fixture none sets up is a set-up error; rt ran both on its own loop."""
    write_files(
        tmp_path,
        {
            "test_unclaimed.py": """
            import pytest

            @pytest.fixture
            async def resource():
                return 1

            async def test_unmarked():
                pass

            def test_sync_with_async_fixture(resource):
                pass

            def test_sync():
                pass
            """
        },
    )
    result = run_rt_test(tmp_path)
    expected = {"pass": 1, "fail": 1, "error": 1}
    assert summary_counts(result.stderr) == expected, result.output
    assert pytest_counts(tmp_path) == expected
    assert "async def functions are not natively supported" in result.output
    assert "requested an async fixture 'resource', with no plugin or hook that handled it" in result.output


def test_a_project_without_pytest_runs_async_test_functions_on_rts_backend(tmp_path: Path) -> None:
    """rt's own test files (no pytest anywhere) keep running ``async def test_*`` functions on ``--backend``."""
    write_files(
        tmp_path,
        {
            "test_native.py": """
            import sniffio

            async def test_native():
                assert sniffio.current_async_library() == "trio"
            """
        },
    )
    result = run_rt_test(tmp_path, "--backend", "trio")
    assert summary_counts(result.stderr) == {"pass": 1}, result.output


#: Stand-ins for pytest-asyncio and pytest-trio, installed as pytest would find them (a ``pytest11`` entry
#: point): rt reads the plugins' presence, their marks, modes and ``@pytest_asyncio.fixture``'s attribute, and
#: never imports the plugins to run anything. The counts expected are those of pytest 9.2 with the real
#: pytest-asyncio 1.5.0 and pytest-trio 0.8.0 on the same files (checked by hand: the real plugins are not in
#: this repository's environment, where they would change how its own suite runs).
FAKE_PLUGINS = {
    "plugins/pytest_asyncio-1.5.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pytest-asyncio\nVersion: 1.5.0\n",
    "plugins/pytest_asyncio-1.5.0.dist-info/entry_points.txt": "[pytest11]\nasyncio = pytest_asyncio.plugin\n",
    "plugins/pytest_asyncio/__init__.py": """
        import pytest

        def fixture(function=None, loop_scope=None, **kwargs):
            def wrap(function):
                function._force_asyncio_fixture = True
                function._loop_scope = loop_scope
                return pytest.fixture(function, **kwargs)

            return wrap(function) if function is not None else wrap
    """,
    "plugins/pytest_asyncio/plugin.py": "",
    "plugins/pytest_trio-0.8.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pytest-trio\nVersion: 0.8.0\n",
    "plugins/pytest_trio-0.8.0.dist-info/entry_points.txt": "[pytest11]\ntrio = pytest_trio.plugin\n",
    "plugins/pytest_trio/__init__.py": "",
    "plugins/pytest_trio/plugin.py": "",
}


def test_pytest_asyncio_strict_mode_and_pytest_trio_marks(tmp_path: Path) -> None:
    """pytest-asyncio's strict mode runs tests marked ``asyncio`` and ``@pytest_asyncio.fixture`` fixtures (also
    for a sync test) on asyncio, whatever ``--backend`` says; a plain async fixture of such a test is pytest's
    set-up error, an unmarked async test its failure. pytest-trio runs ``trio``-marked tests and their async
    fixtures on trio."""
    write_files(
        tmp_path,
        {
            **FAKE_PLUGINS,
            "test_asyncio_strict.py": """
            import asyncio
            import pytest
            import pytest_asyncio
            import sniffio

            @pytest_asyncio.fixture
            async def loop():
                await asyncio.sleep(0)
                yield asyncio.get_running_loop()

            @pytest.fixture
            async def plain():
                return 1

            @pytest.mark.asyncio
            async def test_marked(loop):
                assert sniffio.current_async_library() == "asyncio"
                assert loop is asyncio.get_running_loop()

            @pytest.mark.asyncio
            async def test_marked_plain_fixture(plain):
                pass

            async def test_unmarked():
                pass

            def test_sync_uses_asyncio_fixture(loop):
                assert isinstance(loop, asyncio.AbstractEventLoop)

            @pytest.mark.asyncio(loop_scope="module")
            async def test_module_loop():
                assert sniffio.current_async_library() == "asyncio"
            """,
            "test_trio_mark.py": """
            import pytest
            import sniffio
            import trio

            @pytest.fixture
            async def value():
                await trio.sleep(0)
                yield sniffio.current_async_library()

            @pytest.mark.trio
            async def test_trio(value):
                assert sniffio.current_async_library() == value == "trio"
            """,
        },
    )
    result = run_cli("test", "--backend", "trio", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "plugins")})
    assert summary_counts(result.stderr) == {"pass": 4, "fail": 1, "error": 1}, result.output
    assert "(error) test_marked_plain_fixture" in result.output
    assert "(fail) test_unmarked" in result.output


def test_pytest_asyncio_auto_mode_claims_every_async_test_and_fixture(tmp_path: Path) -> None:
    """``asyncio_mode = auto``: every async test and fixture runs on asyncio, an ``anyio``-marked test too
    (pytest-asyncio wraps it before anyio's hook sees it, so its ``[trio]`` case runs on asyncio and fails
    here as under pytest)."""
    write_files(
        tmp_path,
        {
            **FAKE_PLUGINS,
            "pytest.ini": "[pytest]\nasyncio_mode = auto\n",
            "test_auto.py": """
            import asyncio
            import pytest
            import sniffio

            @pytest.fixture
            async def loop():
                await asyncio.sleep(0)
                return asyncio.get_running_loop()

            async def test_unmarked(loop):
                assert sniffio.current_async_library() == "asyncio"

            def test_sync(loop):
                assert loop is not None

            @pytest.mark.anyio
            async def test_anyio(anyio_backend_name):
                assert sniffio.current_async_library() == anyio_backend_name
            """,
        },
    )
    result = run_cli("test", "--backend", "trio", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "plugins")})
    assert summary_counts(result.stderr) == {"pass": 3, "fail": 1}, result.output
    assert "(fail) test_anyio[trio]" in result.output


def test_pytest_asyncio_loop_factories_hook_and_a_virtual_clock(tmp_path: Path) -> None:
    """aiostream 0.8.1: its conftest's ``pytest_asyncio_loop_factories`` (pytest-asyncio 1.5) names the loop
    its tests run on, a loop whose clock jumps ahead when idle. rt ran them on a plain loop, and its own
    far deadline (pytest tests have no time-out) was a timer that clock reached at once: 'timed out'."""
    write_files(
        tmp_path,
        {
            **FAKE_PLUGINS,
            "conftest.py": """
            import asyncio

            class JumpingLoop(asyncio.SelectorEventLoop):
                now = 0.0

                def time(self):
                    JumpingLoop.now += 100_000.0  # a virtual clock: a day passes at every look
                    return JumpingLoop.now

            def pytest_asyncio_loop_factories(config, item):
                return {"jumping": JumpingLoop}
            """,
            "test_loop.py": """
            import asyncio
            import pytest
            from conftest import JumpingLoop

            @pytest.mark.asyncio
            async def test_runs_on_the_hooks_loop():
                assert type(asyncio.get_running_loop()) is JumpingLoop
                for _ in range(100):
                    await asyncio.sleep(0)
            """,
        },
    )
    result = run_cli("test", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "plugins")})
    assert summary_counts(result.stderr) == {"pass": 1}, result.output


LOOP_SCOPES = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        asyncio_mode = "strict"
        asyncio_default_fixture_loop_scope = "function"
    """,
    "test_scopes.py": """
        import asyncio
        import os
        import signal
        import threading

        import pytest
        import pytest_asyncio

        LOOPS = []

        @pytest_asyncio.fixture(scope="module", loop_scope="module")
        async def module_loop():
            return asyncio.get_running_loop()

        @pytest_asyncio.fixture(scope="module")
        async def module_fixture_function_loop():
            # asyncio_default_fixture_loop_scope = function: a loop narrower than the fixture is pytest-asyncio's
            # ScopeMismatch, a set-up error
            return asyncio.get_running_loop()

        @pytest.mark.asyncio
        async def test_function_loop_one():
            assert threading.current_thread() is threading.main_thread()
            LOOPS.append(asyncio.get_running_loop())

        @pytest.mark.asyncio
        async def test_function_loop_two():
            assert asyncio.get_running_loop() is not LOOPS[0]
            assert LOOPS[0].is_closed()

        @pytest.mark.asyncio(loop_scope="module")
        async def test_module_loop_shared(module_loop):
            assert asyncio.get_running_loop() is module_loop

        @pytest.mark.asyncio
        async def test_function_loop_is_not_the_modules(module_loop):
            assert asyncio.get_running_loop() is not module_loop

        @pytest.mark.asyncio
        async def test_scope_mismatch(module_fixture_function_loop):
            pass

        @pytest.mark.asyncio
        async def test_leftover_task():
            async def forever():
                await asyncio.sleep(3600)

            LOOPS.append(asyncio.create_task(forever()))

        def test_leftover_task_was_cancelled_with_its_loop():
            assert LOOPS[-1].cancelled()

        @pytest.mark.asyncio
        async def test_signal_handler():
            loop = asyncio.get_running_loop()
            got = asyncio.Event()
            loop.add_signal_handler(signal.SIGUSR1, got.set)
            try:
                os.kill(os.getpid(), signal.SIGUSR1)
                await asyncio.wait_for(got.wait(), 60)
            finally:
                loop.remove_signal_handler(signal.SIGUSR1)

        class TestClassLoop:
            pytestmark = pytest.mark.asyncio(loop_scope="class")

            async def test_a(self):
                LOOPS.append(asyncio.get_running_loop())

            async def test_b(self):
                assert asyncio.get_running_loop() is LOOPS[-1]
    """,
    "test_session.py": """
        import asyncio

        import pytest
        import pytest_asyncio

        @pytest_asyncio.fixture(scope="session", loop_scope="session")
        async def session_loop():
            return asyncio.get_running_loop()

        @pytest.mark.asyncio(loop_scope="session")
        async def test_session_loop(session_loop):
            assert asyncio.get_running_loop() is session_loop

        @pytest.mark.asyncio
        async def test_future_of_another_loop(session_loop):
            future = session_loop.create_future()
            session_loop.call_soon(future.set_result, 1)
            await future  # "attached to a different loop", as under pytest-asyncio
    """,
}


def test_pytest_asyncio_loop_scopes_on_the_main_thread(tmp_path: Path) -> None:
    """pytest-asyncio 1.x: a loop per ``loop_scope`` (mark, fixture, ini defaults), made when the scope first
    needs it and closed at its end (a task left running is cancelled), run on the main thread (signal
    handlers work); a module-scoped fixture whose loop scope is narrower is a set-up error and a future of
    another scope's loop fails. rt kept one loop for the run, in a thread of its own: 6 of these differed."""
    write_files(tmp_path, {**FAKE_PLUGINS, **LOOP_SCOPES})
    result = run_cli("test", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "plugins")}, timeout=180)
    # pytest 9.2 with pytest-asyncio 1.5.0: 10 passed, 1 failed, 1 error
    assert summary_counts(result.stderr) == {"pass": 10, "fail": 1, "error": 1}, result.output
    assert "(fail) test_future_of_another_loop" in result.output
    assert "(error) test_scope_mismatch" in result.output
    assert "ScopeMismatch" in result.output


ANYIO_LOOPS = {
    "test_anyio_loops.py": """
        import os
        import signal
        import threading

        import anyio
        import pytest
        import sniffio

        pytestmark = pytest.mark.anyio
        SEEN = {}

        def current_loop():
            if sniffio.current_async_library() == "asyncio":
                import asyncio

                return asyncio.get_running_loop()
            import trio

            return trio.lowlevel.current_root_task()

        async def test_first(anyio_backend):
            assert threading.current_thread() is threading.main_thread()
            SEEN[anyio_backend] = current_loop()

        async def test_each_test_has_its_own_loop(anyio_backend):
            # no async fixture wider than a function holds anyio's runner: a new one for every test
            assert current_loop() is not SEEN[anyio_backend]

        async def test_signal_receiver(anyio_backend):
            with anyio.open_signal_receiver(signal.SIGUSR1) as signals:
                await anyio.to_thread.run_sync(os.kill, os.getpid(), signal.SIGUSR1)
                with anyio.fail_after(60):
                    async for received in signals:
                        assert received == signal.SIGUSR1
                        break
    """,
    "test_anyio_module.py": """
        import pytest
        import sniffio

        pytestmark = pytest.mark.anyio

        def current_loop():
            if sniffio.current_async_library() == "asyncio":
                import asyncio

                return asyncio.get_running_loop()
            import trio

            return trio.lowlevel.current_root_task()

        @pytest.fixture(scope="module")
        async def module_loop():
            # holds anyio's runner until the module ends (set up again for each backend)
            return current_loop()

        async def test_a(module_loop):
            assert current_loop() is module_loop

        async def test_b(module_loop):
            assert current_loop() is module_loop
    """,
}


def test_anyio_loops_on_the_main_thread_while_a_test_or_fixture_holds_them(tmp_path: Path) -> None:
    """anyio's plugin runs its loop on the main thread (``open_signal_receiver`` works), keeps it while a test
    or an async fixture holds it (a module-scoped async fixture: one loop for the module's tests of a backend)
    and sets such a fixture up again for each backend. Before, rt kept one loop per backend for the run in a
    thread of its own and reused the asyncio value of the module fixture for the trio tests."""
    write_files(tmp_path, ANYIO_LOOPS)
    result = run_rt_test(tmp_path)
    assert summary_counts(result.stderr) == {"pass": 10}, result.output
    assert pytest_counts(tmp_path) == {"pass": 10}


def test_a_time_out_stops_an_async_test_on_the_main_thread_loop_and_the_run_goes_on(tmp_path: Path) -> None:
    """``--timeout`` on async tests run on the main thread: the alarm stops a test awaiting forever and one
    blocking in sync code alike (pytest-timeout's signal method), the loop it stopped is replaced, and the
    next tests run on both backends; a test exiting cancel scopes out of order is no time-out's business."""
    write_files(
        tmp_path,
        {
            "test_timeouts.py": """
            import time

            import anyio
            import pytest

            pytestmark = pytest.mark.anyio

            async def test_awaits_forever(anyio_backend):
                await anyio.sleep_forever()

            async def test_blocks_in_sync_code(anyio_backend):
                time.sleep(3600)

            async def test_next_runs(anyio_backend):
                await anyio.sleep(0)

            async def test_scopes_exited_out_of_order(anyio_backend):
                first, second = anyio.CancelScope(), anyio.CancelScope()
                first.__enter__()
                second.__enter__()
                pytest.raises(RuntimeError, first.__exit__, None, None, None)
            """,
        },
    )
    result = run_rt_test(tmp_path, "--timeout", "2000")
    assert summary_counts(result.stderr) == {"pass": 4, "fail": 4}, result.output
    for name in ("test_awaits_forever", "test_blocks_in_sync_code"):
        for backend in ("asyncio", "trio"):
            assert f"(fail) {name}[{backend}]" in result.output


def test_pytest_asyncio_runs_each_step_as_a_task_of_its_own(tmp_path: Path) -> None:
    """pytest-asyncio runs an async fixture and the test each in a task of its own (``Runner.run``), where
    anyio's plugin serves them from one task: python-engineio 4.15.1's SIGINT handler schedules a task that
    cancels every other task, which under rt reached the task serving the test and failed it."""
    write_files(
        tmp_path,
        {
            **FAKE_PLUGINS,
            "test_tasks.py": """
            import asyncio

            import pytest
            import pytest_asyncio

            @pytest_asyncio.fixture
            async def fixture_task():
                return asyncio.current_task()

            @pytest.mark.asyncio
            async def test_own_task(fixture_task):
                assert asyncio.current_task() is not fixture_task

            @pytest.mark.asyncio
            async def test_cancels_every_other_task():
                async def cancel_others():
                    for task in asyncio.all_tasks():
                        if task is not asyncio.current_task():
                            task.cancel()

                asyncio.ensure_future(cancel_others())
            """,
        },
    )
    result = run_cli("test", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "plugins")}, timeout=180)
    # pytest 9.2 with pytest-asyncio 1.5.0: 2 passed
    assert summary_counts(result.stderr) == {"pass": 2}, result.output


def test_anyio_sets_up_the_async_fixtures_of_a_sync_test_that_asks_for_its_backend(tmp_path: Path) -> None:
    """anyio's ``pytest_fixture_setup`` runs an async fixture on the test's ``anyio_backend`` whenever that
    name is among the test's fixtures, a sync test's too, and also when a plugin's ``pytest_fixture_setup``
    asks for the fixture with ``request.getfixturevalue`` (pytest-lazy-fixtures' ``lf()`` in a fixture's
    ``params``); rt failed such a fixture with pytest's "requested an async fixture ... with no plugin or
    hook that handled it". pytest 9.2: 4 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest
            import sniffio


            class Lazy:
                def __init__(self, name):
                    self.name = name


            @pytest.fixture(params=["asyncio", "trio"])
            def anyio_backend(request):
                return request.param


            @pytest.fixture
            async def library(anyio_backend):
                yield sniffio.current_async_library()


            @pytest.hookimpl(tryfirst=True)
            def pytest_fixture_setup(fixturedef, request):
                param = getattr(request, "param", None)
                if isinstance(param, Lazy):
                    request.param = request.getfixturevalue(param.name)
            """,
            "test_sync.py": """
            import pytest

            from conftest import Lazy


            @pytest.fixture(params=[Lazy("library")], ids=["lazy"])
            def resolved(request):
                return request.param


            def test_sync_test_with_an_async_fixture(library, anyio_backend):
                assert library == anyio_backend


            def test_async_fixture_asked_for_in_a_hook(resolved, anyio_backend):
                assert resolved == anyio_backend
            """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 4}
    result = run_rt_test(tmp_path)
    assert summary_counts(result.stderr) == expected, result.output
