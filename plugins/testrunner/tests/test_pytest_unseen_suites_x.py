"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 17, sweep X: scheduling and calendars, numbers and money, configuration and ML tooling): each test
names the suite that showed it, runs pytest itself on the same small project and compares the outcome counts,
so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files


def test_capsys_disabled_gives_the_descriptors_back_to_the_terminal(tmp_path: Path) -> None:
    """sacred 0.8.7: tests/test_stdout_capturing.py's ``test_fd_tee_output`` redirects descriptor 1 itself
    (a tee of the process's output) inside ``capsys.disabled()`` and expects what ``print``, C code and a
    subprocess write to reach its file. pytest suspends its descriptor capture there; rt kept descriptors 1 and
    2 on the test's file, so the redirect took that file and ``print`` went to the terminal past it (1 failed
    more than pytest). What a test wrote before and after stays its own output, shown with its failure.
    pytest 9.2: 2 passed, 1 failed."""
    write_files(
        tmp_path,
        {
            "test_disabled.py": """
            import os
            import subprocess
            import sys
            import tempfile


            def redirected_output(write):
                with tempfile.TemporaryFile() as file:
                    sys.stdout.flush()
                    saved = os.dup(1)
                    os.dup2(file.fileno(), 1)
                    try:
                        write()
                    finally:
                        sys.stdout.flush()
                        os.dup2(saved, 1)
                        os.close(saved)
                    file.seek(0)
                    return file.read().decode()


            def test_redirect_inside_disabled(capsys):
                def write():
                    # flushed: where stdout is a pipe (CI's tox env) print's buffer would reach the file
                    # after os.write's line, under pytest and rt alike
                    print("from print", flush=True)
                    os.write(1, b"from os.write\\n")
                    subprocess.run([sys.executable, "-c", "print('from a subprocess')"], check=True)

                with capsys.disabled():
                    output = redirected_output(write)
                assert output.splitlines() == ["from print", "from os.write", "from a subprocess"]


            def test_captured_again_after_disabled(capfd):
                with capfd.disabled():
                    pass
                os.write(1, b"after\\n")
                assert capfd.readouterr().out == "after\\n"


            def test_output_around_disabled_is_the_tests(capsys):
                os.write(1, b"before the pause\\n")
                with capsys.disabled():
                    pass
                os.write(1, b"after the pause\\n")
                assert False
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "-p", "no:randomly")
    assert "1 failed, 2 passed" in pytest_run.output, pytest_run.output
    assert "2 pass" in rt_run.output and "1 fail" in rt_run.output, rt_run.output
    for line in ("before the pause", "after the pause"):
        assert line in pytest_run.output, pytest_run.output
        assert line in rt_run.output, rt_run.output
