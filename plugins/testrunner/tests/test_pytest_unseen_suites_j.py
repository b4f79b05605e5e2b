"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 11, sweep J: networking, web and async libraries): each test names the suite that showed it, runs
pytest itself on the same small project and compares the outcome counts, so a difference in either runner
shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import run_cli, same_counts_as_pytest, summary_counts, write_files


def test_a_hook_puts_a_wrapper_in_the_test_functions_place(tmp_path: Path) -> None:
    """trio 0.35.0's own test plugin: its ``pytest_pyfunc_call`` (``tryfirst``, returning None) sets
    ``pyfuncitem.obj`` to a sync function that runs the async test, and pytest's own call then runs that
    function with the test's arguments. rt's node had a read-only ``obj``: every async test failed with
    "property 'obj' of 'Node' object has no setter". pytest 9.2: 3 passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "conftest.py": """
                import asyncio
                import functools
                import inspect

                import pytest

                def run_sync(function):
                    @functools.wraps(function)
                    def wrapper(**kwargs):
                        return asyncio.run(function(**kwargs))

                    return wrapper

                @pytest.hookimpl(tryfirst=True)
                def pytest_pyfunc_call(pyfuncitem):
                    if inspect.iscoroutinefunction(pyfuncitem.obj):
                        pyfuncitem.obj = run_sync(pyfuncitem.obj)
            """,
            "test_replaced.py": """
                import asyncio

                import pytest

                @pytest.fixture
                def value():
                    return 3

                async def test_async(value):
                    await asyncio.sleep(0)
                    assert value == 3

                async def test_async_fails():
                    await asyncio.sleep(0)
                    assert False

                class TestMethods:
                    async def test_method(self, value):
                        assert value == 3

                def test_sync(request):
                    assert request.node.obj is test_sync
            """,
        },
    )
    same_counts_as_pytest(tmp_path)


#: a stand-in for pytest-trio 0.8.0 as far as these tests need it: its ``pytest_runtest_call`` wrapper puts a
#: sync function that runs the ``trio``-marked test in ``trio.run`` in the test's place (its
#: ``_trio_test_runner_factory``), with the clock among the test's arguments; its ``autojump_clock`` fixture;
#: its ``nursery`` fixture's placeholder (the real runner puts a nursery in its place, this one does not);
#: ``enable_trio_mode``, the ``automark`` a conftest.py's ``pytest_collection_modifyitems`` calls for trio mode
#: (``from pytest_trio.enable_trio_mode import *``); installed with a ``pytest11`` entry point, as pytest finds
#: the real one
FAKE_PYTEST_TRIO = {
    "pytest_trio-0.8.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pytest-trio\nVersion: 0.8.0\n",
    "pytest_trio-0.8.0.dist-info/entry_points.txt": "[pytest11]\ntrio = pytest_trio.plugin\n",
    "pytest_trio/__init__.py": "",
    "pytest_trio/plugin.py": """
        import functools
        import inspect

        import pytest
        import trio
        import trio.testing

        def _runner(item):
            function = item.obj

            @functools.wraps(function)
            def run(**kwargs):
                clocks = [value for value in kwargs.values() if isinstance(value, trio.abc.Clock)]
                trio.run(functools.partial(function, **kwargs), clock=clocks[0] if clocks else None)

            return run

        class NURSERY_FIXTURE_PLACEHOLDER:
            pass

        @pytest.fixture
        def nursery(request):
            return NURSERY_FIXTURE_PLACEHOLDER

        @pytest.fixture
        def autojump_clock():
            return trio.testing.MockClock(autojump_threshold=0)

        def enable_trio_mode(items):
            for item in items:
                if inspect.iscoroutinefunction(item.obj):
                    item.add_marker(pytest.mark.trio)

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(item):
            if item.get_closest_marker("trio") is not None:
                item.obj = _runner(item)
            yield
    """,
}


def test_pytest_trios_runtest_call_is_rts_own_work(tmp_path: Path) -> None:
    """pyee 13.0.1 with pytest-trio installed: pytest-trio's ``pytest_runtest_call`` wraps each
    ``trio``-marked test in ``trio.run``. rt runs those tests on trio itself (async_plugins.py) and called the
    hook too: its ``item.obj = ...`` failed the 4 tests of pyee's test_trio.py. Now rt leaves that hook of the
    async plugins it stands in for uncalled, as it does their ``pytest_pycollect_makeitem``. pytest 9.2: 2
    passed, 1 failed."""
    write_files(
        tmp_path,
        {
            **FAKE_PYTEST_TRIO,
            "pytest.ini": "[pytest]\n",
            "test_trio_marked.py": """
                import pytest
                import sniffio
                import trio

                @pytest.mark.trio
                async def test_on_trio():
                    await trio.sleep(0)
                    assert sniffio.current_async_library() == "trio"

                @pytest.mark.trio
                async def test_fails_on_trio():
                    await trio.sleep(0)
                    assert False

                def test_sync():
                    pass
            """,
        },
    )
    same_counts_as_pytest(tmp_path)
    rt_run = run_cli("test", cwd=tmp_path)
    assert "no setter" not in rt_run.output, rt_run.output


def test_trio_mode_from_a_conftest_and_pytest_trios_autojump_clock(tmp_path: Path) -> None:
    """tricycle 0.4.1: its conftest.py turns pytest-trio's trio mode on with ``from
    pytest_trio.enable_trio_mode import *``, whose ``pytest_collection_modifyitems`` marks every async test
    ``trio``; and its tests ask for ``autojump_clock``, a ``MockClock`` pytest-trio hands to ``trio.run``.
    rt decided who runs an async test before that hook marked it (16 failed as unclaimed: "async def
    functions are not natively supported"), and once fixed ran them on trio's real clock (minutes of
    timeouts, the run stopped after 10 minutes). pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            **FAKE_PYTEST_TRIO,
            "pytest.ini": "[pytest]\n",
            "conftest.py": """
                from pytest_trio.plugin import enable_trio_mode

                def pytest_collection_modifyitems(items):
                    enable_trio_mode(items)
            """,
            "test_trio_mode.py": """
                import sniffio
                import trio

                async def test_unmarked_on_trio():
                    assert sniffio.current_async_library() == "trio"

                async def test_clock_jumps(autojump_clock):
                    assert trio.lowlevel.current_clock() is autojump_clock
                    start = trio.current_time()
                    await trio.sleep(3600)
                    assert trio.current_time() - start >= 3600

                def test_sync():
                    pass
            """,
        },
    )
    same_counts_as_pytest(tmp_path)


