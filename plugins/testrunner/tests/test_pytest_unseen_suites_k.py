"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 11, sweep K: data, text, numbers, ORMs and developer tools): each test names the suite that showed
it, runs pytest itself on the same small project and compares the outcome counts and messages, so a
difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files


def test_a_failing_hypothesis_test_reports_its_own_error(tmp_path: Path) -> None:
    """textdistance 4.6.3: its ``@given`` tests of libraries not installed raise ``RuntimeError('cannot import
    ...')``. Hypothesis's pytest plugin, which a project's configuration makes rt run, gives Hypothesis the
    running item, and Hypothesis formats the traceback of the failing example with ``item.repr_failure``;
    rt's item had none, so each such test failed with ``AttributeError: 'Node' object has no attribute
    'repr_failure'`` instead of its own error. pytest 9.2: 1 passed, 2 failed."""
    write_files(
        tmp_path,
        {
            "setup.cfg": """
            [tool:pytest]
            addopts = --strict-markers
            markers =
                external: tests that require external libs to run
            """,
            "test_given.py": """
            import pytest
            from hypothesis import given, settings, strategies as st


            @pytest.mark.external
            @pytest.mark.parametrize("alg", ["Hamming", "Jaro"])
            @settings(database=None, deadline=None)
            @given(left=st.text(min_size=1), right=st.text(min_size=1))
            def test_compare(left, right, alg):
                raise RuntimeError(f"cannot import {alg}")


            @given(st.integers())
            def test_passes(number):
                assert number == number
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "RuntimeError: cannot import Jaro" in pytest_run.output
    assert "RuntimeError: cannot import Hamming" in rt_run.output, rt_run.output
    assert "RuntimeError: cannot import Jaro" in rt_run.output, rt_run.output
    assert "repr_failure" not in rt_run.output, rt_run.output


_UNKNOWN_MARKS = """
import pytest


@pytest.mark.parametrize("num", (10, 100))
@pytest.mark.speed
def test_speed(num):
    assert num


@pytest.mark.slow
@pytest.mark.tryfirst
def test_registered():
    pass


@pytest.mark.unregistered
class TestMarked:
    def test_method(self):
        pass
"""


def test_an_unknown_mark_is_a_warning_of_the_collection(tmp_path: Path) -> None:
    """uncertainties 3.2.3: ``@pytest.mark.benchmark`` (pytest-codspeed's mark, not installed; here `speed`) is pytest's
    ``PytestUnknownMarkWarning`` when the module is imported (pytest 255 warnings, rt 254): pytest's
    ``pytest.mark`` checks every mark it makes against the registered ones, and rt gave it the configuration
    to check against only under ``--strict-markers``. pytest 9.2: 4 passed, 2 warnings; and with
    ``filterwarnings = error`` the module's collection error."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers =\n    slow: a registered mark\n",
            "test_marks.py": _UNKNOWN_MARKS,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "4 passed, 2 warnings" in pytest_run.output
    assert " 2 warnings" in rt_run.stderr, rt_run.output
    write_files(
        tmp_path,
        {"pytest.ini": "[pytest]\nmarkers =\n    slow: a registered mark\nfilterwarnings =\n    error\n"},
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "Unknown pytest.mark.speed" in pytest_run.output
    assert "Unknown pytest.mark.speed" in rt_run.output, rt_run.output


_CLASS_FIXTURES = """
import pytest


class DescribeReader:
    def it_reads(self, dir_reader):
        assert dir_reader == "reader"

    def it_reads_again(self, dir_reader):
        assert dir_reader == "reader"

    @pytest.fixture(scope="class")
    def dir_reader(self):
        return "reader"


class DescribeCls:
    def it_reads(self, cls_reader):
        assert cls_reader == "cls"

    @pytest.fixture(scope="class")
    @classmethod
    def cls_reader(cls):
        return "cls"

    @pytest.fixture
    def function_reader(self):
        return "function"

    def it_reads_too(self, function_reader):
        assert function_reader == "function"
"""


def test_a_class_scoped_fixture_written_as_an_instance_method_warns(tmp_path: Path) -> None:
    """python-docx 1.2.0: a ``scope="class"`` fixture defined as an instance method is pytest 9.2's
    ``PytestRemovedIn10Warning`` ("Class-scoped fixtures defined as instance methods are deprecated") each time
    it is set up, and its ``filterwarnings = error`` makes the tests asking for it set-up errors (pytest 1600
    passed, 9 errors; rt 1609 passed). A class method or a function-scoped fixture does not warn. pytest 9.2:
    4 passed, 1 warning; with ``filterwarnings = error``: 2 passed, 2 errors."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\npython_classes = Describe\npython_functions = it_\n",
            "test_reader.py": _CLASS_FIXTURES,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "4 passed, 1 warning" in pytest_run.output
    assert " 1 warning" in rt_run.stderr, rt_run.output
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\npython_classes = Describe\npython_functions = it_\nfilterwarnings = error\n"
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "Class-scoped fixtures defined as instance methods are deprecated" in pytest_run.output
    assert "Class-scoped fixtures defined as instance methods are deprecated" in rt_run.output, rt_run.output
