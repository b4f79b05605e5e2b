"""``rt test`` against pytest 9 on small projects, one corner of issue 15's "Must show" list each: the same
project is run by both, and the outcome counts (and where it matters the exit status, the JUnit report or the
failure text) must agree.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from rt.testing import (
    CliResult,
    counts_from_pytest,
    run_cli,
    run_pytest,
    same_counts_as_pytest,
    summary_counts,
    write_files,
)


def rt_test(cwd: Path, *args: str) -> CliResult:
    return run_cli("test", *args, cwd=cwd)


def test_capfd_reads_print_and_descriptor_writes_in_the_order_they_happened(tmp_path: Path) -> None:
    """pytest's capfd points sys.stdout at the redirected descriptor: ``print`` and ``os.write(1, ...)``
    (and a subprocess) come back from ``readouterr()`` as one text, in order; ``disabled()`` shows both."""
    write_files(
        tmp_path,
        {
            "test_fd.py": """
            import logging, os, subprocess, sys

            def test_order(capfd):
                print("a"); os.write(1, b"b\\n"); print("c", file=sys.stderr); os.write(2, b"d\\n"); print("e")
                out, err = capfd.readouterr()
                assert out == "a\\nb\\ne\\n"
                assert err == "c\\nd\\n"
                subprocess.run([sys.executable, "-c", "print('sub')"], check=True)
                assert capfd.readouterr().out == "sub\\n"

            def test_binary(capfdbinary):
                print("x"); os.write(1, b"\\xff\\n")
                assert capfdbinary.readouterr().out == b"x\\n\\xff\\n"

            def test_disabled(capfd):
                with capfd.disabled():
                    print("shown on the terminal")
                print("hidden")
                assert capfd.readouterr().out == "hidden\\n"

            def test_logging_is_not_the_streams(capfd, caplog):
                logging.getLogger("q").warning("lw")
                assert capfd.readouterr() == ("", "")
                assert caplog.messages == ["lw"]
            """
        },
    )
    _, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 4}
    no_capture = rt_test(tmp_path, "-s")
    assert summary_counts(no_capture.stderr) == {"pass": 4}, no_capture.output
    assert "shown on the terminal" in no_capture.stdout


def test_warning_filters_and_ini_overrides_on_the_command_line(tmp_path: Path) -> None:
    """``-W`` adds a filter after the configuration's ``filterwarnings`` (so it wins over them, and a
    ``filterwarnings`` mark wins over it), and ``-o name=value`` overrides a configuration value, as pytest's."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [tool.pytest.ini_options]
            filterwarnings = ["error::DeprecationWarning"]
            """,
            "test_w.py": """
            import warnings, pytest

            def test_deprecated():
                warnings.warn("old", DeprecationWarning)

            def test_user():
                warnings.warn("mine", UserWarning)

            @pytest.mark.filterwarnings("ignore:mine")
            def test_user_ignored_by_mark():
                warnings.warn("mine", UserWarning)

            @pytest.mark.xfail
            def test_passes():
                pass
            """,
        },
    )
    same_counts_as_pytest(tmp_path)
    _, rt_run = same_counts_as_pytest(
        tmp_path, "-W", "ignore::DeprecationWarning", "-W", "error::UserWarning"
    )
    assert summary_counts(rt_run.stderr) == {"pass": 2, "fail": 1, "xpass": 1}
    _, rt_run = same_counts_as_pytest(
        tmp_path, "-o", "xfail_strict=true", "--pythonwarnings=ignore::DeprecationWarning"
    )
    assert summary_counts(rt_run.stderr) == {"pass": 3, "fail": 1}


def test_comparisons_inside_and_or_are_explained_as_pytest_explains_them(tmp_path: Path) -> None:
    """pytest explains each failed comparison of an ``and``/``or`` (the operands' values and the diff), not
    only that the operand was False; operands are evaluated once and released after the assert."""
    write_files(
        tmp_path,
        {
            "test_bool.py": """
            import gc, weakref

            class C:
                pass

            def test_and():
                out, err = "a", "b"
                assert err == "b" and out == "a\\nb"

            def test_or():
                items = [1, 2, 3]
                assert items == [1, 2, 4] or len(items) > 5

            def test_evaluated_once_and_released():
                calls = []
                def f():
                    calls.append(1)
                    return C()
                c = f()
                ref = weakref.ref(c)
                assert ref() is c and len(calls) == 1
                del c
                gc.collect()
                assert ref() is None
            """
        },
    )
    _, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 1, "fail": 2}
    and_failure = rt_run.stderr.split("(fail) test_and")[0]
    assert "assert ('b' == 'b'" in and_failure  # pytest's wording: values in place, each comparison explained
    assert "'a' == 'a\\nb'\n  \n  + a\n  - a\n  - b)" in and_failure
    or_failure = rt_run.stderr.split("(fail) test_or")[0].split("(fail) test_and")[1]
    assert "At index 2 diff: 3 != 4" in or_failure
    assert "assert ([1, 2, 3] == [1, 2, 4]" in or_failure


def test_approx_and_bytes_comparisons_are_explained_as_pytest_explains_them(tmp_path: Path) -> None:
    """``x == pytest.approx(y)`` shows approx's own explanation (mismatched elements, the differences); a
    byte string's first difference is shown as bytes."""
    write_files(
        tmp_path,
        {
            "test_approx.py": """
            import pytest

            def test_scalar():
                assert 0.1 + 0.2 == pytest.approx(0.35)

            def test_list():
                assert [1.0, 2.0, 3.0] == pytest.approx([1.0, 2.5, 3.0])

            def test_bytes():
                assert b"abc" == b"abd"
            """
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    for line in (
        "comparison failed. Mismatched elements: 1 / 3:",
        "Max absolute difference: 0.5",
        "Expected: 0.35 ± 3.5e-07",
        "At index 2 diff: b'c' != b'd'",
    ):
        assert line in pytest_run.stdout
        assert line in rt_run.stderr, rt_run.stderr


def _junit_cases(path: Path) -> tuple[dict[str, str | None], Counter[tuple[str | None, str]]]:
    """A JUnit report's totals (of its first ``<testsuite>`` for pytest's, of ``<testsuites>`` for rt's)
    and each ``<testcase>`` as (name, what it holds)."""
    root = ET.parse(path).getroot()
    totals = root if root.get("tests") is not None else root[0]
    cases: Counter[tuple[str | None, str]] = Counter()
    for case in root.iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        cases[case.get("name"), ",".join(kinds) or "pass"] += 1
    return {k: totals.get(k) for k in ("tests", "failures", "errors", "skipped")}, cases


def test_junit_report_has_pytest_junitxml_outcomes_and_totals(tmp_path: Path) -> None:
    """Each test's outcome is the element pytest's junitxml writes, and the totals are its: a failed
    teardown is the test's ``<error>`` in place of its pass, or a second ``<testcase>`` next to its failure."""
    write_files(
        tmp_path,
        {
            "test_outcomes.py": """
            import pytest

            @pytest.fixture
            def broken_teardown():
                yield
                raise RuntimeError("teardown")

            @pytest.fixture
            def broken_setup():
                raise RuntimeError("setup")

            def test_pass(): pass
            def test_fail(): assert 0
            def test_pass_then_teardown_error(broken_teardown): pass
            def test_fail_then_teardown_error(broken_teardown): assert 0
            def test_setup_error(broken_setup): pass
            def test_skip(): pytest.skip("no")
            @pytest.mark.xfail
            def test_xfail(): assert 0
            @pytest.mark.xfail
            def test_xpass(): pass
            @pytest.mark.xfail(strict=True)
            def test_strict_xpass(): pass

            class TestTeardown:
                def teardown_method(self, method):
                    raise ValueError("teardown_method")
                def test_in_class(self): pass
            """
        },
    )
    pytest_run = run_pytest("--junitxml=pytest.xml", cwd=tmp_path)
    rt_run = rt_test(tmp_path, "--reporter=junit", "--reporter-outfile=rt.xml")
    counts = {"pass": 3, "fail": 3, "skip": 1, "xfail": 1, "xpass": 1, "error": 4}
    assert counts_from_pytest(pytest_run.stdout) == counts, pytest_run.stdout
    assert summary_counts(rt_run.stderr) == counts, rt_run.output
    expected_totals, expected_cases = _junit_cases(tmp_path / "pytest.xml")
    totals, cases = _junit_cases(tmp_path / "rt.xml")
    assert cases == expected_cases
    assert totals == expected_totals


def test_imperative_outcomes_outside_tests_count_as_pytest_counts_them(tmp_path: Path) -> None:
    """pytest.skip() at import needs allow_module_level=True (else pytest's collection error, with its
    words), unittest.SkipTest and importorskip skip the module, pytest.fail/xfail at import are errors; in
    setup_module, setup_class and fixtures of wider scopes they apply to every test they set up."""
    write_files(
        tmp_path,
        {
            "test_skip_not_allowed.py": """
            import pytest
            pytest.skip("no allow_module_level")
            def test_x(): pass
            """,
            "test_skip_allowed.py": """
            import pytest
            pytest.skip("allowed", allow_module_level=True)
            def test_x(): pass
            """,
            "test_unittest_skip.py": """
            import unittest
            raise unittest.SkipTest("unittest's")
            """,
            "test_importorskip.py": """
            import pytest
            pytest.importorskip("no_such_module_anywhere")
            """,
            "test_fail_at_import.py": """
            import pytest
            pytest.fail("at import")
            """,
            "test_setups.py": """
            import sys, pytest

            def setup_module(module):
                pass

            class TestSetupClassError:
                @classmethod
                def setup_class(cls):
                    raise ValueError("setup_class")
                def test_1(self): pass
                def test_2(self): pass

            class TestSetupClassXfail:
                @classmethod
                def setup_class(cls):
                    pytest.xfail("not yet")
                def test_1(self): pass

            @pytest.fixture(scope="module")
            def exits():
                sys.exit(4)

            def test_exit_1(exits): pass
            def test_exit_2(exits): pass

            @pytest.fixture(scope="class")
            def skips():
                pytest.skip("class fixture")

            @pytest.mark.usefixtures("skips")
            class TestSkippedByFixture:
                def test_1(self): pass
                def test_2(self): pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "--continue-on-collection-errors")
    assert summary_counts(rt_run.stderr) == {"skip": 5, "xfail": 1, "error": 6}
    assert "allow_module_level=True" in rt_run.stderr
    pytest_run = run_pytest(cwd=tmp_path)
    rt_run = rt_test(tmp_path)
    assert summary_counts(rt_run.stderr) == counts_from_pytest(pytest_run.stdout) == {"skip": 3, "error": 2}


def test_output_and_caplog_records_are_per_phase_as_pytest_keeps_them(tmp_path: Path) -> None:
    """A failure shows what each phase wrote under its own title (``Captured stdout setup``, ``... call``,
    ``... teardown``); ``caplog.records`` are the running phase's (a fixture's set-up records are not the
    test's, whatever the order of the arguments) and ``caplog.get_records(when)`` any phase's."""
    write_files(
        tmp_path,
        {
            "test_phases.py": """
            import logging, sys, pytest

            log = logging.getLogger("phases")

            @pytest.fixture
            def noisy():
                print("setup out"); print("setup err", file=sys.stderr); log.warning("setup log")
                yield
                print("teardown out"); log.warning("teardown log")

            def test_fails(noisy):
                print("call out"); log.warning("call log")
                assert 0

            def test_records_fixture_first(noisy, caplog):
                log.warning("in call")
                assert [r.getMessage() for r in caplog.get_records("setup")] == ["setup log"]
                assert caplog.messages == ["in call"]

            def test_records_caplog_first(caplog, noisy):
                log.warning("in call")
                assert caplog.messages == ["in call"]
                assert caplog.record_tuples == [("phases", logging.WARNING, "in call")]
                assert caplog.get_records("setup")[0].getMessage() == "setup log"

            @pytest.fixture
            def reads_call_records(caplog):
                yield
                assert [r.getMessage() for r in caplog.get_records("call")] == ["call record"]
                assert caplog.records == []

            def test_teardown_reads_the_call_records(reads_call_records):
                logging.getLogger("t").warning("call record")

            def test_level_put_back(caplog):
                caplog.set_level(logging.CRITICAL, logger="phases")

            def test_after():
                assert logging.getLogger("phases").level == logging.NOTSET
            """
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 5, "fail": 1}
    sections = (
        "----- Captured stdout setup -----\nsetup out\n"
        "----- Captured stderr setup -----\nsetup err\n"
        "----- Captured log setup -----\nWARNING  phases:test_phases.py:N setup log\n"
        "----- Captured stdout call -----\ncall out\n"
        "----- Captured log call -----\nWARNING  phases:test_phases.py:N call log\n"
        "----- Captured stdout teardown -----\nteardown out\n"
        "----- Captured log teardown -----\nWARNING  phases:test_phases.py:N teardown log\n"
    )
    assert sections in re.sub(r"test_phases\.py:\d+ ", "test_phases.py:N ", rt_run.stderr), rt_run.stderr
    for title in ("Captured stdout setup", "Captured log call", "Captured log teardown"):
        assert title in pytest_run.stdout


def test_a_package_fixture_is_one_for_the_package_that_defines_it(tmp_path: Path) -> None:
    """pytest 8+ scopes a package fixture to the package whose conftest.py defines it, sub-packages
    included (set up once for ``b/`` and ``b/c/``); one defined outside any package lives for the session."""
    test_file = """
        def test_root(root_package):
            assert root_package == 1

        def test_b(b_package):
            assert b_package == 1
        """
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest
            CALLS = []

            @pytest.fixture(scope="package")
            def root_package():
                CALLS.append("root")
                return CALLS.count("root")
            """,
            "a/__init__.py": "",
            "a/test_a.py": """
            def test_root(root_package):
                assert root_package == 1
            """,
            "b/__init__.py": "",
            "b/conftest.py": """
            import pytest
            from conftest import CALLS

            @pytest.fixture(scope="package")
            def b_package():
                CALLS.append("b")
                return CALLS.count("b")
            """,
            "b/test_b.py": test_file,
            "b/c/__init__.py": "",
            "b/c/test_c.py": test_file,
        },
    )
    _, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 5}


#: two packages whose package fixtures take one resource in turn (as a server on a fixed port would), with a
#: session fixture around them and a package teardown that fails
TAKES_TURNS = {
    "conftest.py": """
        import os
        import pytest

        HELD = []

        def log(text):
            with open(os.environ["ORDER_LOG"], "a") as f:
                f.write(text + "\\n")

        @pytest.fixture(scope="session", autouse=True)
        def whole_run():
            log("session up")
            yield
            log("session down")

        def take(name):
            assert not HELD, f"{name}: held by {HELD}"
            HELD.append(name)
            log(f"{name} up")
            yield
            HELD.remove(name)
            log(f"{name} down")
        """,
    "a/__init__.py": "",
    "a/conftest.py": """
        import pytest
        from conftest import take

        @pytest.fixture(scope="package", autouse=True)
        def port():
            yield from take("a")
        """,
    "a/test_a1.py": "def test_a1():\n    pass\n",
    "a/sub/__init__.py": "",
    "a/sub/test_a2.py": "def test_a2():\n    pass\n",
    "b/__init__.py": "",
    "b/conftest.py": """
        import pytest
        from conftest import take, log

        @pytest.fixture(scope="package", autouse=True)
        def port():
            yield from take("b")
            raise RuntimeError("b's teardown failed")
        """,
    "b/test_b.py": "def test_b1():\n    pass\n\ndef test_b2():\n    pass\n",
    "c/__init__.py": "",
    "c/test_c.py": "def test_c(whole_run):\n    pass\n",
}


def test_a_package_fixture_ends_when_the_run_leaves_its_package(tmp_path: Path) -> None:
    """pytest tears a package's fixtures down at the teardown of the package's last test: the next package's
    fixture can take what the first one held, and a failing package teardown is an error of that last test
    (rt tore them down at the end of the run: ``b`` found the resource still held by ``a``)."""
    write_files(tmp_path, TAKES_TURNS)
    logs = {}
    for runner in ("pytest", "rt"):
        log = tmp_path / f"{runner}.log"
        env = {"ORDER_LOG": str(log)}
        if runner == "pytest":
            result = run_pytest(cwd=tmp_path, env=env)
            assert counts_from_pytest(result.stdout) == {"pass": 5, "error": 1}, result.stdout
            assert "ERROR at teardown of test_b2" in result.stdout
        else:
            rt_run = run_cli("test", cwd=tmp_path, env=env)
            assert summary_counts(rt_run.stderr) == {"pass": 5, "error": 1}, rt_run.stderr
            assert "b's teardown failed" in rt_run.stderr
            assert "(error) test_b2 [teardown]" in rt_run.stderr
        logs[runner] = log.read_text().splitlines()
    assert (
        logs["rt"]
        == logs["pytest"]
        == [
            "session up",
            "a up",
            "a down",
            "b up",
            "b down",
            "session down",
        ]
    )


def test_a_helper_modules_assert_with_a_message_keeps_pytests_text(tmp_path: Path) -> None:
    """pytest rewrites test files and conftest.py files only: an ``assert x, "message"`` of another module of
    the suite (a helper, or the library next to its tests) raises ``AssertionError("message")``, which tests
    compare. rt keeps those plain; a helper's assert without a message still shows the values."""
    write_files(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/helpers.py": """
            def check_positive(n):
                assert n > 0, "n must be positive"

            def check_equal(a, b):
                assert a == b
            """,
            "tests/test_helpers.py": """
            import pytest
            from tests.helpers import check_equal, check_positive

            def test_message_text():
                with pytest.raises(AssertionError) as info:
                    check_positive(0)
                assert str(info.value) == "n must be positive"

            def test_values_shown():
                check_equal([1, 2], [1, 3])
            """,
        },
    )
    _, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 1, "fail": 1}
    assert "At index 1 diff: 2 != 3" in rt_run.stderr
