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
