"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 15, sweep R: security, crypto and auth, HTTP mocking, logging, retry, caching and concurrency
libraries): each test names the suite that showed it, runs pytest itself on the same small project and
compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files


def test_getoption_takes_any_of_an_options_strings(tmp_path: Path) -> None:
    """requests-cache 1.3.3 with pytest-clarity 1.0.1 installed: its ``pytest_assertrepr_compare`` reads
    ``config.getoption("-v")``, which pytest maps to the option's ``dest`` (``verbose``). rt took the name
    apart by its dashes, found no option ``v`` and raised ValueError inside the hook: the failing assert's
    message was rt's PluginHookError instead of the plugin's diff. pytest's rules, all checked here: any
    string of an option (pytest's short and long ones, a plugin's with its own ``dest``) is that option; a
    registered option whose value is None gives None even with a default; ``skip=True`` skips the test when
    the option is missing or None; a name no option has is a ValueError. pytest 9.2: 4 passed, 2 skipped."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            def pytest_addoption(parser):
                parser.addoption("--diff-width", "-W9", dest="width", type=int, default=80)
                parser.addoption("--maybe", default=None)
            """,
            "test_options.py": """
            import pytest


            def test_pytest_option_strings(pytestconfig):
                assert pytestconfig.getoption("-v") == pytestconfig.option.verbose
                assert pytestconfig.getoption("--tb") == "auto"
                assert pytestconfig.getoption("-p") == pytestconfig.option.plugins
                assert pytestconfig.getoption("-m") == ""
                assert pytestconfig.getoption("--import-mode") == "prepend"


            def test_a_plugins_option_by_each_string(pytestconfig):
                assert pytestconfig.getoption("--diff-width") == 80
                assert pytestconfig.getoption("-W9") == 80
                assert pytestconfig.getoption("width") == 80


            def test_none_is_a_registered_options_value(pytestconfig):
                assert pytestconfig.getoption("--maybe", "fallback") is None
                assert pytestconfig.getoption("--nobody-has-this", "fallback") == "fallback"


            def test_an_unknown_name_is_a_value_error(pytestconfig):
                with pytest.raises(ValueError, match="no option named 'nobody'"):
                    pytestconfig.getoption("nobody")


            def test_skip_when_missing(pytestconfig):
                pytestconfig.getoption("nobody", skip=True)
                raise AssertionError("not skipped")


            def test_skip_when_none(pytestconfig):
                pytestconfig.getoption("--maybe", skip=True)
                raise AssertionError("not skipped")
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "4 passed, 2 skipped" in pytest_run.stdout, pytest_run.output


def test_a_hook_makes_a_report_from_the_item_and_its_call(tmp_path: Path) -> None:
    """pyrate-limiter 4.5.1 with pytest-retry 1.7.0 (``retries = 2`` in its configuration): the plugin's
    ``pytest_runtest_makereport`` wrapper runs a failed test again and makes the retry's report with
    ``pytest.TestReport.from_item_and_call(item, call)``, which in pytest 9.2 reads ``item.id``, the test's
    structured node id. rt's test node had none: the hook raised, and the retried test failed with rt's
    PluginHookError. Here a conftest.py makes such a report for every phase, parametrized tests and a
    class's among them, and a last test checks their node ids. pytest 9.2: 5 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest

            MADE = []


            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_makereport(item, call):
                yield
                report = pytest.TestReport.from_item_and_call(item, call)
                MADE.append((str(item.id), report.nodeid, report.when))
            """,
            "test_made.py": """
            import pytest

            from conftest import MADE


            @pytest.mark.parametrize("value", [1, "a::b"])
            def test_value(value):
                pass


            class TestIt:
                def test_method(self):
                    pass


            def test_plain():
                pass


            def test_zz_reports():
                assert all(structured == nodeid for structured, nodeid, _ in MADE), MADE
                assert {nodeid for _, nodeid, _ in MADE} == {
                    "test_made.py::test_value[1]",
                    "test_made.py::test_value[a::b]",
                    "test_made.py::TestIt::test_method",
                    "test_made.py::test_plain",
                    "test_made.py::test_zz_reports",
                }
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "5 passed" in pytest_run.stdout, pytest_run.output
