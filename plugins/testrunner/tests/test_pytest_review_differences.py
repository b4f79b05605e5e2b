"""``rt test`` on differences from pytest 9.2 found in the project's reviews (issue 15, session 16): each test
writes a small project, runs pytest itself on it and ``rt test`` (in one process and, where the difference was
in the workers, with ``--parallel=2``), and compares what a suite or a plugin can observe."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from rt.testing import run_cli, run_pytest, write_files

#: a conftest.py writing what the session's end hooks see, as pytest-cov's ``--no-cov-on-fail`` reads
#: ``session.testsfailed``; the first worker is slow, so the second takes files too
_SESSION_END = """
import os
import time

import pytest

HERE = os.path.dirname(__file__)


@pytest.fixture(autouse=True)
def slow():
    if os.environ.get("RT_TEST_WORKER") == "1":
        time.sleep(0.4)


def pytest_sessionfinish(session, exitstatus):
    with open(os.path.join(HERE, "ended.txt"), "a") as out:
        out.write(f"{session.testsfailed} {session.testscollected} {int(exitstatus)}\\n")


def pytest_terminal_summary(terminalreporter, exitstatus):
    with open(os.path.join(HERE, "summary.txt"), "w") as out:
        out.write(f"{int(exitstatus)}")
"""


def _session_end(root: Path) -> tuple[str, str]:
    """The last ``pytest_sessionfinish`` line (the session that ends the run) and the summary's status."""
    ended = (root / "ended.txt").read_text().splitlines()[-1]
    summary = (root / "summary.txt").read_text()
    (root / "ended.txt").unlink()
    (root / "summary.txt").unlink()
    return ended, summary


@pytest.mark.parametrize("continuing", [False, True], ids=["stopped", "continue_on_collection_errors"])
@pytest.mark.parametrize("arguments", [(), ("--parallel=2",)], ids=["one_process", "parallel"])
def test_session_testsfailed_counts_collection_errors(
    tmp_path: Path, arguments: tuple[str, ...], continuing: bool
) -> None:
    """pytest's session counts each failed collect report in ``testsfailed``, as a failed test's: a plugin's
    ``pytest_sessionfinish`` (pytest-cov's ``--no-cov-on-fail``) sees the collection error. rt counted the
    tests' failures only (0 where pytest has 1, 2 of 3 failed tests in the last ``--parallel`` worker), and
    the worker that ends a ``--parallel`` run left the other workers' files that failed to load out of its
    ``exitstatus``. pytest 9.2: "1 8 2" when the run stops, "5 8 1" with ``--continue-on-collection-errors``."""
    files = {"conftest.py": _SESSION_END, "test_broken.py": "import not_a_module_here\n"}
    for name in "abcd":
        files[f"test_{name}.py"] = "def test_fails():\n    assert 0\n\n\ndef test_passes():\n    pass\n"
    root = write_files(tmp_path, files)
    more = ("--continue-on-collection-errors",) if continuing else ()
    run_pytest("-p", "no:randomly", *more, cwd=root, timeout=180)
    expected = _session_end(root)
    assert expected == (("5 8 1", "1") if continuing else ("1 8 2", "2"))
    result = run_cli("test", "-p", "no:randomly", *more, *arguments, cwd=root, timeout=180)
    assert result.code == int(expected[1]), result.output
    assert _session_end(root) == expected


