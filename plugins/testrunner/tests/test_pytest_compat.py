"""``rt test`` on pytest-style suites: discovery, fixtures, marks, unittest, capture, outcomes (issue 15).

Each test writes a small project into a temporary directory and runs ``rt test`` on it as a user would.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rt.testing import CliResult, counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

Result = CliResult
project = write_files


def run_rt_test(cwd: Path, *args: str, timeout: float = 120) -> Result:
    return run_cli("test", *args, cwd=cwd, timeout=timeout)


def counts(result: Result) -> dict[str, int]:
    return summary_counts(result.stderr)


def test_system_exit_and_argparse_errors_are_failed_tests(tmp_path: Path) -> None:
    project(
        tmp_path,
        {
            "test_exit.py": """
        import argparse, sys

        def test_exit_zero():
            sys.exit(0)

        def test_argparse():
            argparse.ArgumentParser().parse_args(["--nope"])

        def test_after():
            pass
    """
        },
    )
    result = run_rt_test(tmp_path)
    assert result.code == 1, result.output
    assert counts(result) == {"pass": 1, "fail": 2}, result.output
    assert "SystemExit" in result.stderr


def test_keyboard_interrupt_stops_the_run_with_a_summary_and_reports(tmp_path: Path) -> None:
    project(
        tmp_path,
        {
            "test_stop.py": """
        def test_first():
            pass

        def test_interrupt():
            raise KeyboardInterrupt

        def test_never_runs():
            pass
    """
        },
    )
    result = run_rt_test(tmp_path, "--reporter=junit", "--reporter-outfile=out.xml")
    assert result.code == 2, result.output  # pytest's status for an interrupted run
    assert counts(result) == {"pass": 1, "fail": 1}, result.output
    assert "Interrupted" in result.stderr
    assert "test_never_runs" not in result.stderr
    suites = ET.parse(tmp_path / "out.xml").getroot()
    assert suites.get("tests") == "2"


def test_an_interrupt_while_collecting_runs_no_test(tmp_path: Path) -> None:
    """pytest collects every file first and stops there when one raises KeyboardInterrupt or calls
    pytest.exit() at import: no test of an earlier file runs either."""
    project(
        tmp_path,
        {
            "test_a.py": """
        def test_a():
            print("RAN_A")
    """,
            "test_b.py": """
        import pytest

        pytest.exit("stop here")
    """,
        },
    )
    result = run_rt_test(tmp_path, "--no-capture")
    assert result.code == 2, result.output
    assert "RAN_A" not in result.output
    assert "Interrupted" in result.stderr, result.output


SUITE = {
    "pyproject.toml": """
        [tool.pytest.ini_options]
        testpaths = ["tests"]
        python_files = ["test_*.py", "check_*.py"]
        markers = ["slow: slow tests"]
        xfail_strict = true
    """,
    "tests/__init__.py": "",
    "tests/conftest.py": """
        import pytest

        @pytest.fixture(scope="session")
        def log():
            return []

        @pytest.fixture
        def value():
            return 1

        @pytest.fixture(params=[10, 20], ids=["ten", "twenty"])
        def number(request):
            return request.param
    """,
    "tests/helpers.py": """
        def check(a, b):
            assert a == b
    """,
    "tests/sub/__init__.py": "",
    "tests/sub/conftest.py": """
        import pytest

        @pytest.fixture
        def value(value):  # overrides the outer one, using it
            return value + 1
    """,
    "tests/sub/check_override.py": """
        from .. import helpers

        def test_override(value):
            assert value == 2

        def test_helper_asserts_are_rewritten():
            helpers.check([1, 2, 3], [1, 2, 4])
    """,
    "tests/test_suite.py": """
        import pickle
        import unittest
        import pytest

        class Point:
            def __init__(self, x):
                self.x = x

        def test_real_module_name():
            assert __name__ == "tests.test_suite"
            assert pickle.loads(pickle.dumps(Point(3))).x == 3

        @pytest.fixture(scope="module")
        def resource(log):
            log.append("up")
            yield "res"
            log.append("down")

        @pytest.fixture(autouse=True)
        def auto(log):
            log.append("auto")

        def test_fixtures(resource, value, request, tmp_path, log):
            assert resource == "res" and value == 1
            assert request.node.name == "test_fixtures"
            assert tmp_path.is_dir() and "auto" in log

        def test_fixture_params(number):
            assert number in (10, 20)

        @pytest.mark.parametrize("a", [1, 2])
        @pytest.mark.parametrize("b", [pytest.param(3, id="three"), pytest.param(4, marks=pytest.mark.xfail)])
        def test_stacked(a, b):
            assert b == 3

        @pytest.fixture
        def doubled(request):
            return request.param * 2

        @pytest.mark.parametrize("doubled", [5], indirect=True)
        def test_indirect(doubled):
            assert doubled == 10

        @pytest.mark.skip(reason="not today")
        def test_skipped():
            raise AssertionError

        @pytest.mark.skipif("sys.platform != 'nonexistent'", reason="string condition")
        def test_skipif():
            raise AssertionError

        @pytest.mark.xfail(raises=ZeroDivisionError)
        def test_xfail():
            1 / 0

        @pytest.mark.xfail(strict=False)
        def test_xpass():
            pass

        @pytest.mark.xfail
        def test_strict_xpass_fails():
            pass

        @pytest.mark.slow
        def test_marked_slow():
            pass

        def test_imperative_skip():
            pytest.skip("later")

        def test_broken_fixture(missing_fixture):
            pass

        def test_fails_with_output():
            print("printed by the failing test")
            assert "abc" == "abd"

        def test_capsys(capsys):
            print("hello")
            assert capsys.readouterr().out == "hello\\n"

        def test_monkeypatch(monkeypatch):
            import os
            monkeypatch.setenv("RT_I15_X", "1")
            assert os.environ["RT_I15_X"] == "1"

        class TestGroup:
            def setup_method(self, method):
                self.ready = True

            def test_method(self):
                assert self.ready

        class TestWithInit:
            def __init__(self):
                pass

            def test_never_collected(self):
                raise AssertionError

        class Cases(unittest.TestCase):
            calls = []

            @classmethod
            def setUpClass(cls):
                cls.calls.append("class")

            def setUp(self):
                self.addCleanup(self.calls.append, "cleanup")

            def test_subtests(self):
                for i in range(3):
                    with self.subTest(i=i):
                        self.assertLess(i, 3)

            @unittest.skip("unittest skip")
            def test_unittest_skip(self):
                raise AssertionError

            @unittest.expectedFailure
            def test_expected_failure(self):
                self.assertEqual(1, 2)

            def test_class_set_up(self):
                self.assertEqual(self.calls[0], "class")
    """,
}


def test_a_pytest_suite_runs_with_pytest_outcomes(tmp_path: Path) -> None:
    project(tmp_path, SUITE)
    result = run_rt_test(tmp_path, "--reporter=junit", "--reporter-outfile=out.xml")
    assert result.code == 1, result.output
    # pytest 9.2 on this project: 3 failed, 14 passed, 4 skipped, 4 xfailed, 1 xpassed, 1 error
    assert counts(result) == {"pass": 14, "fail": 3, "skip": 4, "xfail": 4, "xpass": 1, "error": 1}, (
        result.output
    )
    err = result.stderr
    assert "test_fixture_params[ten]" in err and "test_stacked[three-1]" in err
    assert "TestGroup > test_method" in err and "test_never_collected" not in err
    assert "fixture 'missing_fixture' not found" in err
    assert "printed by the failing test" in err and "printed by" not in result.stdout
    assert "hello" not in result.stdout
    assert "[XPASS(strict)]" in err
    assert "assert a == b" in err  # the helper module's assert was rewritten
    suites = ET.parse(tmp_path / "out.xml").getroot()
    assert suites.get("errors") == "1"


SUBTESTS = {
    "test_sub.py": """
    import unittest

    class T(unittest.TestCase):
        def test_all_pass(self):
            for i in range(3):
                with self.subTest(i=i):
                    self.assertTrue(True)

        def test_one_fails(self):
            for i in range(3):
                with self.subTest("odd", i=i):
                    self.assertNotEqual(i, 1)

        def test_one_skips(self):
            for i in range(2):
                with self.subTest(i=i):
                    if i:
                        self.skipTest("not this one")

    def test_fixture(subtests):
        for i in range(3):
            with subtests.test(msg="x", i=i):
                assert i != 2

    def test_fixture_all_pass(subtests):
        with subtests.test():
            pass
    """
}


def test_subtests_count_as_pytest_9_counts_them(tmp_path: Path) -> None:
    """unittest's ``subTest`` and pytest 9's ``subtests`` fixture: each subtest that fails or skips is a result
    of its own (``test_one_fails [odd] (i=1)``); a unittest test still passes, a test using the fixture fails
    ("contains 1 failed subtest"); the subtests that pass are counted apart. pytest 9.2 -q on this project:
    3 failed, 4 passed, 1 skipped, 9 subtests passed (-v counts the same: the subtests' verbosity is not 0)."""
    project(tmp_path, SUBTESTS)
    completed = run_pytest("-q", cwd=tmp_path, timeout=120)
    assert "3 failed, 4 passed, 1 skipped, 9 subtests passed" in completed.stdout, completed.stdout
    result = run_rt_test(tmp_path, "-v")
    assert counts(result) == {"pass": 4, "fail": 3, "skip": 1}, result.output
    err = result.stderr
    assert "\n 9 subtests passed\n" in err, err
    assert "(pass) T > test_one_fails " in err and "(fail) T > test_one_fails [odd] (i=1)" in err
    assert "(skip) T > test_one_skips (i=1)" in err and "(pass) T > test_one_skips " in err
    assert "(fail) test_fixture [x] (i=2)" in err and "contains 1 failed subtest" in err
    assert "(pass) test_fixture_all_pass " in err


def test_subtests_at_verbosity_0_count_only_their_failures(tmp_path: Path) -> None:
    """pytest 9.2 counts a passed, skipped or xfailed subtest only when the subtests' verbosity is not 0: a plain
    run (verbosity 0) says "3 failed, 4 passed" for the project above, and its JUnit file still has the
    skipped subtest; ``-o verbosity_subtests=1`` counts them again. rt counted them at every verbosity."""
    project(tmp_path, SUBTESTS)
    completed = run_pytest(cwd=tmp_path, timeout=120)
    assert "= 3 failed, 4 passed in" in completed.stdout, completed.stdout
    result = run_rt_test(tmp_path, "--junitxml", "out.xml")
    assert counts(result) == {"pass": 4, "fail": 3}, result.output
    assert "subtests passed" not in result.stderr and "(skip)" not in result.stderr, result.stderr
    assert "(fail) T > test_one_fails [odd] (i=1)" in result.stderr, result.stderr
    skipped = ET.parse(tmp_path / "out.xml").getroot().findall(".//testcase[@name='test_one_skips']/skipped")
    assert [element.get("message") for element in skipped] == ["not this one"]
    completed = run_pytest("-o", "verbosity_subtests=1", cwd=tmp_path, timeout=120)
    assert "3 failed, 4 passed, 1 skipped, 9 subtests passed" in completed.stdout, completed.stdout
    result = run_rt_test(tmp_path, "-o", "verbosity_subtests=1")
    assert counts(result) == {"pass": 4, "fail": 3, "skip": 1}, result.output
    assert "\n 9 subtests passed\n" in result.stderr, result.stderr


def test_keyword_and_mark_expressions_and_node_ids(tmp_path: Path) -> None:
    project(tmp_path, SUITE)
    result = run_rt_test(tmp_path, "-m", "slow")
    assert counts(result) == {"pass": 1}, result.output
    result = run_rt_test(tmp_path, "-k", "stacked and not three")
    assert counts(result) == {"xfail": 2}, result.output
    result = run_rt_test(
        tmp_path, "tests/test_suite.py::TestGroup", "tests/test_suite.py::test_fixture_params"
    )
    assert counts(result) == {"pass": 3}, result.output
    result = run_rt_test(tmp_path, "tests/sub")
    assert counts(result) == {"pass": 1, "fail": 1}, result.output


def test_no_capture_flag_lets_output_through(tmp_path: Path) -> None:
    project(tmp_path, {"test_out.py": "def test_prints():\n    print('straight through')\n"})
    assert "straight through" not in run_rt_test(tmp_path).stdout
    assert "straight through" in run_rt_test(tmp_path, "-s").stdout


def test_pytest_is_not_imported_unless_the_suite_does(tmp_path: Path) -> None:
    project(
        tmp_path,
        {
            "test_plain.py": """
        import sys

        def test_no_pytest():
            assert "pytest" not in sys.modules and "_pytest" not in sys.modules
    """
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1}, result.output


#: modules a plain run must not import: each costs `rt test`'s start-up (a measured target, bench/realsuites.py)
#: and is needed only by a feature or a suite that asks for it (the suite's own imports still bring them)
NOT_AT_START_UP = (
    "importlib.metadata",  # entry points are read by rt._entrypoints, pytest11 too
    "pytest",
    "unittest",
    "doctest",
    "asyncio",
    "anyio",
    "json",
    "tempfile",
    "configparser",
    "tomllib",  # no pyproject.toml here
    "shlex",  # no addopts
    "random",  # no --randomize
    "difflib",  # no failed comparison
    "pprint",
    "dataclasses",
    "zipfile",
    "email",
    "rt_testrunner.junit",
    "rt_testrunner.coverage_run",
    "rt_testrunner.watch",
    "rt_testrunner.expect",
    "rt_testrunner.mocking",
    "rt_testrunner.doctests",
    "shutil",  # argparse's help formatter imports it for the width (rt.cli's asks os), with bz2, lzma, zlib
    "rt._http_events",  # rt.events' HttpRequest/HttpResponse: attrs classes only HTTP clients create
    "rt._http_interfaces",  # rt.interfaces' ListenOptions/CompressorOptions: rt-http's
    "logging",  # captured from when a suite imports it (rt_testrunner.capture); caplog's module too
    "rt_testrunner.caplog",
    "rt_debug.fetchlog",  # verbose fetch logging; its option's values live in rt_debug.plugin
    "rt_testrunner.expression",  # -k and -m
    "rt_testrunner.naming",  # test.each/describe.each case names
)

#: rt's own modules (rt, rt.*, rt_*; not the test files, imported as rt_test_files.*) a plain run may have
#: loaded when its tests run: the kernel, the seven installed plugins' hook modules, the runner, and rt.test
#: (imported by the project's rt-style file). Each costs start-up (an attrs class alone is about 3 million
#: instructions to create); raise it only with a reason (docs/benchmarks.md, start-up). 61 on 2026-11-24;
#: 66 once pyitems.py was split by concern into pymarks, pynodes, pysession, pycollect_module, pyskipping,
#: pywarnings and pyruntest (the same code: importing the runner costs the same 784 M instructions,
#: callgrind, `import rt_testrunner.runner`, before and after); 68 with rt_testrunner.options (RunOptions) and
#: rt_testrunner.tally (the counts), moved out of runner.py and report.py so that `rt test --parallel`'s main
#: process, which runs no test, does not import the runner (the same classes; two module loads more here);
#: 69 with rt._attrs_codecache, which gives rt's attrs classes their stored methods (an 85 M instructions
#: saving for a 0.1 M module: docs/benchmarks.md, start-up); 70 with rt_testrunner.real_os, the os functions
#: the capture and the import hook use, bound at start-up out of reach of a test faking the file system
#: (pyfakefs), one class of 13 static methods; 72 with rt._warm, the warm start's client (RT_TEST_WARM), and
#: rt._launch, the `rt` script's entry, which asks a warm server before rt.cli is imported (a warm run's
#: client: 43 M instructions, 113 M when it imported rt.cli first; docs/benchmarks.md "Warm start").
#: 73 with rt_testrunner.pytest_imports (session 16), which reads whether a test module imports pytest to
#: load the installed plugins before the first module, as pytest has them loaded.
MAX_OWN_MODULES_AT_START_UP = 73


def test_a_plain_run_imports_only_what_it_needs(tmp_path: Path) -> None:
    project(
        tmp_path,
        {
            "test_plain.py": f"""
        import sys

        def test_nothing_heavy_loaded():
            loaded = [name for name in {NOT_AT_START_UP!r} if name in sys.modules]
            assert loaded == []

        def test_few_own_modules_loaded():
            own = sorted(
                m for m in sys.modules if (m == "rt" or m.startswith(("rt.", "rt_"))) and not m.startswith("rt_test_files")
            )
            assert len(own) <= {MAX_OWN_MODULES_AT_START_UP}, own

        class TestInAClass:
            def test_too(self):
                assert "unittest" not in sys.modules
    """,
            "plain.test.py": """
        import sys
        from rt.test import test

        test("rt style", lambda: None)
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 4}, result.output


def test_a_pytest_suite_without_collectors_of_its_own_leaves_pycollect_unimported(tmp_path: Path) -> None:
    """Every pytest run asks for the session's node (the hooks' ``session``, a session fixture's
    ``request.node``): that view lives in its own module, and rt_testrunner.pycollect (conftest.py collectors,
    two attrs classes) is imported only by a suite that has such collectors. Same outcomes as pytest."""
    project(
        tmp_path,
        {
            "conftest.py": """
        import pytest

        seen = []

        def pytest_sessionstart(session):
            seen.append(type(session).__name__)

        @pytest.fixture(scope="session")
        def top(request):
            return request.node.nodeid
    """,
            "test_mod.py": """
        import sys
        import pytest
        from conftest import seen

        @pytest.mark.parametrize("n", [1, 2])
        def test_session_node(top, n, request):
            assert top == "" and request.session.testscollected == 3 and seen == ["Session"]

        def test_no_collector_module():
            assert "rt_testrunner.pycollect" not in sys.modules
    """,
        },
    )
    by_pytest = run_pytest("-q", cwd=tmp_path)
    assert counts_from_pytest(by_pytest.stdout) == {"pass": 3}, by_pytest.stdout
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 3}, result.output


def test_the_suite_sees_attrs_as_it_is(tmp_path: Path) -> None:
    """rt.cli hands rt's own attrs classes their stored methods (rt._attrs_codecache) while rt starts, and gives
    attrs its own function back before a test file is imported: a suite's classes are made by attrs alone."""
    project(
        tmp_path,
        {
            "test_models.py": """
        import attr._make
        import attrs

        @attrs.frozen
        class Point:
            x: int

        def test_attrs_untouched():
            assert attr._make._compile_and_eval.__module__ == "attr._make"
            assert repr(Point(1)) == "Point(x=1)"
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1}, result.output


def test_the_suites_reference_cycles_are_still_collected(tmp_path: Path) -> None:
    """rt freezes its start-up objects before the first test file (rt_testrunner.exiting.freeze_start_up):
    the collector stays on, and what the suite creates is collected as under pytest."""
    project(
        tmp_path,
        {
            "test_cycles.py": """
        import gc
        import weakref

        class Node:
            pass

        def test_a_cycle_is_collected():
            assert gc.isenabled()
            node = Node()
            node.me = node
            ref = weakref.ref(node)
            del node
            gc.collect()
            assert ref() is None
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1}, result.output


def test_logging_a_suite_imports_is_captured_though_rt_does_not_import_it(tmp_path: Path) -> None:
    """rt adds its log handler once a suite imports logging (rt_testrunner.capture): a test module that
    imports it alone, with no pytest, still has its records in the failure's captured log, and not on the
    terminal; a test that passes shows nothing."""
    project(
        tmp_path,
        {
            "test_logs.py": """
        import logging

        log = logging.getLogger("mine")

        def test_fails_with_a_record():
            log.warning("the record of the failing test")
            assert 0

        def test_passes_quietly():
            log.warning("the record of the passing test")
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1, "fail": 1}, result.output
    assert (
        "----- Captured log call -----\nWARNING  mine:test_logs.py:7 the record of the failing test"
        in result.output
    )
    assert "the record of the passing test" not in result.output, result.output


def test_conftest_options_and_collection_hook(tmp_path: Path) -> None:
    project(
        tmp_path,
        {
            "conftest.py": """
            import pytest

            def pytest_addoption(parser):
                parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")

            def pytest_configure(config):
                config.addinivalue_line("markers", "slow: slow tests")

            def pytest_collection_modifyitems(config, items):
                if config.getoption("--runslow"):
                    return
                skip_slow = pytest.mark.skip(reason="need --runslow option to run")
                for item in items:
                    if "slow" in item.keywords:
                        item.add_marker(skip_slow)
        """,
            "test_slow.py": """
            import pytest

            @pytest.mark.slow
            def test_slow():
                raise AssertionError("must not run")

            def test_fast():
                pass
        """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1, "skip": 1}, result.output


def test_concurrent_tests_keep_their_own_output(tmp_path: Path) -> None:
    project(
        tmp_path,
        {
            "talk.test.py": """
            import anyio
            from rt.test import test

            async def talk(word):
                for _ in range(3):
                    print(word)
                    await anyio.sleep(0.02)

            test("a", lambda: talk("alpha"))
            test("b", lambda: talk("beta"))
        """,
            "test_pytest_style.py": """
            import anyio

            async def test_one():
                for _ in range(3):
                    print("one")
                    await anyio.sleep(0.02)
                assert False

            async def test_two():
                for _ in range(3):
                    print("two")
                    await anyio.sleep(0.02)
                assert False
        """,
        },
    )
    result = run_rt_test(tmp_path, "--concurrent")
    lines = [line for line in result.stdout.splitlines() if line in ("alpha", "beta")]
    assert lines in (["alpha"] * 3 + ["beta"] * 3, ["beta"] * 3 + ["alpha"] * 3), result.output
    # pytest-style tests: captured, each failure shows its own test's output only
    sections = re.findall(r"----- Captured stdout call -----\n((?:\w+\n)+)", result.stderr)
    assert sorted(sections) == ["one\none\none\n", "two\ntwo\ntwo\n"], result.output


EXPLAINED = """
import dataclasses
import attrs
import pytest

@dataclasses.dataclass
class Point:
    x: int
    label: str

@attrs.define
class Box:
    size: int
    items: list

def test_text():
    assert "hello world" == "hello wurld"

def test_lines():
    assert "a\\nb\\nc" == "a\\nB\\nc"

def test_long_sequence():
    assert list(range(100)) + [1] == list(range(100))

def test_dict():
    assert {"a": 1, "b": 2, "c": 3} == {"a": 1, "b": 3, "d": 4}

def test_set():
    assert {1, 2} == {2, 3}

def test_dataclass():
    assert Point(1, "a") == Point(1, "b")

def test_attrs():
    assert Box(1, [1]) == Box(1, [2])
"""


def test_assertion_messages_explain_the_difference(tmp_path: Path) -> None:
    project(tmp_path, {"test_explained.py": EXPLAINED})
    err = run_rt_test(tmp_path).stderr
    # pytest's explanation lines, indented under the first line as pytest indents them
    assert "  - hello wurld\n  ?        ^\n  + hello world\n  ?        ^" in err
    assert "    a\n  - B\n  + b\n    c" in err
    assert "Left contains one more item: 1" in err
    assert "Omitting 1 identical items" in err and "{'b': 2} != {'b': 3}" in err
    assert (
        "Left contains 1 more item:\n  {'c': 3}" in err and "Right contains 1 more item:\n  {'d': 4}" in err
    )
    assert "Extra items in the left set:\n  1\n  Extra items in the right set:\n  3" in err
    assert "Omitting 1 identical items, use -vv to show\n  Differing attributes:\n  ['label']" in err
    assert (
        "Drill down into differing attribute items:\n    items: [1] != [2]\n    At index 0 diff: 1 != 2"
        in err
    )


def test_module_level_skip_counts_as_one_skipped_test(tmp_path: Path) -> None:
    project(
        tmp_path,
        {
            "test_skipped_module.py": """
            import pytest

            pytest.importorskip("no_such_module_anywhere_i15")

            def test_never():
                pass
        """,
            "test_ok.py": "def test_ok():\n    pass\n",
        },
    )
    result = run_rt_test(tmp_path)
    assert result.code == 0, result.output
    assert counts(result) == {"pass": 1, "skip": 1}, result.output


def test_fixtures_of_installed_pytest_plugins_are_found(tmp_path: Path) -> None:
    # anyio's pytest plugin (installed with anyio) provides free_tcp_port, through its pytest11 entry point
    project(
        tmp_path,
        {
            "test_plugin_fixture.py": """
        def test_uses_it(free_tcp_port):
            assert isinstance(free_tcp_port, int)
    """
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1}, result.output


def test_details_real_suites_rely_on(tmp_path: Path) -> None:
    """Found running python-dateutil and idna: each is a test that failed under rt and passed under pytest."""
    project(
        tmp_path,
        {
            "test_details.py": """
        import gc
        import unittest
        import weakref
        import pytest

        class Thing:
            pass

        def test_assert_temporaries_do_not_keep_values_alive():
            thing = Thing()
            ref = weakref.ref(thing)
            assert ref() is not None
            del thing
            gc.collect()
            assert ref() is None

        class XunitInTestCase(unittest.TestCase):
            @classmethod
            def setup_class(cls):
                cls.value = 3

            def test_value(self):
                self.assertEqual(self.value, 3)

        class OnlyRunTest(unittest.TestCase):
            def runTest(self):
                self.assertTrue(True)

        @pytest.mark.xfail
        def test_did_not_raise_is_an_expected_failure():
            with pytest.raises(ValueError):
                pass
    """
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 3, "xfail": 1}, result.output


def test_values_inside_an_assert_live_until_it_is_done(tmp_path: Path) -> None:
    """Found running attrs: identity hashes of two objects built in one assert differ under pytest."""
    project(
        tmp_path,
        {
            "test_identity.py": """
        class C:
            def __init__(self, x):
                self.x = x

        def test_two_objects_alive_at_once():
            assert hash(C(1)) != hash(C(1))
            assert id(C(2).x) == id(C(2).x)
            assert C(3).x == 3
    """
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1}, result.output


def test_multiprocessing_spawn_finds_functions_of_the_test_module(tmp_path: Path) -> None:
    """A spawned child unpickles ``tests.test_spawn.square`` by importing that module by name: this works only
    because rt imports test modules under their real names (under a made-up name the child cannot find them)."""
    project(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/test_spawn.py": """
        import multiprocessing

        def square(n):
            return n * n

        def report(queue, n):
            queue.put((__name__, square(n)))

        def test_pool_with_spawn():
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                assert pool.map(square, [1, 2, 3]) == [1, 4, 9]

        def test_process_with_spawn():
            context = multiprocessing.get_context("spawn")
            queue = context.Queue()
            process = context.Process(target=report, args=(queue, 7))
            process.start()
            try:
                assert queue.get(timeout=100) == ("tests.test_spawn", 49)
            finally:
                process.join(100)
            assert process.exitcode == 0
    """,
        },
    )
    result = run_rt_test(tmp_path, "--timeout", "110000")
    assert counts(result) == {"pass": 2}, result.output


def test_sync_tests_may_run_an_event_loop_of_their_own(tmp_path: Path) -> None:
    """Found running tenacity: ``IsolatedAsyncioTestCase`` and sync decorators that drive an ``async def`` with
    ``loop.run_until_complete`` start their own loop, which fails inside a running one ("Cannot run the event
    loop while another loop is running"); as under pytest, they run on the main thread, outside rt's loop."""
    project(
        tmp_path,
        {
            "test_own_loop.py": """
        import asyncio
        import functools
        import unittest

        def run_in_loop(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                loop = asyncio.new_event_loop()
                try:
                    return loop.run_until_complete(fn(*args))
                finally:
                    loop.close()
            return wrapper

        async def test_native_async_test_starts_rt_loop():
            await asyncio.sleep(0)

        class Isolated(unittest.IsolatedAsyncioTestCase):
            async def asyncSetUp(self):
                self.value = 1

            async def test_async_method(self):
                await asyncio.sleep(0)
                self.assertEqual(self.value, 1)

        class Wrapped(unittest.TestCase):
            @run_in_loop
            async def test_wrapped_method(self):
                await asyncio.sleep(0)

        @run_in_loop
        async def test_wrapped_function():
            await asyncio.sleep(0)
    """
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 4}, result.output


def test_static_method_fixtures_and_a_stable_stdout_buffer(tmp_path: Path) -> None:
    """Found running structlog: ``@pytest.fixture`` over ``@staticmethod`` in a test class got no ``request``,
    and ``sys.stdout.buffer`` was a new object at each access while output is captured."""
    project(
        tmp_path,
        {
            "test_structlog_details.py": """
        import sys
        import pytest

        class TestStatic:
            @pytest.fixture(name="kind", params=("a", "b"))
            @staticmethod
            def _kind(request):
                return request.param

            def test_static_fixture(self, kind):
                assert kind in ("a", "b")

        def test_stdout_buffer_is_one_object():
            assert sys.stdout.buffer is sys.stdout.buffer
            assert sys.stderr.buffer is sys.stderr.buffer
    """
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 3}, result.output


def test_norecursedirs_patterns_with_a_path(tmp_path: Path) -> None:
    """Found running marshmallow: ``norecursedirs = "docs tests/mypy_test_cases"`` matches a folder by the end
    of its path when the pattern has a ``/``, by its name otherwise."""
    project(
        tmp_path,
        {
            "pyproject.toml": """
        [tool.pytest.ini_options]
        norecursedirs = "docs tests/typing_cases"
    """,
            "tests/test_ok.py": "def test_ok():\n    pass\n",
            "tests/typing_cases/test_not_a_test.py": "raise ImportError('must not be collected')\n",
            "other/typing_cases/test_collected.py": "def test_collected():\n    pass\n",
            "docs/test_doc.py": "raise ImportError('must not be collected')\n",
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 2}, result.output


def test_every_test_module_is_imported_before_any_test_runs(tmp_path: Path) -> None:
    """Found running pyparsing and structlog: as pytest collects the whole session first, a module imported
    later in file order has run its top level before the first test, and sees no test's changes yet."""
    project(
        tmp_path,
        {
            "state.py": "value = ['initial']\n",
            "later_helper.py": "",
            "test_a_changes.py": """
        import sys
        import state

        def test_change():
            state.value[0] = "changed"

        def test_sees_what_a_later_module_imports():
            assert "later_helper" in sys.modules
    """,
            "test_b_saves.py": """
        import later_helper
        import state

        SAVED = state.value[0]

        def test_saved_before_any_test_ran():
            assert SAVED == "initial"
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 3}, result.output


def test_installed_plugins_options_take_their_declared_defaults(tmp_path: Path) -> None:
    """Found running platformdirs: pytest-mock's ``mocker`` reads an ini value its plugin declares in
    ``pytest_addoption``; rt answered "" and the fixture failed. An installed plugin (a ``pytest11`` entry
    point, here a distribution in the project folder) has its options' defaults."""
    project(
        tmp_path,
        {
            "fakeplug-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: fakeplug\nVersion: 1.0\n",
            "fakeplug-1.0.dist-info/entry_points.txt": "[pytest11]\nfakeplug = fakeplug_plugin\n",
            "fakeplug_plugin.py": """
        import pytest

        def pytest_addoption(parser):
            parser.addini("fake_standalone", "a bool ini value", type="bool", default=True)
            group = parser.getgroup("fake")
            group.addoption("--fake-level", default="3", help="a level")

        @pytest.fixture
        def fake(pytestconfig):
            return pytestconfig.getini("fake_standalone"), pytestconfig.getoption("--fake-level")
    """,
            "test_uses_plugin.py": """
        def test_plugin_fixture(fake):
            assert fake == (True, "3")
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1}, result.output


def test_addopts_and_pythonpath_of_the_configuration(tmp_path: Path) -> None:
    """Found on semver, structlog, inflect, marshmallow: ``addopts`` options that select (``-m``), stop
    (``-x``) or filter warnings (``-W``) are applied, display options are ignored, and the options rt does
    not have are named in one line with the reason; ``pythonpath`` entries are importable."""
    project(
        tmp_path,
        {
            "pyproject.toml": """
        [tool.pytest.ini_options]
        pythonpath = ["src"]
        markers = ["slow"]
        addopts = "-ra -v --strict-markers -p no:cacheprovider -m 'not slow' -W error::UserWarning -n 2 --cov=pkg"
    """,
            "src/pkg/__init__.py": "VALUE = 1\n",
            # pytest-xdist's -n where it is not installed (the tox env of rt-testrunner alone): pytest refuses
            # an option of addopts no plugin registers, and so does rt (pytest-cov is in the test extra)
            "conftest.py": """
        import importlib.util


        def pytest_addoption(parser):
            if importlib.util.find_spec("xdist") is None:
                parser.getgroup("xdist").addoption("-n", "--numprocesses", dest="numprocesses", default=None)
    """,
            "tests/test_x.py": """
        import warnings
        import pytest
        import pkg

        def test_pythonpath():
            assert pkg.VALUE == 1

        @pytest.mark.slow
        def test_slow():
            raise AssertionError("deselected by addopts' -m")

        def test_w_option_applies():
            with pytest.raises(UserWarning):
                warnings.warn("an error now", UserWarning)
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 2}, result.output
    notices = [line for line in result.stderr.splitlines() if "addopts" in line]
    assert notices == [
        "rt test: ignoring addopts of pyproject.toml: -n 2 (pytest-xdist: use rt test --parallel=N); "
        "--cov=pkg (pytest-cov: use rt test --coverage)"
    ], result.output
    assert counts(run_rt_test(tmp_path, "-m", "slow")) == {"fail": 1}  # the command line wins


@pytest.mark.parametrize("where", ["ini", "addopts"])
def test_log_level_lowers_the_root_logger_while_each_test_runs(tmp_path: Path, where: str) -> None:
    """``log_level = INFO`` (or ``--log-level=INFO`` in addopts): caplog and the captured log see INFO records
    of loggers with no level of their own, as under pytest (9.2 counts 3 passed here); the root logger's
    level is back after each test, whatever the test set. A bad value is a one-line usage error."""
    setting = 'log_level = "info"' if where == "ini" else 'addopts = "--log-level=INFO"'
    project(
        tmp_path,
        {
            "pyproject.toml": f"[tool.pytest.ini_options]\n{setting}\n",
            "test_log.py": """
        import logging

        def test_info_is_captured(caplog):
            logging.getLogger("app").info("hello %s", "there")
            logging.getLogger("app").debug("not this")
            assert caplog.messages == ["hello there"]

        def test_a_test_that_changes_the_root_level():
            assert logging.getLogger().level == logging.INFO
            logging.getLogger().setLevel(logging.CRITICAL)

        def test_the_next_test_has_it_back(caplog):
            logging.getLogger("app").info("again")
            assert [r.levelname for r in caplog.records] == ["INFO"]
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 3}, result.output
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nlog_level = "chatty"\n')
    bad = run_rt_test(tmp_path)
    assert (
        bad.code == 1 and "log_level = 'chatty'" in bad.stderr and "is not a logging level" in bad.stderr
    ), bad.output
    assert "Traceback" not in bad.output


def test_doctest_modules_from_addopts(tmp_path: Path) -> None:
    """Found running inflect: ``addopts = --doctest-modules`` makes every docstring with examples a test (of
    modules that are not test files too), run with ``doctest_optionflags``; pytest 9.2 counts 3 passed, 1
    failed here."""
    project(
        tmp_path,
        {
            "pyproject.toml": """
        [tool.pytest.ini_options]
        addopts = "--doctest-modules"
        doctest_optionflags = "NORMALIZE_WHITESPACE ELLIPSIS"
    """,
            "setup.py": "import setuptools\nraise SystemExit('setup.py is not collected')\n",
            "pkg/__init__.py": "",
            "pkg/mod.py": """
        def add(a, b):
            \"\"\"
            >>> add(1,
            ...     2)
            3
            >>> list(range(3))
            [0,   1, 2]
            >>> print("a long line")
            a ... line
            \"\"\"
            return a + b

        def broken():
            \"\"\"
            >>> broken()
            2
            \"\"\"
            return 1

        def plain():
            \"\"\"No examples here.\"\"\"
    """,
            "tests/test_x.py": """
        def helper():
            \"\"\"
            >>> helper()
            'ok'
            \"\"\"
            return "ok"

        def test_it():
            assert helper() == "ok"
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 3, "fail": 1}, result.output
    assert "(fail) pkg.mod.broken" in result.stderr
    assert "Expected:\n    2\nGot:\n    1" in result.stderr, result.output


def test_ignore_collect_hook_and_collect_ignore_next_to_the_tests(tmp_path: Path) -> None:
    """Found on boltons: a conftest.py's ``pytest_ignore_collect`` leaves out files (by version suffix) and
    folders; ``collect_ignore`` in the conftest.py of the tests' own folder applies to its first file too.
    pytest 9.2 counts 2 passed here."""
    project(
        tmp_path,
        {
            "conftest.py": """
        def pytest_ignore_collect(collection_path, config):
            if collection_path.name == "legacy" or collection_path.stem.endswith("_py2"):
                return True
            return None
    """,
            "tests/conftest.py": "collect_ignore = ['test_a_ignored.py']\n",
            "tests/test_a_ignored.py": "raise ImportError('ignored by collect_ignore')\n",
            "tests/test_b.py": "def test_b():\n    pass\n",
            "tests/test_c_py2.py": "raise ImportError('ignored by the hook')\n",
            "legacy/conftest.py": "raise ImportError('a conftest.py of an ignored folder is not loaded')\n",
            "legacy/test_old.py": "raise ImportError('ignored folder')\n",
            "other/test_d.py": "def test_d():\n    pass\n",
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 2}, result.output


def test_doctest_namespace_fixture(tmp_path: Path) -> None:
    """Found on semver: an autouse fixture of conftest.py asks for ``doctest_namespace`` (a session dict whose
    names the doctests see); without it every test of the suite was a set-up error."""
    project(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--doctest-modules"\n',
            "conftest.py": """
        import pytest

        @pytest.fixture(autouse=True)
        def add_answer(doctest_namespace):
            doctest_namespace["answer"] = 42
    """,
            "test_a.py": """
        def test_namespace(doctest_namespace):
            assert doctest_namespace["answer"] == 42
    """,
            "test_b.py": """
        def uses_answer():
            \"\"\"
            >>> answer
            42
            \"\"\"
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 2}, result.output


def test_objects_answering_every_attribute_are_not_fixtures(tmp_path: Path) -> None:
    """Found on glom: its module-level ``T`` returns a new ``T`` for any attribute and item, so it passed for
    a fixture whose ``params`` never ended (rt grew to 16 GB). A ``MagicMock`` at module level is the common
    case of the same: only pytest's own fixture marker makes a fixture."""
    project(
        tmp_path,
        {
            "test_any.py": """
        from unittest import mock

        import pytest

        class Anything:
            def __getattr__(self, name):
                return Anything()

            def __getitem__(self, index):
                if index > 100_000:  # bounded, so that a regression fails instead of eating the memory
                    raise IndexError(index)
                return Anything()

            def __call__(self, *args, **kwargs):
                return Anything()

        T = Anything()
        M = mock.MagicMock()

        @pytest.fixture
        def real():
            return 1

        def test_uses_real(real):
            assert real == 1
    """,
        },
    )
    result = run_rt_test(tmp_path, timeout=60)
    assert counts(result) == {"pass": 1}, result.output


def test_conftest_runtest_setup_hook_and_xfail_marks_added_at_run_time(tmp_path: Path) -> None:
    """pytest's documented recipes: conftest.py's ``pytest_runtest_setup(item)`` skipping by a mark or an
    option, in the folder it applies to; ``request.applymarker(pytest.mark.xfail)`` in a test or a fixture
    makes its failure an expected one (pytest evaluates xfail marks again after the call)."""
    project(
        tmp_path,
        {
            "conftest.py": """
        import pytest

        def pytest_runtest_setup(item):
            if item.get_closest_marker("linux_only") is not None:
                pytest.skip("linux_only")
    """,
            "sub/conftest.py": """
        def pytest_runtest_setup(item):
            raise RuntimeError("a set-up hook that fails is the test's set-up error")
    """,
            "test_a.py": """
        import pytest

        @pytest.mark.linux_only
        def test_platform():
            assert False

        def test_plain():
            pass

        def test_applymarker(request):
            request.applymarker(pytest.mark.xfail(reason="known"))
            assert False

        @pytest.fixture
        def flaky(request):
            request.node.add_marker(pytest.mark.xfail(reason="from a fixture"))

        def test_from_fixture(flaky):
            assert False

        def test_applymarker_passes(request):
            request.applymarker(pytest.mark.xfail(reason="known"))
    """,
            "sub/test_b.py": "def test_b():\n    pass\n",
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1, "skip": 1, "xfail": 2, "xpass": 1, "error": 1}, result.output


def test_conftest_session_start_and_finish_hooks(tmp_path: Path) -> None:
    """conftest.py's ``pytest_sessionstart(session)`` runs before any test (it often sets up shared state) and
    ``pytest_sessionfinish(session, exitstatus)`` after the last one, session fixtures torn down, with
    pytest's exit status (1: a test failed)."""
    project(
        tmp_path,
        {
            "conftest.py": """
        import os
        import pytest

        def pytest_sessionstart(session):
            os.environ["STARTED_BY_HOOK"] = "yes"

        @pytest.fixture(scope="session")
        def resource():
            yield
            with open("log.txt", "a") as f:
                f.write("fixture torn down\\n")

        def pytest_sessionfinish(session, exitstatus):
            with open("log.txt", "a") as f:
                f.write(f"finished {exitstatus}\\n")
    """,
            "test_a.py": """
        import os

        def test_started(resource):
            assert os.environ.get("STARTED_BY_HOOK") == "yes"

        def test_fails():
            assert False
    """,
        },
    )
    result = run_rt_test(tmp_path)
    assert counts(result) == {"pass": 1, "fail": 1}, result.output
    assert (tmp_path / "log.txt").read_text() == "fixture torn down\nfinished 1\n"
    (tmp_path / "log.txt").unlink()
    result = run_rt_test(tmp_path, "-k", "started")
    assert counts(result) == {"pass": 1}, result.output
    assert (tmp_path / "log.txt").read_text() == "fixture torn down\nfinished 0\n"


def test_conftest_runtest_teardown_hook(tmp_path: Path) -> None:
    """conftest.py's ``pytest_runtest_teardown(item, nextitem)`` runs after each test under its folder, before
    the test's fixtures are torn down; an error there is the test's teardown error."""
    project(
        tmp_path,
        {
            "conftest.py": """
        import pytest

        def pytest_runtest_teardown(item, nextitem):
            with open("log.txt", "a") as f:
                f.write(f"hook {item.name}\\n")
            if item.get_closest_marker("bad_teardown"):
                raise RuntimeError("teardown hook failed")

        @pytest.fixture
        def res(request):
            yield
            with open("log.txt", "a") as f:
                f.write(f"fixture {request.node.name}\\n")
    """,
            "test_a.py": """
        import pytest

        def test_one(res):
            pass

        @pytest.mark.bad_teardown
        def test_two():
            pass
    """,
        },
    )
    result = run_rt_test(tmp_path)
    # as pytest counts it: the test passed, and its teardown is an error
    assert counts(result) == {"pass": 2, "error": 1}, result.output
    assert (tmp_path / "log.txt").read_text() == "hook test_one\nfixture test_one\nhook test_two\n"


def test_skipif_marks_are_evaluated_before_skip_marks(tmp_path: Path) -> None:
    """pytest evaluates every ``skipif`` of a test before its ``skip`` marks: the reason is the skipif's, and a
    skipif condition that fails to evaluate is an error at set-up even under a ``skip``. rt took the marks in
    their order, so the nearest ``skip`` won. pytest 9.2: 2 skipped (both by their skipif), 1 error."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_marks.py": """
            import pytest


            @pytest.mark.skip(reason="plain skip")
            @pytest.mark.skipif(True, reason="by skipif")
            def test_both():
                pass


            @pytest.mark.skipif(True, reason="by skipif below")
            @pytest.mark.skip(reason="plain skip above")
            def test_both_other_way():
                pass


            @pytest.mark.skip(reason="plain")
            @pytest.mark.skipif("undefined_name", reason="bad")
            def test_bad_condition():
                pass
            """,
        },
    )
    by_pytest = run_pytest("-rs", cwd=tmp_path)
    expected = counts_from_pytest(by_pytest.stdout)
    assert expected == {"skip": 2, "error": 1}, by_pytest.output
    assert "plain skip" not in by_pytest.stdout, by_pytest.output
    found = run_cli("test", "--junit-xml", "junit.xml", cwd=tmp_path, timeout=180)
    assert summary_counts(found.stderr) == expected, found.output
    skipped = ET.parse(tmp_path / "junit.xml").getroot().iter("skipped")
    assert sorted(node.get("message", "") for node in skipped) == ["by skipif", "by skipif below"], (
        found.output
    )
