"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 12, sweep M: async, network and web libraries): each test names the suite that showed it, runs
pytest itself on the same small project and compares the outcome counts, so a difference in either runner
shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files

#: a stand-in for pytest-trio 0.8.0's fixture handling, installed with a ``pytest11`` entry point as pytest
#: finds the real one: its ``trio_fixture`` decorator (the ``nursery`` fixture is one) and its
#: ``pytest_fixture_setup``, which refuses a trio fixture (one made with ``trio_fixture``; in a trio test or
#: trio mode, any async one) of a test not marked ``trio``, and one wider than a function. rt stands in for
#: pytest-trio and does not call that hook; pytest does.
FAKE_PYTEST_TRIO_FIXTURES = {
    "pytest_trio-0.8.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pytest-trio\nVersion: 0.8.0\n",
    "pytest_trio-0.8.0.dist-info/entry_points.txt": "[pytest11]\ntrio = pytest_trio.plugin\n",
    "pytest_trio/__init__.py": "",
    "pytest_trio/plugin.py": """
        import inspect

        import pytest

        def pytest_addoption(parser):
            parser.addini("trio_mode", "", type="bool", default=False)

        class NURSERY_FIXTURE_PLACEHOLDER:
            pass

        def trio_fixture(func):
            func._force_trio_fixture = True
            return pytest.fixture(func)

        @trio_fixture
        def nursery(request):
            return NURSERY_FIXTURE_PLACEHOLDER

        def pytest_fixture_setup(fixturedef, request):
            is_trio_test = request.node.get_closest_marker("trio") is not None
            coerce_async = is_trio_test or request.node.config.getini("trio_mode")
            func = fixturedef.func
            is_async = inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)
            if getattr(func, "_force_trio_fixture", False) or (coerce_async and is_async):
                if request.scope != "function":
                    raise RuntimeError("Trio fixtures must be function-scope")
                if not is_trio_test:
                    raise RuntimeError("Trio fixtures can only be used by Trio tests")
    """,
}


