"""``rt test`` against pytest 9 on capture, logging, warnings and assertion hooks (issue 15): each small
project is run by both, and the outcome counts (and where it matters the output) must agree.
"""

from __future__ import annotations

from pathlib import Path

from rt.testing import CliResult, counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def rt_test(cwd: Path, *args: str) -> CliResult:
    return run_cli("test", *args, cwd=cwd)


def same_counts(cwd: Path, *args: str) -> tuple[CliResult, CliResult]:
    """Run pytest and rt test with ``args`` on the project in ``cwd``; their counts must be equal."""
    pytest_run = run_pytest(*args, cwd=cwd)
    rt_run = rt_test(cwd, *args)
    expected = counts_from_pytest(pytest_run.stdout)
    assert expected, pytest_run.output
    assert summary_counts(rt_run.stderr) == expected, (pytest_run.output, rt_run.output)
    return pytest_run, rt_run


def test_records_of_a_logger_that_does_not_propagate_reach_caplog_and_the_report(tmp_path: Path) -> None:
    """pytest's logging plugin adds its handlers to every logger with ``propagate = False`` at each phase
    (uvicorn's access logger in a server thread: httpx's suite), so their records, from any thread, are in
    ``caplog`` and in the failing test's "Captured log" section."""
    write_files(
        tmp_path,
        {
            "test_quiet.py": """
            import logging, threading

            quiet = logging.getLogger("server.access")
            quiet.propagate = False
            quiet.addHandler(logging.NullHandler())

            def serve():
                quiet.warning("served one request")

            def in_thread():
                thread = threading.Thread(target=serve)
                thread.start()
                thread.join()

            def test_caplog_sees_it(caplog):
                in_thread()
                assert caplog.record_tuples == [("server.access", logging.WARNING, "served one request")]

            def test_the_report_shows_it():
                in_thread()
                assert False
            """
        },
    )
    pytest_run, rt_run = same_counts(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 1, "fail": 1}
    assert "server.access:test_quiet.py:9 served one request" in pytest_run.stdout
    assert "Captured log call" in rt_run.stderr
    assert "server.access:test_quiet.py:9 served one request" in rt_run.stderr, rt_run.output


def test_pytest_assertrepr_compare_of_conftest_files_explains_failed_comparisons(tmp_path: Path) -> None:
    """pytest calls ``pytest_assertrepr_compare(config, op, left, right)`` for each failed comparison of a
    rewritten assert, the deeper conftest.py first; the first non-empty answer is the explanation, and with
    none the built-in one is shown."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            def pytest_assertrepr_compare(config, op, left, right):
                if op == "==" and type(left).__name__ == "Point" and type(right).__name__ == "Point":
                    return ["Comparing Point instances:", f"   x: {left.x} != {right.x}", "two\\nlines"]
            """,
            "test_point.py": """
            class Point:
                def __init__(self, x):
                    self.x = x

                def __eq__(self, other):
                    return self.x == other.x

            def test_points():
                assert Point(1) == Point(2)

            def test_inside_and():
                assert 1 == 1 and Point(3) == Point(4)

            def test_others_keep_the_builtin_explanation():
                assert [1, 2] == [1, 3]
            """,
            "deeper/conftest.py": """
            def pytest_assertrepr_compare(op, left, right):
                if op == "<":
                    return ["deeper says: not less"]
            """,
            "deeper/test_deeper.py": """
            def test_less():
                assert 3 < 2
            """,
        },
    )
    pytest_run, rt_run = same_counts(tmp_path)
    assert summary_counts(rt_run.stderr) == {"fail": 4}
    for output in (pytest_run.stdout, rt_run.stderr):
        assert "Comparing Point instances:" in output
        assert "x: 1 != 2" in output
        assert "x: 3 != 4" in output
        assert "two\\nlines" in output
        assert "At index 1 diff: 2 != 3" in output
        assert "deeper says: not less" in output
