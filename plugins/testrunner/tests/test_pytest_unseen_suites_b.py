"""``rt test`` on mechanisms found missing while running unseen projects' suites from their PyPI sdists
(issue 15, session 8's sweep B): each test names the suite that showed it, runs pytest itself on the same
small project and compares the outcome counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def rt_test(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """``rt test`` in ``root``: the summary's counts and the whole output."""
    result = run_cli("test", *args, cwd=root, timeout=180)
    return summary_counts(result.stderr), result.output


def pytest_counts(root: Path, *args: str) -> dict[str, int]:
    """pytest's outcome counts in ``root``, in rt's words."""
    return counts_from_pytest(run_pytest(*args, cwd=root).stdout)


def test_captured_stdin_is_a_pseudo_file_without_a_descriptor(tmp_path: Path) -> None:
    """sh 2.4.0: ``sh.python(..., _in=sys.stdin)`` asks the stream for its ``fileno()`` and takes
    ``io.UnsupportedOperation`` for "no descriptor", as pytest's captured stdin raises; reading still raises
    OSError, and the stream says it is neither readable, seekable nor a terminal. pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            "test_stdin.py": """
            import io
            import sys

            import pytest

            def descriptor(stream):
                try:
                    return stream.fileno()
                except io.UnsupportedOperation:
                    return None

            def test_no_descriptor():
                assert descriptor(sys.stdin) is None

            def test_what_it_answers():
                assert (sys.stdin.readable(), sys.stdin.seekable(), sys.stdin.isatty()) == (False, False, False)
                for call in (sys.stdin.tell, sys.stdin.flush, lambda: sys.stdin.seek(0)):
                    with pytest.raises(io.UnsupportedOperation):
                        call()
                sys.stdin.close()
                assert not sys.stdin.closed

            def test_reading_still_fails():
                with pytest.raises(OSError, match="stdin"):
                    sys.stdin.read()
                with pytest.raises(OSError):
                    sys.stdin.readline()
            """,
        },
    )
    found, output = rt_test(tmp_path)
    assert found == pytest_counts(tmp_path) == {"pass": 3}, output
