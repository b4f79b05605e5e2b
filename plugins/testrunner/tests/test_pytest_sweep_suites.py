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


def test_ignore_ignore_glob_and_deselect_from_addopts_and_the_command_line(tmp_path: Path) -> None:
    """asttokens 3.0.2 and traitlets 5.16.1: their addopts leave a folder of test data out with pytest's
    ``--ignore=tests/testdata`` (files named ``*_test.py`` there fail to import); ``--ignore-glob`` leaves out
    the paths its pattern matches and ``--deselect`` the tests whose node id starts with a prefix (counted as
    deselected, not as outcomes). pytest takes them from the command line too, relative to where it runs.
    pytest 9.2: 2 passed (2 deselected), then 1 passed."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [tool.pytest.ini_options]
            addopts = ["--ignore=tests/testdata", "--ignore-glob=*_broken.py", "--deselect", "tests/test_a.py::test_two"]
            """,
            "tests/testdata/sample_test.py": "raise ImportError('test data, not a test')\n",
            "tests/test_x_broken.py": "raise ImportError('left out by the glob')\n",
            "tests/test_a.py": """
            import pytest


            def test_one():
                pass


            def test_two():
                raise AssertionError("deselected")


            @pytest.mark.parametrize("n", [1, 2])
            def test_param(n):
                assert n == 1
            """,
        },
    )
    args = ("--deselect", "tests/test_a.py::test_param[2]")
    expected, pytest_output = pytest_counts(tmp_path, *args)
    assert expected == {"pass": 2}, pytest_output
    found, output = rt_test(tmp_path, *args)
    assert found == expected, output
    assert "ignoring addopts" not in output
    args = ("--ignore", "tests/test_a.py", "--ignore=tests/testdata", "--deselect", "tests/test_a.py")
    (tmp_path / "tests" / "test_b.py").write_text("def test_b():\n    pass\n")
    expected, pytest_output = pytest_counts(tmp_path, *args)
    assert expected == {"pass": 1}, pytest_output
    found, output = rt_test(tmp_path, *args)
    assert found == expected, output


def test_rewritten_asserts_use_pytests_prefix_for_their_temporaries(tmp_path: Path) -> None:
    """executing 2.3.0: ``is_rewritten_by_pytest(code)`` tells a function whose asserts were rewritten by the
    names of its temporaries, which start with ``@py`` under pytest (no source can spell them); executing, and
    icecream and stack_data through it, then map the bytecode back to the source differently. rt's rewritten
    asserts use that prefix too. pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": "",
            "test_rewrite.py": """
            import dis
            import inspect


            def is_rewritten(code):
                return any(
                    op.opname != "LOAD_CONST" and isinstance(op.argval, str) and op.argval.startswith("@py")
                    for op in dis.get_instructions(code)
                )


            def test_an_assert_is_rewritten():
                assert is_rewritten(inspect.currentframe().f_code)


            def test_no_assert_no_rewrite():
                if is_rewritten(inspect.currentframe().f_code):
                    raise AssertionError("rewritten without an assert")
            """,
        },
    )
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 2}, pytest_output
    found, output = rt_test(tmp_path)
    assert found == expected, output


def test_getini_answers_pytests_own_options_with_their_types(tmp_path: Path) -> None:
    """traitlets 5.16.1 with pytest-mypy-testing installed: the plugin's ``pytest_collect_file`` adds to
    ``config.getini("python_files")`` (pytest's "args" option: a list, also when the configuration does not set
    it) and asks ``parent.session.isinitpath(file_path)``. pytest 9.2: 3 passed."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [tool.pytest.ini_options]
            python_classes = ["Check", "Test"]
            """,
            "conftest.py": """
            import fnmatch

            import pytest


            class MarkerItem(pytest.Item):
                def runtest(self):
                    config = self.config
                    assert config.getini("python_files") == ["test_*.py", "*_test.py"]
                    assert config.getini("python_classes") == ["Check", "Test"]
                    assert config.getini("python_functions") == ["test"]
                    assert config.getini("consider_namespace_packages") is False


            class MarkerFile(pytest.File):
                def collect(self):
                    yield MarkerItem.from_parent(self, name="marked")


            def pytest_collect_file(file_path, parent):
                patterns = parent.config.getini("python_files") + ["__init__.py"]
                if file_path.suffix == ".py" and (
                    parent.session.isinitpath(file_path)
                    or any(fnmatch.fnmatch(file_path.name, pattern) for pattern in patterns)
                ):
                    if "MARKED" in file_path.read_text():
                        return MarkerFile.from_parent(parent, path=file_path)
            """,
            "test_marked.py": """
            # MARKED
            def test_plain():
                pass


            class CheckThis:
                def test_method(self):
                    pass
            """,
        },
    )
    expected, pytest_output = pytest_counts(tmp_path)
    assert expected == {"pass": 3}, pytest_output
    found, output = rt_test(tmp_path)
    assert found == expected, output
