"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 13, sweep O: web, command-line and infrastructure projects and their conftest.py machinery): each
test names the suite that showed it, runs pytest itself on the same small project and compares the outcome
counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import run_cli, run_pytest, same_counts_as_pytest, summary_counts, write_files


def test_items_pass_for_pytests_node_classes_in_isinstance(tmp_path: Path) -> None:
    """build 1.6.1: its conftest.py's ``pytest_runtest_call`` wraps the call of ``contextvars``-marked tests
    when ``isinstance(item, pytest.Function)``, else raises "cannot rewrap non-function item"; rt's items
    were not pytest's ``Function``, and 132 of its tests failed where pytest's passed. A test function is a
    ``Function`` (its parent a ``Class`` or a ``Module``), a unittest method a ``TestCaseFunction``, a
    doctest a ``DoctestItem``; pytest calls ``pytest_runtest_call`` for a unittest method too, which rt did
    not. pytest 9.2: 2 passed, 1 skipped, 1 xfailed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
            "conftest.py": """
                import pytest
                from _pytest.doctest import DoctestItem
                from _pytest.unittest import TestCaseFunction

                def pytest_runtest_call(item):
                    if isinstance(item, DoctestItem):
                        pytest.skip("a doctest")
                    elif isinstance(item, TestCaseFunction):
                        assert isinstance(item.parent, pytest.Class)
                        pytest.xfail("a unittest test")
                    elif isinstance(item, pytest.Function):
                        assert isinstance(item.parent, pytest.Class if item.cls else pytest.Module)
                        assert isinstance(item.parent.parent if item.cls else item.parent, pytest.Module)
                        assert not isinstance(item, pytest.Collector)
                    else:
                        raise RuntimeError(f"not a function: {item!r}")
            """,
            "test_kinds.py": """
                import unittest

                def double(x):
                    '''
                    >>> double(2)
                    4
                    '''
                    return 2 * x

                def test_function(request):
                    assert request.node.__class__.__name__ == "Function"

                class TestClass:
                    def test_method(self):
                        pass

                class Case(unittest.TestCase):
                    def test_case(self):
                        pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "2 passed, 1 skipped, 1 xfailed" in pytest_run.output, pytest_run.output


def test_an_initial_conftest_that_fails_to_import_stops_the_run_at_start_up(tmp_path: Path) -> None:
    """copier 9.19.1 without coverage installed: its tests/conftest.py imports ``coverage.tracer``, and
    pytest, which loads the conftest.py files of the paths it starts from (and of a folder's ``test*``
    subfolders) before collecting, stops with "ImportError while loading conftest", status 4, no test run
    and no counts; rt counted one collection error (status 2). A conftest.py pytest meets only while
    collecting (``other/``, not a ``test*`` folder) stays one collection error of its folder."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "tests/conftest.py": "import a_module_not_installed\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "other/conftest.py": "raise ValueError('broken')\n",
            "other/test_b.py": "def test_b():\n    pass\n",
            "test_c.py": "def test_c():\n    pass\n",
        },
    )
    for args in ((), ("tests",), ("tests/test_a.py",), ("other",)):
        pytest_run = run_pytest(*args, cwd=tmp_path)
        rt_run = run_cli("test", *args, cwd=tmp_path)
        assert pytest_run.code == rt_run.code == 4, (args, pytest_run.output, rt_run.output)
        for run in (pytest_run, rt_run):
            assert "ImportError while loading conftest" in run.output, (args, run.output)
        assert "passed" not in pytest_run.output, (args, pytest_run.output)
        assert not any(summary_counts(rt_run.stderr).values()), (args, rt_run.output)  # no test ran
    (tmp_path / "tests" / "conftest.py").unlink()
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)  # other/conftest.py: met while collecting
    assert "ValueError: broken" in rt_run.output, rt_run.output
    assert "1 error" in pytest_run.stdout, pytest_run.output


def test_a_marks_keyword_is_the_mark_itself(tmp_path: Path) -> None:
    """copier 9.19.1 with inline-snapshot: its autouse ``snapshot_check`` fixture reads
    ``request.keywords["xfail"].args`` to tell an xfail mark whose condition is false, and rt's keywords
    answered True for every mark name ("'bool' object has no attribute 'args'": 2 set-up errors). A mark's
    keyword is the mark (its ``args`` and ``kwargs``), a test function's attribute its value, the test's
    name True. pytest 9.2: 1 passed, 1 skipped, 1 xfailed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers = custom\n",
            "test_keywords.py": """
                import pytest

                @pytest.fixture(autouse=True)
                def condition_of_xfail(request):
                    if "xfail" in request.keywords:
                        mark = request.keywords["xfail"]
                        if mark.args and mark.args[0] == False:
                            pytest.skip(mark.kwargs["reason"])

                @pytest.mark.xfail(False, reason="not on this system")
                def test_condition_false():
                    pass

                @pytest.mark.xfail(reason="always")
                def test_expected_to_fail():
                    assert 0

                @pytest.mark.custom(1, 2)
                def test_custom(request):
                    assert request.keywords["custom"].args == (1, 2)
                    assert request.keywords["test_custom"] is True
                    assert request.node.keywords["pytestmark"][0].name == "custom"
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "1 passed, 1 skipped, 1 xfailed" in pytest_run.output, pytest_run.output


def test_a_failed_wide_fixture_is_raised_again_with_its_own_traceback(tmp_path: Path) -> None:
    """flask at its GitHub head (3.2.0.dev): its autouse session fixture fails under pytest 9 (``notset``
    is gone from ``_pytest.monkeypatch``), and each of its 434 tests re-raised the one cached error; rt
    raised the same exception object again, whose traceback grew by a test's frames each time, so
    rendering the errors walked a million frames: 22 s under rt, 2.4 s under pytest, which re-raises it
    with the traceback it had when the fixture failed. The depth of that traceback, seen through
    ``request.getfixturevalue``, stays the same from the second test on. pytest 9.2: 6 passed, 3 errors."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_depth.py": """
                import traceback

                import pytest

                depths = []

                @pytest.fixture(scope="session")
                def broken():
                    raise ValueError("broken")

                @pytest.mark.parametrize("n", range(5))
                def test_ask(request, n):
                    try:
                        request.getfixturevalue("broken")
                    except ValueError as exc:
                        depths.append(len(traceback.extract_tb(exc.__traceback__)))

                @pytest.mark.parametrize("n", range(3))
                def test_uses(broken, n):
                    pass

                def test_same_depth():
                    assert len(depths) == 5 and len(set(depths[1:])) == 1, depths
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "6 passed, 3 errors" in pytest_run.output, pytest_run.output