def test_pytest_trios_fixtures_refused_outside_a_trio_test(tmp_path: Path) -> None:
    """trio-util 0.8.0 without trio mode (its CI turns it on; its configuration does not): pytest-trio's
    ``pytest_fixture_setup`` refuses its ``nursery`` fixture for a test not marked ``trio``, a set-up error
    ("Trio fixtures can only be used by Trio tests"), before the test runs. rt, which sets pytest-trio's
    fixtures up itself, handed the placeholder: a sync test passed with it, an async one failed as
    unclaimed (pytest 26 failed, 33 errors; rt 58 failed, 1 error). pytest 9.2: 1 passed, 1 failed, 3
    errors."""
    write_files(
        tmp_path,
        {
            **FAKE_PYTEST_TRIO_FIXTURES,
            "pytest.ini": "[pytest]\n",
            "test_no_trio_mode.py": """
                import pytest

                async def test_unmarked_with_nursery(nursery):
                    pass

                def test_sync_with_nursery(nursery):
                    pass

                @pytest.fixture
                def wrapped(nursery):
                    return nursery

                def test_sync_through_a_fixture(wrapped):
                    pass

                async def test_unmarked_without_fixtures():
                    pass

                def test_sync():
                    pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "Trio fixtures can only be used by Trio tests" in rt_run.output, rt_run.output


def test_an_async_fixture_wider_than_a_function_in_trio_mode(tmp_path: Path) -> None:
    """pytest-trio's trio mode makes every async fixture a trio fixture, and a trio fixture must be
    function-scoped: a module-scoped async fixture is a set-up error of each test that asks for it ("Trio
    fixtures must be function-scope"); a sync test asking for a function-scoped async fixture is refused as
    not a trio test. pytest 9.2: 1 passed, 3 errors."""
    write_files(
        tmp_path,
        {
            **FAKE_PYTEST_TRIO_FIXTURES,
            "pytest.ini": "[pytest]\ntrio_mode = true\n",
            "test_trio_mode_scopes.py": """
                import pytest

                @pytest.fixture(scope="module")
                async def shared():
                    return 1

                @pytest.fixture
                async def own():
                    return 2

                def test_first(shared):
                    pass

                def test_second(shared):
                    pass

                def test_sync_with_async_fixture(own):
                    pass

                def test_sync():
                    pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "Trio fixtures must be function-scope" in rt_run.output, rt_run.output


def test_a_test_function_that_returns_a_value_warns(tmp_path: Path) -> None:
    """waitress 3.0.2: its ``test_suite()`` returns a ``doctest.DocTestSuite``, and pytest's
    ``pytest_pyfunc_call`` warns of a test function that returns anything but None
    (``PytestReturnNotNoneWarning``); rt called the function and dropped its value: 1 warning where pytest
    counts 2. Under ``filterwarnings = error`` that warning fails the test. pytest 9.2: 3 passed and 2
    warnings without the filter, 1 passed and 1 failed with it."""
    write_files(
        tmp_path,
        {
            "plain/pytest.ini": "[pytest]\n",
            "plain/test_returns.py": """
                import doctest

                class TestReturns:
                    def test_method_returns(self):
                        return 0

                def test_suite():
                    return doctest.DocTestSuite()

                def test_returns_none():
                    return None
            """,
            "strict/pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
            "strict/test_returns_strict.py": """
                def test_returns_true():
                    return True

                def test_plain():
                    pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path / "plain")
    assert "2 warnings" in pytest_run.stdout, pytest_run.output
    assert " 2 warnings" in rt_run.stderr, rt_run.output
    strict_pytest, strict_rt = same_counts_as_pytest(tmp_path / "strict")
    assert "Test functions should return None" in strict_rt.output, strict_rt.output


def test_a_fixture_over_a_classmethod_gets_its_arguments(tmp_path: Path) -> None:
    """flask-caching 2.5.1: ``@pytest.fixture(scope="class", autouse=True)`` over ``@classmethod def
    requirements(cls, redis_server)`` in a test class. pytest reads the class method's function for the names
    it asks for and calls it bound to the class; rt asked ``inspect.signature`` of the ``classmethod``
    object, which Python 3.11 refuses, so the fixture asked for nothing and was called without
    ``redis_server``: a set-up error for each test of the class (73 in flask-caching). pytest 9.2: 3
    passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_classmethod_fixture.py": """
                import pytest

                @pytest.fixture(scope="class")
                def server():
                    return "server"

                class TestWithServer:
                    @pytest.fixture(scope="class", autouse=True)
                    @classmethod
                    def requirements(cls, server):
                        cls.seen = server

                    @pytest.fixture
                    @classmethod
                    def named(cls, server, request):
                        return (cls.__name__, server, request.fixturename)

                    def test_autouse(self):
                        assert self.seen == "server"

                    def test_named(self, named):
                        assert named == ("TestWithServer", "server", "named")

                def test_outside():
                    pass
            """,
        },
    )
    same_counts_as_pytest(tmp_path)


#: a lazy proxy as Django's ``settings`` is one: every attribute, ``__class__`` too, fails until it is configured
LAZY_SETTINGS = """
    class NotConfigured(Exception):
        pass

    class LazySettings:
        @property
        def __class__(self):
            raise NotConfigured("settings are not configured")

        def __getattr__(self, name):
            raise NotConfigured("settings are not configured")

    settings = LazySettings()
"""


def test_a_module_level_proxy_that_fails_to_read_its_class_is_no_test(tmp_path: Path) -> None:
    """daphne 4.2.3: tests/test_checks.py imports Django's ``settings``, a lazy proxy whose every attribute,
    ``__class__`` too, raises ``ImproperlyConfigured`` until the test calls ``settings.configure()``.
    ``isinstance`` reads ``__class__`` when the type does not match, and rt's collection asked
    ``isinstance(settings, type)``: the module was a collection error ("Requested settings, but settings
    are not configured"). pytest's name filters and ``safe_isclass`` leave such an object alone, but not
    under a test function's name: that module is a collection error under pytest too. pytest 9.2: 3 passed;
    1 error."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "lazy.py": LAZY_SETTINGS,
            "test_proxy.py": """
                import unittest

                from lazy import settings

                def test_function():
                    pass

                class TestCaseClass(unittest.TestCase):
                    def test_method(self):
                        pass

                class TestPlain:
                    config = settings

                    def test_in_class(self):
                        pass
            """,
            "named/pytest.ini": "[pytest]\n",
            "named/lazy.py": LAZY_SETTINGS,
            "named/test_named_proxy.py": """
                from lazy import settings

                test_settings = settings

                def test_function():
                    pass
            """,
        },
    )
    same_counts_as_pytest(tmp_path, "test_proxy.py")
    pytest_run, rt_run = same_counts_as_pytest(tmp_path / "named")
    assert "settings are not configured" in rt_run.output, rt_run.output


def test_a_teardown_error_of_a_test_marked_xfail_is_an_expected_failure(tmp_path: Path) -> None:
    """paho-mqtt 2.2.0: its ``test_03_publish_fill_inflight`` is marked ``xfail`` and its ``start_client``
    fixture's finalizer raises when the client process exited with another code. pytest's skipping plugin
    makes an exception of any phase of a test marked xfail an expected failure (``XFAIL at teardown of``),
    unless ``raises`` names another type, so pytest counted 2 xfailed and 32 errors where rt counted 1 xfail
    and 33 errors. pytest 9.2: 1 passed, 1 failed, 6 xfailed, 1 xpassed, 2 errors."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_xfail_teardown.py": """
                import pytest

                @pytest.fixture
                def broken_setup():
                    raise RuntimeError("setup fails")

                @pytest.fixture
                def broken_teardown():
                    yield
                    raise RuntimeError("teardown fails")

                @pytest.mark.xfail(reason="known")
                def test_setup_error(broken_setup):
                    pass

                @pytest.mark.xfail(reason="known")
                def test_fails_then_teardown_error(broken_teardown):
                    assert False

                @pytest.mark.xfail(reason="known")
                def test_passes_then_teardown_error(broken_teardown):
                    pass

                @pytest.mark.xfail(reason="known", raises=ValueError)
                def test_teardown_error_of_another_type(broken_teardown):
                    raise ValueError("expected")

                @pytest.mark.xfail(reason="known", strict=True)
                def test_strict_teardown(broken_teardown):
                    pass

                def test_plain_teardown(broken_teardown):
                    pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "teardown fails" in rt_run.output, rt_run.output


def test_lazy_fixtures_in_a_fixtures_params(tmp_path: Path) -> None:
    """apscheduler 4.0.0a6: its ``datastore`` fixture has ``params=[pytest.param(lf("memory_store"),
    id="memory"), ...]``, and pytest-lazy-fixtures' ``pytest_fixture_setup`` replaces such a ``request.param``
    by the named fixture's value, as pytest calls that hook for every fixture it sets up. rt called it for
    directly parametrized names only: the fixture got the ``LazyFixtureWrapper`` itself. pytest 9.2: 4
    passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_lazy_params.py": """
                import pytest
                from pytest_lazy_fixtures import lf

                @pytest.fixture
                def memory_store():
                    yield {"kind": "memory"}

                @pytest.fixture
                def file_store(tmp_path):
                    return {"kind": "file", "path": tmp_path}

                @pytest.fixture(params=[pytest.param(lf("memory_store"), id="memory"), lf("file_store")])
                def datastore(request):
                    return request.param

                def test_store(datastore):
                    assert datastore["kind"] in ("memory", "file")

                @pytest.mark.parametrize("value", [lf("memory_store")])
                def test_direct(value, datastore):
                    assert value == {"kind": "memory"}
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "test_store[memory]" in rt_run.output, rt_run.output


def test_an_installed_plugins_pyfunc_call_does_not_get_an_async_test_another_plugin_runs(
    tmp_path: Path,
) -> None:
    """pyee 13.0.1 with pytest-asyncio and pytest-twisted: pytest-twisted's ``pytest_pyfunc_call`` calls
    each test itself, in its reactor. Under pytest the async plugin that runs a coroutine test answers first
    (or puts a sync function in its place); rt runs such a test on that plugin's loop itself, and since
    installed plugins' ``pytest_pyfunc_call`` hooks are called it handed them the coroutine function: 11 of
    pyee's asyncio tests failed ("no running event loop"). A stand-in plugin that refuses a coroutine
    function shows it. pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "callsitself-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: callsitself\nVersion: 1.0\n",
            "callsitself-1.0.dist-info/entry_points.txt": "[pytest11]\ncallsitself = callsitself\n",
            "callsitself.py": """
                import inspect

                def pytest_pyfunc_call(pyfuncitem):
                    if inspect.iscoroutinefunction(pyfuncitem.obj):
                        raise RuntimeError("handed a coroutine function")
                    names = pyfuncitem._fixtureinfo.argnames
                    pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names})
                    return True
            """,
            "pytest.ini": "[pytest]\n",
            "test_anyio_and_sync.py": """
                import anyio
                import pytest

                @pytest.fixture
                def anyio_backend():
                    return "asyncio"

                @pytest.mark.anyio
                async def test_on_anyio():
                    await anyio.sleep(0)

                def test_sync():
                    pass
            """,
        },
    )
    same_counts_as_pytest(tmp_path)


def test_a_lazy_fixture_brings_the_params_of_the_fixtures_it_needs(tmp_path: Path) -> None:
    """apscheduler 4.0.0a6: its ``raw_event_broker`` fixture has ``params=[pytest.param(lf("local_broker"),
    id="local"), pytest.param(lf("redis_broker"), id="redis", marks=[pytest.mark.external_service]), ...]``,
    and ``redis_broker`` requests the parametrized ``serializer``. pytest-lazy-fixtures' generate-tests
    wrapper reworks pytest's call specs (``metafunc._calls``) once made: a lazy value's fixtures are
    parametrized there too, through the fixture manager's ``pytest_generate_tests`` (``test[redis-cbor]``,
    ``test[redis-json]`` ...). rt kept its call specs to itself: one ``test[redis]``, whose ``serializer``
    had no param (an error), and under ``-m "not external_service"`` pytest deselected 480 where rt
    filtered out 424. pytest 9.2: 3 passed; 1 passed, 2 deselected."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers =\n    external_service: needs a server\n",
            "conftest.py": """
                import pytest
                from pytest_lazy_fixtures import lf

                @pytest.fixture(params=[pytest.param("pickle", id="pickle"), pytest.param("json", id="json")])
                def serializer(request):
                    return request.param

                @pytest.fixture
                def local_broker():
                    return "local"

                @pytest.fixture
                def redis_broker(serializer):
                    return f"redis-{serializer}"

                @pytest.fixture(
                    params=[
                        pytest.param(lf("local_broker"), id="local"),
                        pytest.param(lf("redis_broker"), id="redis", marks=[pytest.mark.external_service]),
                    ]
                )
                def broker(request):
                    return request.param
            """,
            "test_brokers.py": """
                def test_broker(broker, request):
                    assert broker == request.node.callspec.id  # local, redis-pickle, redis-json
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "test_broker[redis-json]" in rt_run.output, rt_run.output
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-m", "not external_service")
    assert "2 deselected" in pytest_run.stdout, pytest_run.output
    assert " 2 filtered out" in rt_run.stderr, rt_run.output