_NODES = {
    "pyproject.toml": "[tool.pytest.ini_options]\n",
    "tests/test_a.py": """
    class TestA:
        def test_x(self):
            pass


    def test_a():
        pass


    def test_b():
        pass
    """,
}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("tests/nope.py",), "file or directory not found: tests/nope.py"),
        (("./missing",), "file or directory not found: ./missing"),
        (
            ("tests/test_a.py::test_a", "nope/test_x.py::test"),
            "file or directory not found: nope/test_x.py::test",
        ),
        (("tests/test_a.py::nope",), "not found: {root}/tests/test_a.py::nope"),
        (
            ("tests/test_a.py::test_b", "tests/test_a.py::TestA::nope"),
            "not found: {root}/tests/test_a.py::TestA::nope",
        ),
        (("tests/test_a.py::test_a[1]",), "not found: {root}/tests/test_a.py::test_a"),
    ],
    ids=["file", "folder", "node_id_file", "node_id", "method", "parameter"],
)
def test_a_path_or_node_id_that_names_nothing_is_a_usage_error(
    tmp_path: Path, arguments: tuple[str, ...], message: str
) -> None:
    """pytest reads each argument as a path: one that does not exist, or a node id naming no test of its file,
    stops the run before any test, ``ERROR: file or directory not found: X`` or ``ERROR: not found: FILE::X``,
    status 4 (a typo in a node id is no green run of nothing). rt took a path that does not exist for a
    file-name filter (no test found, status 5 or the other files run) and ran a node id's file with none of
    its tests (status 5). pytest 9.2: status 4 and the message, for each."""
    root = write_files(tmp_path, _NODES)
    by_pytest = run_pytest(*arguments, cwd=root, timeout=180)
    expected = message.format(root=root)
    assert by_pytest.code == 4
    assert f"ERROR: {expected}" in by_pytest.output
    result = run_cli("test", *arguments, cwd=root, timeout=180)
    assert result.code == 4, result.output
    assert expected in result.output
    assert "pass" not in result.output.replace(" 0 pass", "")


@pytest.mark.parametrize(
    ("arguments", "counts"),
    [
        (("tests/test_a.py::TestA",), " 1 pass"),
        (("tests/test_a.py::test_a", "tests/test_a.py::TestA::test_x"), " 2 pass"),
        (("tests/test_a.py::TestA", "tests/test_a.py::TestA::nope"), " 1 pass"),  # inside one given
        (("test_a",), " 3 pass"),  # the spec's file-name fragment: no separator, no .py, no "::"
    ],
    ids=["class", "two_node_ids", "inside_another", "fragment"],
)
def test_node_ids_and_fragments_that_name_tests_still_run(
    tmp_path: Path, arguments: tuple[str, ...], counts: str
) -> None:
    """The other side of the rule: a node id naming a class or a test runs it, as pytest does, and a word
    that does not look like a path stays the spec's file-name filter (pytest would refuse ``test_a``). A node
    id inside another given (``TestA`` and ``TestA::nope``) is not looked for, as pytest collects the outer
    one once (pytest 9.2: 1 passed, status 0)."""
    root = write_files(tmp_path, _NODES)
    result = run_cli("test", *arguments, cwd=root, timeout=180)
    assert result.code == 0, result.output
    assert counts in result.stderr


