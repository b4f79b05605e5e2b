"""``rt test`` against pytest 9 on capture, logging, warnings and assertion hooks (issue 15): each small
project is run by both, and the outcome counts (and where it matters the output) must agree.
"""

from __future__ import annotations

from pathlib import Path

from rt.testing import (
    CliResult,
    run_cli,
    same_counts_as_pytest,
    summary_counts,
    write_files,
)


def rt_test(cwd: Path, *args: str) -> CliResult:
    return run_cli("test", *args, cwd=cwd)


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
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 1, "fail": 1}
    assert "server.access:test_quiet.py:9 served one request" in pytest_run.stdout
    assert "Captured log call" in rt_run.stderr
    assert "server.access:test_quiet.py:9 served one request" in rt_run.stderr, rt_run.output


def test_the_report_handler_on_a_logger_that_does_not_propagate_is_a_stream_handler(tmp_path: Path) -> None:
    """The handler pytest's logging plugin puts on such a logger for the test's report is its
    ``LogCaptureHandler``, a ``logging.StreamHandler`` over a text buffer; code under test that looks at its
    logger's handlers (``isinstance(h, logging.StreamHandler)``, ``h.stream``) found rt's a plain
    ``logging.Handler``, with no stream. pytest 9.2: 2 passed (with ``caplog``, its handler is one more)."""
    write_files(
        tmp_path,
        {
            "test_handlers.py": """
            import io
            import logging

            quiet = logging.getLogger("library.quiet")
            quiet.propagate = False


            def stream_handlers():
                return sorted(
                    type(handler).__name__
                    for handler in quiet.handlers
                    if isinstance(handler, logging.StreamHandler) and isinstance(handler.stream, io.StringIO)
                )


            def test_without_caplog():
                assert "LogCaptureHandler" in stream_handlers(), quiet.handlers


            def test_with_caplog(caplog):
                quiet.warning("seen")
                assert caplog.messages == ["seen"]
                assert len(stream_handlers()) >= 2, quiet.handlers
            """
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 2}, (pytest_run.output, rt_run.output)


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
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"fail": 4}
    for output in (pytest_run.stdout, rt_run.stderr):
        assert "Comparing Point instances:" in output
        assert "x: 1 != 2" in output
        assert "x: 3 != 4" in output
        assert "two\\nlines" in output
        assert "At index 1 diff: 2 != 3" in output
        assert "deeper says: not less" in output


UNRAISABLE = {
    "test_unraisable.py": """
    import threading

    import pytest

    class Broken:
        def __del__(self):
            raise ValueError("raised in __del__")

    def test_in_del():
        Broken()

    def test_in_a_thread():
        thread = threading.Thread(target=lambda: 1 / 0)
        thread.start()
        thread.join()

    def test_plain():
        pass

    @pytest.fixture
    def leaves_one():
        yield
        Broken()

    def test_in_teardown(leaves_one):
        pass

    def test_failed_then_del():
        Broken()
        assert False
    """
}


def test_unraisable_and_thread_exceptions_are_warnings_of_the_phase(tmp_path: Path) -> None:
    """pytest 9 keeps what reaches ``sys.unraisablehook`` and ``threading.excepthook`` and tells it at the end
    of the running phase as PytestUnraisableExceptionWarning / PytestUnhandledThreadExceptionWarning: with
    ``-W error`` a failed call, or an error in teardown (a failed call leaves its warning to the teardown)."""
    write_files(tmp_path, UNRAISABLE)
    same_counts_as_pytest(tmp_path)
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-W", "error")
    assert summary_counts(rt_run.stderr) == {"pass": 2, "fail": 3, "error": 2}, rt_run.output
    for output in (pytest_run.stdout, rt_run.stderr):
        assert "PytestUnraisableExceptionWarning: Exception ignored in" in output
        assert "PytestUnhandledThreadExceptionWarning: Exception in thread" in output
        assert "ValueError: raised in __del__" in output
    only_thread = rt_test(tmp_path, "-W", "error::pytest.PytestUnhandledThreadExceptionWarning")
    assert summary_counts(only_thread.stderr) == {"pass": 3, "fail": 2}, only_thread.output