def test_a_module_imported_during_a_test_is_read_by_importlibs_get_data(tmp_path: Path) -> None:
    """starlette 1.10.0: its autouse ``blockbuster`` fixture fails a test whose code reads a file while an
    event loop runs, unless importlib's ``get_data`` reads it (a module imported on first use). A module of
    the suite that rt rewrites (neither a test file nor a conftest.py) was read by rt's own code, so the
    lazy import of a starlette module in ``test_gzip_ignored_on_range_responses[asyncio]`` failed as a
    blocking call. The check here is blockbuster's, made small: a profile function that records each
    ``BufferedReader.read`` no ``get_data`` frame makes. pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "helpers/__init__.py": "",
            "helpers/lazy.py": """
                def answer():
                    assert True
                    return 42
            """,
            "test_lazy_import.py": """
                import io
                import sys

                def _outside_get_data(frame):
                    while frame is not None:
                        if frame.f_code.co_name == "get_data" and "importlib" in frame.f_code.co_filename:
                            return False
                        frame = frame.f_back
                    return True

                def test_import_reads_through_importlib():
                    reads = []

                    def profile(frame, event, arg):
                        if event == "c_call" and getattr(arg, "__qualname__", "") == "BufferedReader.read":
                            if _outside_get_data(frame):
                                reads.append(frame.f_code.co_filename)

                    sys.setprofile(profile)
                    try:
                        from helpers import lazy
                    finally:
                        sys.setprofile(None)
                    assert lazy.answer() == 42
                    assert reads == []

                def test_helper_imported():
                    assert "helpers.lazy" in sys.modules
            """,
        },
    )
    same_counts_as_pytest(tmp_path, "-p", "no:randomly")


def test_pytest_trios_nursery_fixture_for_a_test_and_its_fixtures(tmp_path: Path) -> None:
    """hypercorn 0.18.0: pytest-trio's ``nursery`` fixture is a placeholder its runner replaces by a nursery
    of the test's ``trio.run``, one per trio fixture or test that asks for it, cancelled when the test returns
    or the fixture's teardown ends; a fixture asking for it (hypercorn's sync ``client_stream``, which starts
    its server there) becomes a trio fixture, set up inside the run. rt handed the placeholder itself: 4
    set-up errors and 4 failures in hypercorn ("type object 'NURSERY_FIXTURE_PLACEHOLDER' has no attribute
    'start_soon'"). The stand-in plugin has the placeholder but not the real runner, so the counts are those
    of pytest 9.2 with pytest-trio 0.8.0 on the same file (checked by hand): 4 passed."""
    write_files(
        tmp_path,
        {
            **FAKE_PYTEST_TRIO,
            "pytest.ini": "[pytest]\n",
            "test_nursery.py": """
                import pytest
                import trio

                STARTED = []


                @pytest.fixture
                def served(nursery):
                    stream_in, stream_out = trio.testing.memory_stream_pair()

                    async def echo():
                        try:
                            while data := await stream_out.receive_some():
                                await stream_out.send_all(data)
                        finally:
                            STARTED.append("stopped")

                    nursery.start_soon(echo)
                    yield stream_in


                @pytest.fixture
                async def ticker(nursery):
                    ticks = []

                    async def tick():
                        while True:
                            ticks.append(1)
                            await trio.sleep(0)

                    nursery.start_soon(tick)
                    return ticks


                @pytest.mark.trio
                async def test_sync_fixture_serves(served):
                    await served.send_all(b"ping")
                    assert await served.receive_some() == b"ping"


                @pytest.mark.trio
                async def test_async_fixture_ticks(ticker):
                    await trio.sleep(0.01)
                    assert ticker


                @pytest.mark.trio
                async def test_own_nursery(nursery):
                    event = trio.Event()

                    async def set_event():
                        event.set()

                    nursery.start_soon(set_event)
                    await event.wait()
                    nursery.start_soon(trio.sleep_forever)


                def test_server_stopped_after_its_test():
                    assert STARTED == ["stopped"]
            """,
        },
    )
    rt_run = run_cli("test", cwd=tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 4}, rt_run.output


def test_caplogs_handler_on_a_logger_that_does_not_propagate_formats_its_records(tmp_path: Path) -> None:
    """uvicorn 0.54.0: its tests put ``caplog.handler`` on a logger whose ``propagate`` they turn off, then
    read ``record.message`` of ``caplog.records``, an attribute only a formatter sets. pytest's handler
    formats each record as it comes; rt's only kept it, and no other handler saw those records: 5 tests
    failed with "'LogRecord' object has no attribute 'message'". pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_logger_alone.py": """
                import logging

                def test_non_propagating_logger(caplog):
                    logger = logging.getLogger("server.trace")
                    logger.propagate = False
                    logger.setLevel(logging.DEBUG)
                    logger.addHandler(caplog.handler)
                    try:
                        logger.info("connection %s made", 7)
                    finally:
                        logger.removeHandler(caplog.handler)
                        logger.propagate = True
                    assert [record.message for record in caplog.records] == ["connection 7 made"]

                def test_propagating_logger(caplog):
                    logging.getLogger("server.other").warning("plain %d", 1)
                    assert [record.message for record in caplog.records] == ["plain 1"]
            """,
        },
    )
    same_counts_as_pytest(tmp_path)


def test_a_plugin_named_in_one_addopts_item_with_its_space(tmp_path: Path) -> None:
    """trio 0.35.0: its ``[tool.pytest.ini_options]`` addopts list has the one item ``"-p
    trio._tests.pytest_plugin"``; pytest strips the space from the value of ``-p`` and loads the plugin, whose
    fixtures (``autojump_clock``) and ``pytest_pyfunc_call`` the tests need. rt looked for a plugin named
    " trio._tests.pytest_plugin": 102 failed and 4 set-up errors in 8 of its test files. pytest 9.2: 2
    passed."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
                [tool.pytest.ini_options]
                addopts = ["--strict-markers", "-p helpers.own_plugin"]
                pythonpath = ["."]
            """,
            "helpers/__init__.py": "",
            "helpers/own_plugin.py": """
                import pytest

                @pytest.fixture
                def answer():
                    return 42
            """,
            "tests/test_plugin_fixture.py": """
                import sys

                def test_fixture_of_the_plugin(answer):
                    assert answer == 42

                def test_plugin_loaded():
                    assert "helpers.own_plugin" in sys.modules
            """,
        },
    )
    same_counts_as_pytest(tmp_path)