@pytest.mark.parametrize("arguments", [(), ("--parallel=2",)], ids=["one_process", "parallel"])
def test_a_node_id_a_modifyitems_hook_deselects_is_no_usage_error(
    tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    """pytest checks the command line's node ids against what it collected, before
    ``pytest_collection_modifyitems``: a test the hook then drops was found, and the run is "no tests ran",
    status 5. rt judged the node id after the hook and stopped with "not found: FILE::test_two", status 4.
    pytest 9.2: status 5, no "not found"; another file's tests still run."""
    files = {
        **_NODES,
        "conftest.py": """
        def pytest_collection_modifyitems(config, items):
            items[:] = [item for item in items if "two" not in item.name]
        """,
        "tests/unit/test_c.py": "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n",
    }
    root = write_files(tmp_path, files)
    alone = ("tests/unit/test_c.py::test_two",)
    by_pytest = run_pytest("-p", "no:randomly", *alone, cwd=root, timeout=180)
    assert by_pytest.code == 5, by_pytest.output
    assert "not found" not in by_pytest.output
    result = run_cli("test", "-p", "no:randomly", *arguments, *alone, cwd=root, timeout=180)
    assert result.code == 5, result.output
    assert "not found" not in result.output
    both = (*alone, "tests/test_a.py::test_a")
    by_pytest = run_pytest("-p", "no:randomly", *both, cwd=root, timeout=180)
    assert by_pytest.code == 0 and "1 passed" in by_pytest.output, by_pytest.output
    result = run_cli("test", "-p", "no:randomly", *arguments, *both, cwd=root, timeout=180)
    assert result.code == 0, result.output
    assert " 1 pass" in result.stderr


_TOLD_HOOKS = """
def _tell(line):
    with open("hooks.txt", "a") as out:
        out.write(line + "\\n")


def pytest_itemcollected(item):
    _tell(f"itemcollected {item.nodeid}")


def pytest_collection_modifyitems(items):
    _tell(f"modifyitems {len(items)}")


def pytest_collection_finish(session):
    _tell(f"collection_finish {len(session.items)}")


def pytest_report_header(config):
    _tell("report_header")


def pytest_report_collectionfinish(config, start_path, items):
    _tell(f"report_collectionfinish {len(items)}")
"""


@pytest.mark.parametrize(
    ("arguments", "status"),
    [
        (("tests/test_a.py::TestEmpty",), 5),
        (("tests/test_a.py::TestEmpty", "tests/test_a.py::test_a"), 0),
        (("tests/test_a.py::TestA::nope",), 4),
        (("tests/test_a.py::TestA", "tests/test_a.py::nope"), 4),
    ],
    ids=["empty_class", "empty_class_and_a_test", "not_found", "not_found_and_a_class"],
)
def test_an_empty_class_is_found_and_a_node_id_not_found_stops_before_the_items(
    tmp_path: Path, arguments: tuple[str, ...], status: int
) -> None:
    """A node id naming a test class with no test (``TestEmpty``) is found by pytest, which runs nothing,
    "no tests ran", status 5: rt said "not found", status 4. A node id naming nothing stops pytest's
    collection before it gathers the items: no ``pytest_itemcollected`` or ``pytest_collection_modifyitems``
    call, ``pytest_collection_finish`` and the report hooks with no items; rt called the item hooks first. The
    same status and hook calls under pytest 9.2 and ``rt test``."""
    files = {
        **_NODES,
        "tests/test_a.py": textwrap.dedent(_NODES["tests/test_a.py"]) + "\n\nclass TestEmpty:\n    pass\n",
        "conftest.py": _TOLD_HOOKS,
    }
    root = write_files(tmp_path, files)
    told = root / "hooks.txt"
    by_pytest = run_pytest("-p", "no:randomly", *arguments, cwd=root, timeout=180)
    assert by_pytest.code == status, by_pytest.output
    expected = sorted(told.read_text().splitlines())
    told.unlink()
    result = run_cli("test", "-p", "no:randomly", *arguments, cwd=root, timeout=180)
    assert result.code == status, result.output
    assert sorted(told.read_text().splitlines()) == expected, result.output


def test_a_missing_path_in_a_project_of_the_spec_patterns_keeps_the_reference_meaning(tmp_path: Path) -> None:
    """No pytest configuration, no conftest.py, files of the spec's patterns only: a positional argument is
    the reference runtime's filter (spec C rule 1), and ``./x`` names a file (rule 2), whose absence is rt's
    own usage error, status 1."""
    root = write_files(tmp_path, {"a_test.py": "from rt.test import test\n\ntest('a', lambda: None)\n"})
    filtered = run_cli("test", "tests/nope.py", cwd=root, timeout=180)
    assert filtered.code == 1
    assert 'To treat the "tests/nope.py" filter as a path' in filtered.output
    named = run_cli("test", "./nope.py", cwd=root, timeout=180)
    assert named.code == 1
    assert "Test file not found: './nope.py'" in named.output


#: a suite whose collection differs from one process to the next (a parameter's id made from the process id),
#: with a hook that reorders the session across files (so --parallel hands out turns by node id) and a thread
#: started at configure time (so no worker is forked from the collecting process: the others collect anew)
_DIFFERENT_COLLECTIONS = {
    "conftest.py": """
    import os
    import threading
    import time

    import pytest

    _STOP = threading.Event()
    STARTED = os.path.join(os.path.dirname(__file__), "second_worker_started")


    def pytest_configure(config):
        threading.Thread(target=_STOP.wait, daemon=True, name="keeper").start()
        if os.environ.get("RT_TEST_WORKER") == "2":
            open(STARTED, "w").close()


    def pytest_collection_modifyitems(items):
        items.reverse()


    @pytest.fixture(autouse=True)
    def second_worker_takes_turns_too():
        deadline = time.monotonic() + 120
        while os.environ.get("RT_TEST_WORKER") == "1" and not os.path.exists(STARTED):
            assert time.monotonic() < deadline, "the second worker never started"
            time.sleep(0.05)
    """,
    **{
        f"test_{name}.py": """
        import os

        import pytest


        @pytest.mark.parametrize("n", [1, 2], ids=[f"p{os.getpid()}", "two"])
        def test_p(n):
            pass


        def test_plain():
            pass
        """
        for name in "abcd"
    },
}


def test_a_worker_that_collected_other_tests_reports_one_line(tmp_path: Path) -> None:
    """A ``--parallel`` worker handed a turn of tests its own collection lacks (pytest-xdist's "Different
    tests were collected between gw0 and gw1") ended with a RuntimeError's traceback and "the worker process
    crashed"; now the turn is one error of its file, in one line, and the worker takes its next turns."""
    root = write_files(tmp_path, _DIFFERENT_COLLECTIONS)
    result = run_cli("test", "--parallel=2", "-p", "no:randomly", cwd=root, timeout=300)
    assert "Traceback" not in result.output
    assert "crashed" not in result.output
    assert "CollectionMismatch" not in result.output
    assert "rt_testrunner" not in result.output
    lines = [line for line in result.output.splitlines() if "different tests were collected" in line]
    assert lines, result.output
    assert all(line.startswith("error: ") and "is not among them" in line for line in lines)
    assert result.code == 1
    assert f" {len(lines)} error" in result.stderr
    # every turn ran or is one of those errors: each file's 3 tests, or none of them
    passed = int(result.stderr.split(" pass")[0].split()[-1])
    assert passed % 3 == 0
    assert passed + 3 * len(lines) == 12


def test_skips_rt_raises_are_pytest_skip_exception(tmp_path: Path) -> None:
    """Where a skip comes from rt itself (``config.getoption(name, skip=True)`` of a missing option, a
    ``skip``/``skipif`` mark, an empty parameter set, a unittest skip) it is ``pytest.skip.Exception`` when
    the suite imports pytest, as pytest raises it: a test catching it with ``pytest.raises`` and a
    ``pytest_runtest_makereport`` hook checking ``call.excinfo.type`` or ``errisinstance`` saw rt's own
    ``SkipTest`` (the test failed; the hook saw ``False``). pytest 9.2: 1 passed, 5 skipped, ``True True``
    for each skip."""
    root = write_files(
        tmp_path,
        {
            "conftest.py": """
    import os

    import pytest

    HERE = os.path.dirname(__file__)


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        if call.excinfo is not None:
            with open(os.path.join(HERE, "seen.txt"), "a") as out:
                same = call.excinfo.type is pytest.skip.Exception
                caught = call.excinfo.errisinstance(pytest.skip.Exception)
                out.write(f"{item.name} {call.when} {same} {caught} {outcome.get_result().outcome}\\n")
            """,
            "test_skips.py": """
    import unittest

    import pytest


    def test_getoption(pytestconfig):
        with pytest.raises(pytest.skip.Exception) as excinfo:
            pytestconfig.getoption("--no-such-option", skip=True)
        assert excinfo.type is pytest.skip.Exception
        assert str(excinfo.value) == "no '--no-such-option' option found"


    def test_getoption_skips(pytestconfig):
        pytestconfig.getoption("no_such_dest", skip=True)


    @pytest.mark.skip(reason="marked")
    def test_marked():
        pass


    @pytest.mark.skipif(True, reason="condition")
    def test_condition():
        pass


    @pytest.mark.parametrize("n", [])
    def test_empty(n):
        pass


    class TestCase(unittest.TestCase):
        @unittest.skip("unittest's")
        def test_unittest(self):
            pass
            """,
        },
    )
    seen = root / "seen.txt"
    by_pytest = run_pytest(cwd=root, timeout=180)
    assert "1 passed, 5 skipped" in by_pytest.stdout
    expected = sorted(seen.read_text().splitlines())
    assert len(expected) == 5
    assert all(" True True skipped" in line for line in expected)
    seen.unlink()
    result = run_cli("test", cwd=root, timeout=180)
    assert result.code == 0, result.output
    assert " 1 pass" in result.stderr
    assert " 5 skip" in result.stderr
    assert sorted(seen.read_text().splitlines()) == expected


def test_a_write_after_seek_overwrites_as_in_pytests_capture_file(tmp_path: Path) -> None:
    """pytest's captured ``sys.stdout`` is a file (its fd capture's temporary file; ``capsys``'s
    ``CaptureIO``): a write after ``seek(0)`` overwrites, ``tell`` follows the writes, ``truncate`` cuts
    (pyexcel writes a CSV to ``sys.stdout`` and seeks back). rt appended the write (``'hello worldHELLO'``),
    refused ``truncate`` (``io.UnsupportedOperation``) and sought in the test's output under ``capsys``, not
    in what the fixture took. pytest 9.2: 4 passed, 1 failed, its captured stdout ``HELLO there``."""
    root = write_files(
        tmp_path,
        {
            "test_seek.py": """
    import sys


    def test_overwrite(capsys):
        sys.stdout.write("hello world")
        sys.stdout.seek(0)
        sys.stdout.write("HELLO")
        out, err = capsys.readouterr()
        assert out == "HELLO world", repr(out)


    def test_truncate(capsys):
        sys.stdout.write("abcdef")
        sys.stdout.seek(2)
        sys.stdout.truncate()
        sys.stdout.write("XY")
        assert sys.stdout.tell() == 4
        out, err = capsys.readouterr()
        assert out == "abXY", repr(out)


    def test_seek_read_then_write():
        sys.stdout.write("one\\ntwo\\n")
        sys.stdout.seek(0)
        assert sys.stdout.read() == "one\\ntwo\\n"
        sys.stdout.write("three\\n")
        sys.stdout.seek(0)
        assert sys.stdout.read() == "one\\ntwo\\nthree\\n"


    def test_tell_after_readouterr(capsys):
        print("abc")
        capsys.readouterr()
        print("d")
        out, _ = capsys.readouterr()
        assert out == "d\\n"


    def test_overwrite_captured():
        sys.stdout.write("hello world\\n")
        sys.stdout.seek(0)
        sys.stdout.write("HELLO")
        assert sys.stdout.tell() == 5
        sys.stdout.seek(0)
        assert sys.stdout.read() == "HELLO world\\n"
        sys.stdout.seek(6)
        sys.stdout.truncate()
        sys.stdout.write("there\\n")
        sys.stdout.seek(0)
        assert sys.stdout.read() == "HELLO there\\n"
        raise AssertionError("shows the captured output")
    """
        },
    )
    by_pytest = run_pytest("-p", "no:randomly", cwd=root, timeout=180)
    assert "1 failed, 4 passed" in by_pytest.stdout
    assert "Captured stdout call -----------------------------\nHELLO there\n" in by_pytest.stdout
    for capture in ("fd", "sys"):
        result = run_cli("test", "-p", "no:randomly", f"--capture={capture}", cwd=root, timeout=180)
        assert " 4 pass" in result.stderr, result.output
        assert " 1 fail" in result.stderr
        assert "----- Captured stdout call -----\nHELLO there\n" in result.output


def test_a_tell_at_the_end_of_the_captured_output_keeps_it_a_file(tmp_path: Path) -> None:
    """``tell()`` follows the writes after it, a write from before the end that reaches it goes on
    appending, and ``truncate(size)`` keeps the stream where it was (the next write leaves a gap of NULs),
    as in pytest's capture file, captured and under ``capsys``. pytest 9.2: 3 passed."""
    root = write_files(
        tmp_path,
        {
            "test_tell.py": """
    import sys


    def test_tell_then_writes():
        sys.stdout.write("ab")
        assert sys.stdout.tell() == 2
        sys.stdout.write("cd")
        assert sys.stdout.tell() == 4
        sys.stdout.seek(1)
        sys.stdout.write("XYZW")
        assert sys.stdout.tell() == 5
        sys.stdout.write("e")
        sys.stdout.seek(0)
        assert sys.stdout.read() == "aXYZWe"
        sys.stdout.write("f")
        assert sys.stdout.tell() == 7


    def test_truncate_at_the_end():
        sys.stdout.write("abcdef")
        sys.stdout.truncate(2)
        sys.stdout.write("X")
        sys.stdout.seek(0)
        got = sys.stdout.read()
        assert got == "ab\\0\\0\\0\\0X", repr(got)


    def test_under_capsys(capsys):
        sys.stdout.write("ab")
        assert sys.stdout.tell() == 2
        sys.stdout.write("cd")
        sys.stdout.seek(1)
        sys.stdout.write("XYZW")
        sys.stdout.write("e")
        assert sys.stdout.tell() == 6
        sys.stdout.seek(0)
        assert sys.stdout.read() == "aXYZWe"
        assert capsys.readouterr().out == "aXYZWe"
    """
        },
    )
    by_pytest = run_pytest("-p", "no:randomly", cwd=root, timeout=180)
    assert "3 passed" in by_pytest.stdout, by_pytest.stdout
    for capture in ("fd", "sys"):
        result = run_cli("test", "-p", "no:randomly", f"--capture={capture}", cwd=root, timeout=180)
        assert result.code == 0, result.output
        assert " 3 pass" in result.stderr


def test_a_tell_at_the_end_leaves_the_capture_appending() -> None:
    """``tell()`` is ``seek(0, 1)``; a position stored at the end made every later write re-join the
    phase's whole output (30,000 prints after one ``tell()``: 17 s, pytest 0.08 s). At the end a stream
    keeps no position and a write appends a piece; a write after ``seek(0)`` that reaches the end appends
    again. The same for ``capsys``'s streams."""
    from rt_testrunner.builtin_fixtures import CaptureFixture
    from rt_testrunner.capture import Capture

    test = Capture()
    test.add("out", "abc")
    assert test.seek("out", 0, 1) == 3
    assert test.positions == {}
    test.add("out", "def")
    assert test.out == ["abc", "def"]
    assert test.seek("out", 0, 1) == 6
    test.seek("out", 0, 0)
    assert test.positions == {"out": 0}
    test.add("out", "ABC")
    assert test.positions == {"out": 3}
    test.add("out", "DEF")
    assert test.positions == {}
    test.add("out", "g")
    assert "".join(test.out) == "ABCDEFg"
    assert test.seek("out", 0, 1) == 7

    fixture = CaptureFixture()
    fixture.write("out", "abc")
    assert fixture.seek("out", 0, 1) == 3
    fixture.write("out", "def")
    assert fixture.seek("out", -2, 1) == 4
    fixture.write("out", "EF")
    fixture.write("out", "g")
    assert fixture.seek("out", 0, 1) == 7
    assert fixture._positions == {}
    assert "".join(fixture._taken["out"]) == "abcdEFg"


def test_writes_over_the_captured_output_cost_what_they_write() -> None:
    """After a ``seek`` back, each write over the captured output joined the phase's whole output again and
    cut it anew (O(output) per write: a test writing a file's lines over 1 MB of output after ``seek(0)``
    copied it once per line). The first write splits the text at the position once; the later ones append
    and move past as much of the rest, which is never copied again (the same text object) until something
    reads the output. The same for ``capsys``'s streams; the text is what a file would hold."""
    import io

    from rt_testrunner.builtin_fixtures import CaptureFixture
    from rt_testrunner.capture import Capture

    lines = [f"line {n:05}\n" for n in range(2000)]
    writes = [f"LINE {n:05}!\n" for n in range(1000)]
    expected = io.StringIO()
    expected.write("".join(lines))
    expected.seek(0)
    expected.write("".join(writes))
    overwritten = expected.getvalue()

    test = Capture()
    for line in lines:
        test.add("out", line)
    test.seek("out", 0, 0)
    test.add("out", writes[0])
    rest = test.tails["out"][0]
    for number, text in enumerate(writes[1:], 2):
        test.add("out", text)
        assert test.tails["out"][0] is rest  # not joined again
        assert len(test.out) == number  # a piece per write (nothing was before the place of the first)
    assert test.seek("out", 0, 1) == sum(map(len, writes))
    assert test.phase_output()[0] == overwritten
    test.add("out", "x")  # read, the stream is still where the writes left it: over the next character
    expected.write("x")
    assert test.phase_output()[0] == expected.getvalue()

    fixture = CaptureFixture()
    for line in lines:
        fixture.write("out", line)
    fixture.seek("out", 0, 0)
    fixture.write("out", writes[0])
    rest = fixture._tails["out"][0]
    for text in writes[1:]:
        fixture.write("out", text)
        assert fixture._tails["out"][0] is rest
    assert fixture.readouterr().out == overwritten


def test_many_writes_over_the_captured_output_give_what_pytests_file_holds(tmp_path: Path) -> None:
    """The end-to-end side: 1,500 lines written over 3,000 after ``seek(0)``, captured and under ``capsys``,
    read back as a file holds them (``tell()`` after each where the writes left it), splitting the output
    once whatever rt's capture. The project counts the joins and splits rt's capture_file makes (none under
    pytest, whose capture is its own): under the default ``--capture=fd`` each write joined the output back
    first, to take what reached the descriptors (nothing, mostly), then split it again (review p29: 5,000
    writes over 2 MB, 0.45 s, pytest 0.02 s); under ``capsys`` each ``tell()`` joined it (review p28:
    12,000 over 200 kB, 0.6 s). pytest 9.2: 2 passed; rt the same with ``--capture=fd`` and
    ``--capture=sys``."""
    root = write_files(
        tmp_path,
        {
            "test_over.py": """
    import io
    import sys

    import pytest
    from rt_testrunner import capture_file

    LINES = [f"line {n:05}\\n" for n in range(3000)]
    WRITES = [f"LINE {n:05}!\\n" for n in range(1500)]


    @pytest.fixture
    def joins(monkeypatch):
        counted = []
        write_at, settle = capture_file.write_at, capture_file.settle

        def counting_write_at(pieces, start, position, written, tail):
            if tail is None:
                counted.append("split")
            return write_at(pieces, start, position, written, tail)

        def counting_settle(pieces, tail):
            if tail is not None:
                counted.append("join")
            settle(pieces, tail)

        monkeypatch.setattr(capture_file, "write_at", counting_write_at)
        monkeypatch.setattr(capture_file, "settle", counting_settle)
        return counted


    def expected():
        file = io.StringIO()
        file.write("".join(LINES))
        file.seek(0)
        file.write("".join(WRITES))
        return file.getvalue()


    def write_over(joins):
        for line in LINES:
            sys.stdout.write(line)
        sys.stdout.seek(0)
        for number, line in enumerate(WRITES, 1):
            sys.stdout.write(line)
            assert sys.stdout.tell() == number * len(line)
        assert len(joins) <= 1, joins[:4]


    def test_captured(joins):
        write_over(joins)
        sys.stdout.seek(0)
        assert sys.stdout.read() == expected()


    def test_under_capsys(capsys, joins):
        write_over(joins)
        assert capsys.readouterr().out == expected()
    """
        },
    )
    by_pytest = run_pytest("-p", "no:randomly", cwd=root, timeout=180)
    assert "2 passed" in by_pytest.stdout, by_pytest.output
    for capture in ("fd", "sys"):
        result = run_cli("test", "-p", "no:randomly", f"--capture={capture}", cwd=root, timeout=180)
        assert result.code == 0, result.output
        assert " 2 pass" in result.stderr


def test_capsys_writes_each_phase_into_a_file_of_its_own(tmp_path: Path) -> None:
    """pytest's ``capsys`` closes its ``CaptureIO`` after each phase (what the test did not read goes to the
    phase's section) and opens a new one: a ``seek(0)`` in the call is at the start of the call's file, not
    of what set-up printed. rt sought in everything the fixture took since the last ``readouterr()``, and,
    since session 17's writes over the output, cut that in the wrong place: the call's section was
    ``Zdefgh`` (before: no call section at all). pytest 9.2: 1 failed, 1 passed; the call's section
    ``XYZ``, the teardown's ``td``; ``readouterr()`` still gives set-up's output with the call's."""
    root = write_files(
        tmp_path,
        {
            "test_phases.py": """
    import sys

    import pytest


    @pytest.fixture
    def printed(capsys):
        print("abcdefgh")
        yield capsys
        sys.stdout.seek(0)
        sys.stdout.write("td")


    def test_written_over_in_the_call(printed):
        sys.stdout.seek(0)
        sys.stdout.write("XY")
        print(sys.stdout.tell(), file=sys.stderr)
        sys.stdout.write("Z")
        assert 0


    def test_the_call_has_a_file_of_its_own(printed):
        assert sys.stdout.tell() == 0
        sys.stdout.seek(0)
        assert sys.stdout.read() == ""
        sys.stdout.write("XY")
        assert sys.stdout.seek(0, 2) == 2
        sys.stdout.seek(1)
        sys.stdout.write("Q")
        sys.stdout.seek(0)
        assert sys.stdout.read() == "XQ"
        sys.stdout.write("1234")
        sys.stdout.truncate(3)
        assert sys.stdout.tell() == 6
        out, err = printed.readouterr()
        assert out == "abcdefgh\\nXQ1", repr(out)
        sys.stdout.write("after")
        sys.stdout.seek(2)
        sys.stdout.write("-")
        assert printed.readouterr().out == "af-er"
    """
        },
    )
    by_pytest = run_pytest("-p", "no:randomly", cwd=root, timeout=180)
    assert "1 failed, 1 passed" in by_pytest.stdout, by_pytest.output
    for section in ("stdout setup -+\nabcdefgh\n", "stdout call -+\nXYZ\n", "stdout teardown -+\ntd\n"):
        assert re.search(f"Captured {section}", by_pytest.stdout), section
    for capture in ("fd", "sys"):
        result = run_cli("test", "-p", "no:randomly", f"--capture={capture}", cwd=root, timeout=180)
        assert " 1 pass" in result.stderr, result.output
        assert " 1 fail" in result.stderr
        for section in ("stdout setup", "stdout call", "stdout teardown"):
            assert by_pytest.stdout.count(f"Captured {section} -") == 1, section
            assert result.output.count(f"Captured {section} -") == 1, section
        assert "----- Captured stdout call -----\nXYZ\n" in result.output
        assert "----- Captured stdout teardown -----\ntd\n" in result.output


_REPORTER_READS = """
import os

HERE = os.path.dirname(__file__)
SESSIONS = []


def pytest_sessionstart(session):
    SESSIONS.append(session)


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 5:  # the recipe for a run of no tests that should pass
        session.exitstatus = 0


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    session = terminalreporter._session
    with open(os.path.join(HERE, "reporter.txt"), "w") as out:
        out.write(
            f"{type(session).__name__} {session is SESSIONS[0]} {session.testscollected} "
            f"{session.testsfailed} {terminalreporter._numcollected} {int(exitstatus)}"
        )
    if os.environ.get("FORGIVE") and exitstatus == 1:
        terminalreporter._session.exitstatus = 0
"""


@pytest.mark.parametrize(
    ("tests", "forgive", "seen", "status"),
    [
        ("def test_a():\n    pass\n\n\ndef test_b():\n    assert 0\n", "", "Session True 2 1 2 1", 1),
        ("def test_a():\n    pass\n\n\ndef test_b():\n    assert 0\n", "1", "Session True 2 1 2 1", 0),
        ("def helper():\n    pass\n", "", "Session True 0 0 0 5", 0),
    ],
    ids=["failed", "summary_sets_status", "sessionfinish_sets_status"],
)
def test_terminalreporter_session_and_the_status_hooks_set(
    tmp_path: Path, tests: str, forgive: str, seen: str, status: int
) -> None:
    """pytest's terminal reporter holds the session from its ``pytest_sessionstart`` (``_session``) and the
    number of tests collected (``_numcollected``), which summary hooks read; a hook that sets
    ``session.exitstatus`` (``pytest_sessionfinish``: 5, no tests, made 0; a summary hook through
    ``terminalreporter._session``) sets the status pytest exits with, in one process and under
    ``--parallel`` (whose ending worker hands it over with its DONE). rt's reporter had ``_session`` None
    (an AttributeError in the hook) and ``_numcollected`` 0, and rt exited with its own status. pytest 9.2:
    ``seen`` and ``status``."""
    root = write_files(tmp_path, {"conftest.py": _REPORTER_READS, "test_it.py": tests})
    environ = {"FORGIVE": forgive}
    by_pytest = run_pytest("-p", "no:randomly", cwd=root, env=environ, timeout=180)
    assert (root / "reporter.txt").read_text() == seen
    assert by_pytest.code == status
    for parallel in ((), ("--parallel=2",)):  # under --parallel: the worker that ends the session decides
        (root / "reporter.txt").unlink()
        result = run_cli("test", "-p", "no:randomly", *parallel, cwd=root, env=environ, timeout=180)
        assert (root / "reporter.txt").read_text() == seen, result.output
        assert result.code == status, result.output
