"""``rt test`` on mechanisms found missing while running unseen projects' suites from their PyPI sdists
(issue 15, session 8, sweep A): each test names the suite that showed it, runs pytest itself on the same small
project and compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def rt_test(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """``rt test`` in ``root``: the summary's counts and the whole output."""
    result = run_cli("test", *args, cwd=root, timeout=180)
    return summary_counts(result.stderr), result.output


def pytest_counts(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """pytest's outcome counts in ``root``, in rt's words, and its output."""
    result = run_pytest(*args, cwd=root, timeout=180)
    return counts_from_pytest(result.stdout), result.output


def test_a_captured_stream_has_a_file_descriptor_as_under_pytest(tmp_path: Path) -> None:
    """humanfriendly 10.0: its tests capture their own output with the ``capturer`` package, which takes
    ``sys.stdout.fileno()`` and redirects that descriptor to a pseudo-terminal (``os.dup2``). pytest's default
    capture makes ``sys.stdout`` a temporary file, so the descriptor is real: what the test prints goes where
    the descriptor points, ``isatty()`` tells whether that is a terminal, and what is written to the
    descriptor is the test's captured output. pytest 9.2: 2 passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "conftest.py": "",
            "test_descriptors.py": """
            import os
            import pty
            import sys


            def test_redirects_its_stdout_descriptor():
                fd = sys.stdout.fileno()
                saved = os.dup(fd)
                read_end, write_end = os.pipe()
                os.dup2(write_end, fd)
                try:
                    print("into the pipe", flush=True)
                finally:
                    os.dup2(saved, fd)
                    os.close(saved)
                    os.close(write_end)
                with os.fdopen(read_end) as pipe:
                    assert pipe.read() == "into the pipe\\n"


            def test_a_terminal_behind_the_descriptor_makes_the_stream_one():
                fd = sys.stderr.fileno()
                assert not sys.stderr.isatty()
                primary, secondary = pty.openpty()
                saved = os.dup(fd)
                os.dup2(secondary, fd)
                try:
                    assert sys.stderr.isatty()
                finally:
                    os.dup2(saved, fd)
                    os.close(saved)
                    os.close(secondary)
                    os.close(primary)
                assert not sys.stderr.isatty()


            def test_what_the_descriptor_gets_is_the_tests_output():
                print("printed first")
                os.write(sys.stdout.fileno(), b"written to the descriptor\\n")
                print("printed last")
                raise AssertionError("shows the output")
            """,
        },
    )
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 2, "fail": 1}, pytest_output
    found, output = rt_test(tmp_path)
    assert found == expected, output
    assert "printed first\nwritten to the descriptor\nprinted last" in output