def test_p_no_blocks_pytests_own_plugins(tmp_path: Path) -> None:
    """``-p no:logging`` on the command line takes pytest's logging plugin away (no ``caplog``: "fixture 'caplog' not found",
    records are not captured as log, a warning reaches stderr through logging's last resort);
    ``-p no:capture`` takes capsys and capture away; ``-p no:warnings`` the warnings plugin; on the command
    line as in ``addopts``."""
    write_files(
        tmp_path,
        {
            "test_blocked.py": """
            import logging, warnings

            def test_caplog(caplog):
                pass

            def test_capsys(capsys):
                pass

            def test_output():
                logging.getLogger("probe").warning("logged")
                print("printed")
                assert False

            def test_warning_filter():
                warnings.warn("w", UserWarning)
            """,
            "pyproject.toml": """
            [tool.pytest.ini_options]
            filterwarnings = ["error::UserWarning"]
            """,
        },
    )
    _, no_logging = same_counts_as_pytest(tmp_path, "-p", "no:logging")
    assert summary_counts(no_logging.stderr) == {"pass": 1, "fail": 2, "error": 1}
    assert "fixture 'caplog' not found" in no_logging.stderr
    assert "Captured log" not in no_logging.stderr
    assert "----- Captured stderr call -----\nlogged" in no_logging.stderr, no_logging.output
    _, no_capture = same_counts_as_pytest(tmp_path, "-p", "no:capture")
    assert "fixture 'capsys' not found" in no_capture.stderr
    assert "printed" in no_capture.stdout, no_capture.output
    _, no_warnings = same_counts_as_pytest(tmp_path, "-p", "no:warnings")
    assert summary_counts(no_warnings.stderr) == {"pass": 3, "fail": 1}
    # in addopts, pytest blocks its plugins after reading their fixtures: capsys is there, and fails
    write_files(tmp_path, {"pytest.ini": "[pytest]\naddopts = -p no:logging -p no:capture\n"})
    _, from_addopts = same_counts_as_pytest(tmp_path)
    assert summary_counts(from_addopts.stderr) == {"pass": 2, "fail": 1, "error": 1}
    assert "fixture 'caplog' not found" not in from_addopts.stderr
    assert "printed" in from_addopts.stdout, from_addopts.output


FD_OUTPUT = {
    "test_fd.py": """
    import os, subprocess, sys

    def child(text):
        subprocess.run([sys.executable, "-c", f"print({text!r})"], check=True)

    def test_passes_quietly():
        child("CHILD_OF_A_PASSING_TEST")
        os.write(2, b"FD2_OF_A_PASSING_TEST\\n")

    def test_fails():
        child("CHILD_OF_A_FAILING_TEST")
        os.write(2, b"FD2_OF_A_FAILING_TEST\\n")
        print("PRINTED_BY_A_FAILING_TEST")
        assert False

    def test_disabled(capsys):
        with capsys.disabled():
            print("SHOWN_WHILE_DISABLED")
        os.write(1, b"FD1_HIDDEN\\n")
    """
}


def test_fd_capture_takes_what_subprocesses_write(tmp_path: Path) -> None:
    """pytest's default ``--capture=fd``: what reaches descriptors 1 and 2 (a subprocess, ``os.write``) during
    a test is that test's output, shown only with its failure; ``--capture=sys`` leaves the descriptors to
    the terminal, ``tee-sys`` also shows what the tests print, ``-s``/``--capture=no`` captures nothing."""
    write_files(tmp_path, FD_OUTPUT)
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    for output, where in ((pytest_run.stdout, pytest_run.stdout), (rt_run.stderr, rt_run.output)):
        assert "CHILD_OF_A_PASSING_TEST" not in where
        assert "FD2_OF_A_PASSING_TEST" not in where
        assert "FD1_HIDDEN" not in where
        assert "SHOWN_WHILE_DISABLED" in where
        stdout_section = output.split("Captured stdout call")[1].split("Captured stderr call")[0]
        assert "CHILD_OF_A_FAILING_TEST" in stdout_section
        assert "PRINTED_BY_A_FAILING_TEST" in stdout_section
        assert "FD2_OF_A_FAILING_TEST" in output.split("Captured stderr call")[1]
    for method in ("sys", "tee-sys", "no"):
        _, rt_run = same_counts_as_pytest(tmp_path, f"--capture={method}")
        assert "CHILD_OF_A_PASSING_TEST" in rt_run.stdout, rt_run.output
        assert "FD2_OF_A_PASSING_TEST" in rt_run.stderr
        assert ("PRINTED_BY_A_FAILING_TEST" in rt_run.stdout) == (method != "sys")
    write_files(tmp_path, {"pytest.ini": "[pytest]\naddopts = --capture=sys\n"})
    _, from_addopts = same_counts_as_pytest(tmp_path)
    assert "CHILD_OF_A_PASSING_TEST" in from_addopts.stdout, from_addopts.output
    assert "CHILD_OF_A_PASSING_TEST" not in same_counts_as_pytest(tmp_path, "--capture=fd")[1].output


def test_capteesys_and_log_level_on_the_command_line(tmp_path: Path) -> None:
    """pytest 8.4's ``capteesys`` keeps what the test prints and passes it on to the test's captured output,
    shown on the terminal only with ``-s`` (see below); ``--log-level`` lowers the root
    logger and sets caplog's handler to the level for each test, as the ``log_level`` ini value does."""
    write_files(
        tmp_path,
        {
            "test_six.py": """
            import logging

            def test_handler_level(caplog):
                logging.getLogger("a").info("an info record")
                assert caplog.handler.records == caplog.records
                assert caplog.handler.level == 0

            def test_info_is_below_the_default_level(caplog):
                logging.getLogger("b").info("not kept")
                assert caplog.messages == []

            def test_tee(capteesys):
                print("SHOWN_AND_KEPT")
                assert capteesys.readouterr().out == "SHOWN_AND_KEPT\\n"
            """
        },
    )
    _, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 3}
    assert "SHOWN_AND_KEPT" not in rt_run.output
    _, at_info = same_counts_as_pytest(tmp_path, "--log-level=INFO")
    assert summary_counts(at_info.stderr) == {"pass": 1, "fail": 2}


def test_capsys_and_capfd_take_only_the_streams_of_their_own(tmp_path: Path) -> None:
    """pytest's ``capsys``/``capfd`` put stream objects of their own in ``sys.stdout``/``sys.stderr`` while
    they are set up: an object that kept the stream it saw before (cmd2's app, made by a fixture set up
    before ``capsys``) writes past them into the test's captured output (cmd2 4.3.1's
    ``test_argparser_kwargs``). What the fixture takes and the test never reads is shown with a failure,
    under the phase it was written in; what the test read is not; ``capteesys`` passes on what it takes to
    the test's captured output (on the terminal only with ``-s``)."""
    write_files(
        tmp_path,
        {
            "test_kept.py": """
            import sys
            import pytest

            class App:
                def __init__(self):
                    self.stdout = sys.stdout
                    self.stderr = sys.stderr

                def say(self, word):
                    self.stdout.write(word + "\\n")
                    self.stderr.write(word.upper() + "\\n")

            @pytest.fixture
            def app():
                return App()

            @pytest.fixture
            def noisy(capsys):
                print("setup" + "_printed")

            def test_kept_stream_misses_capsys(app, capsys):
                app.say("word")
                print("foo")
                assert capsys.readouterr() == ("foo\\n", "")

            def test_kept_stream_misses_capfd(app, capfd):
                app.say("word")
                print("foo")
                assert capfd.readouterr() == ("foo\\n", "")

            def test_kept_stream_misses_capsysbinary(app, capsysbinary):
                app.say("word")
                sys.stdout.buffer.write(b"raw")
                assert capsysbinary.readouterr() == (b"raw", b"")

            def test_setup_output_is_read_in_the_call(noisy, capsys):
                assert capsys.readouterr().out == "setup_printed\\n"

            def test_kept_stream_is_the_tests_output(app, capsys):
                app.say("kept" + "_by_the_app")
                assert False

            def test_unread_is_shown(noisy, capsys):
                print("unread" + "_in_call")
                assert False

            def test_read_is_not_shown(capsys):
                print("read" + "_by_the_test")
                capsys.readouterr()
                assert False

            def test_tee(capteesys):
                print("tee" + "_passed")
                assert capteesys.readouterr().out == "tee" + "_passed\\n"
                print("tee" + "_failed")
                assert False
            """
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 4, "fail": 4}
    for report in (pytest_run.stdout, rt_run.stderr):
        assert report.count("kept_by_the_app") == 1, report
        assert report.count("KEPT_BY_THE_APP") == 1
        assert "Captured stdout setup" in report.split("unread_in_call")[0].split("test_unread_is_shown")[-1]
        assert report.count("setup_printed") == 1
        assert report.count("unread_in_call") == 1
        assert "read_by_the_test" not in report
        assert report.count("tee_passed") == 1
        assert report.count("tee_failed") == 1
        assert "tee_passed" not in rt_run.stdout
    _, shown = same_counts_as_pytest(tmp_path, "-s", "-k", "tee")
    assert shown.stdout.count("tee_passed") == 1, shown.output


def test_logging_is_captured_without_the_capture_plugin(tmp_path: Path) -> None:
    """``-s`` and ``-p no:capture`` leave the streams to the terminal, but pytest's logging plugin still
    captures each test's records: a failure shows them under "Captured log call", and they do not reach the
    terminal through logging's last resort; ``caplog`` works."""
    write_files(
        tmp_path,
        {
            "test_logs.py": """
            import logging

            def test_output():
                logging.getLogger("probe").warning("logged" + "_warning")
                print("printed" + "_line")
                assert False

            def test_caplog(caplog):
                logging.getLogger("probe").warning("kept")
                assert caplog.messages == ["kept"]
            """
        },
    )
    for arguments in (("-s",), ("-p", "no:capture")):
        pytest_run, rt_run = same_counts_as_pytest(tmp_path, *arguments)
        assert summary_counts(rt_run.stderr) == {"pass": 1, "fail": 1}
        for report, output in ((pytest_run.stdout, pytest_run.output), (rt_run.stderr, rt_run.output)):
            log_section = report.split("Captured log call")[1]
            assert "WARNING  probe:test_logs.py:5 logged_warning" in log_section, output
            assert output.count("logged_warning") == 1
        assert "printed_line" in rt_run.stdout


def _section(report: str, title: str) -> list[str]:
    """The lines of a failure's ``Captured ...`` section, pytest's or rt's."""
    lines = report.split(title, 1)[1].splitlines()[1:]
    end = next(
        (i for i, line in enumerate(lines) if line.startswith(("---", "===", "(fail)", "(error)", "___"))),
        len(lines),
    )
    return lines[:end]


def test_printed_and_descriptor_output_keep_their_order(tmp_path: Path) -> None:
    """pytest's default ``--capture=fd`` writes ``sys.stdout`` to the file descriptor 1 points at, so a
    failure's captured output has what was printed and what reached the descriptor (``os.write``, a
    subprocess) in the order it was written, per phase; what ``capsys`` took and the test did not read comes
    last in its phase."""
    write_files(
        tmp_path,
        {
            "test_order.py": """
            import os, subprocess, sys
            import pytest

            @pytest.fixture
            def noisy(capsys):
                print("setup" + "_print")
                os.write(1, b"setup_fd\\n")
                yield
                print("teardown" + "_print")
                os.write(1, b"teardown_fd\\n")

            def test_with_capsys(noisy):
                print("call" + "_print")
                os.write(1, b"call_fd\\n")
                assert False

            def test_order():
                print("first" + "_print")
                os.write(1, b"second_fd\\n")
                print("third" + "_print")
                subprocess.run([sys.executable, "-c", "print('fourth_' + 'child')"], check=True)
                sys.stderr.write("err" + "_one\\n")
                os.write(2, b"err_two\\n")
                sys.stderr.write("err" + "_three\\n")
                assert False
            """
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    expected = {
        "Captured stdout setup": ["setup_fd", "setup_print"],
        "Captured stdout call": ["call_fd", "call_print"],
        "Captured stdout teardown": ["teardown_fd", "teardown_print"],
    }
    for title, lines in expected.items():
        assert _section(pytest_run.stdout.split("_ test_order _")[0], title) == lines, pytest_run.stdout
        assert _section(rt_run.stderr.split("(fail) test_with_capsys")[0], title) == lines, rt_run.stderr
    expected = {
        "Captured stdout call": ["first_print", "second_fd", "third_print", "fourth_child"],
        "Captured stderr call": ["err_one", "err_two", "err_three"],
    }
    for title, lines in expected.items():
        assert _section(pytest_run.stdout.split("_ test_order _")[1], title) == lines, pytest_run.stdout
        assert _section(rt_run.stderr.split("(fail) test_with_capsys")[1], title) == lines, rt_run.stderr


def test_module_and_session_teardowns_are_the_last_tests_teardown(tmp_path: Path) -> None:
    """pytest tears a module's and the session's fixtures down in the teardown phase of their last test: what
    they write is captured (never on the terminal), and a teardown that raises is an error at that test's
    teardown, shown with what it wrote, not a failed test of its own."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import os
            import pytest

            @pytest.fixture(scope="session")
            def server():
                yield
                print("session" + "_teardown_print")
                os.write(1, b"session" + b"_teardown_fd\\n")
                raise ValueError("session" + " boom")
            """,
            "test_a.py": """
            import pytest

            @pytest.fixture(scope="module")
            def database():
                yield
                print("module" + "_teardown_print")
                raise RuntimeError("module" + " boom")

            def test_one(database, server):
                pass

            def test_two(database):
                pass
            """,
            "test_b.py": """
            def test_three(server):
                pass
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 3, "error": 2}
    for report, output in ((pytest_run.stdout, pytest_run.output), (rt_run.stderr, rt_run.output)):
        assert output.count("module_teardown_print") == 1, output
        assert output.count("session_teardown_print") == 1
        assert output.count("session_teardown_fd") == 1
        module_error = report.split("module boom")[1]
        assert _section(module_error, "Captured stdout teardown") == ["module_teardown_print"], output
        session_error = report.split("session boom")[1]
        expected = ["session_teardown_print", "session_teardown_fd"]
        assert _section(session_error, "Captured stdout teardown") == expected, output
    assert "test_two [teardown]" in rt_run.stderr and "test_three [teardown]" in rt_run.stderr


def test_a_failing_last_tests_report_shows_what_its_scopes_teardown_wrote(tmp_path: Path) -> None:
    """pytest tears a class's and a module's fixtures down in the teardown phase of their last test, so when
    that test fails, what their teardown wrote is in its report (``Captured stdout teardown``, after the
    function fixtures' own teardown output, and ``Captured stderr teardown``); rt left it out when the
    teardown passed (it showed it only with a teardown that failed). pytest 9.2: 1 passed, 2 failed."""
    write_files(
        tmp_path,
        {
            "test_scopes.py": """
            import sys
            import pytest

            @pytest.fixture(scope="module")
            def database():
                yield 1
                print("module" + "_teardown_print")
                print("module" + "_teardown_err", file=sys.stderr)

            @pytest.fixture(scope="class")
            def table():
                yield 2
                print("class" + "_teardown_print")

            @pytest.fixture
            def row():
                yield 3
                print("function" + "_teardown_print")

            def test_first(database):
                pass

            class TestTable:
                def test_in_class(self, table, database):
                    print("in" + "_class")
                    assert table == 0

            def test_last(database, row):
                assert database == 0
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    for report in (pytest_run.stdout, rt_run.stderr):
        in_class = report.split("test_last")[0]
        assert _section(in_class, "Captured stdout call") == ["in_class"], report
        assert _section(in_class, "Captured stdout teardown") == ["class_teardown_print"], report
        last = report.split("assert database == 0")[1]
        expected = ["function_teardown_print", "module_teardown_print"]
        assert _section(last, "Captured stdout teardown") == expected, report
        assert _section(last, "Captured stderr teardown") == ["module_teardown_err"], report


def test_a_failing_last_tests_report_shows_the_package_and_session_teardown(tmp_path: Path) -> None:
    """pytest tears the package's and the session's fixtures down in the teardown phase of the run's last
    test too: when it fails, what their teardown wrote is in its report after the module's, package before
    session. rt tore them down after the last file had ended, and the report had the module's lines alone.
    pytest 9.2: 1 passed, 1 failed; ``Captured stdout teardown``: module, package, session lines."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest

            @pytest.fixture(scope="session")
            def server():
                yield
                print("session" + "_teardown_print")
            """,
            "pkg/__init__.py": "",
            "pkg/conftest.py": """
            import sys
            import pytest

            @pytest.fixture(scope="package")
            def catalog():
                yield
                print("package" + "_teardown_print")
                print("package" + "_teardown_err", file=sys.stderr)
            """,
            "pkg/test_last.py": """
            import pytest

            @pytest.fixture(scope="module")
            def database():
                yield
                print("module" + "_teardown_print")

            def test_first(server, catalog):
                pass

            def test_last(database, catalog, server):
                assert False
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    for report, output in ((pytest_run.stdout, pytest_run.output), (rt_run.stderr, rt_run.output)):
        expected = ["module_teardown_print", "package_teardown_print", "session_teardown_print"]
        assert _section(report, "Captured stdout teardown") == expected, output
        assert _section(report, "Captured stderr teardown") == ["package_teardown_err"], output
        assert output.count("session_teardown_print") == 1, output


def test_a_stream_a_test_leaves_in_sys_stdout_does_not_outlive_it(tmp_path: Path) -> None:
    """pytest's global capture sets ``sys.stdout``/``sys.stderr`` again at each phase's start and end, so a
    stream a test leaves there is gone for the next test: structlog 24.4.0's test sets ``sys.stdout`` with
    monkeypatch (set up before capsys, so its undo puts back capsys's stream after capsys ended), and its
    later tests compare ``sys.stdout.buffer`` with the one seen at import."""
    write_files(
        tmp_path,
        {
            "test_left.py": """
            import sys
            from io import StringIO

            SEEN_AT_IMPORT = sys.stdout

            def test_replaces(monkeypatch, capsys):
                monkeypatch.setattr(sys, "stdout", StringIO())
                print("into the replacement")
                assert capsys.readouterr().out == ""

            def test_left_nothing_behind():
                assert sys.stdout is SEEN_AT_IMPORT
                assert sys.stdout.buffer is SEEN_AT_IMPORT.buffer
            """
        },
    )
    _, rt_run = same_counts_as_pytest(tmp_path)
    assert summary_counts(rt_run.stderr) == {"pass": 2}
