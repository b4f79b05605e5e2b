"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 13, sweep N: doctests, Hypothesis, unittest-heavy, warnings- and capture-heavy suites): each test
names the suite that showed it, runs pytest itself on the same small project and compares the outcome
counts, so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files

#: a ``src`` layout whose package is not installed: only importing one of its own modules (a doctest module
#: under ``--doctest-modules``) puts ``src`` on sys.path, as pytest's default import mode inserts a
#: package's base folder
SRC_LAYOUT_WITH_DOCTESTS = {
    "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
    "src/pkg/__init__.py": '''
        def answer():
            """
            >>> answer()
            42
            """
            return 42
    ''',
    "tests/test_answer.py": """
        from pkg import answer

        def test_answer():
            assert answer() == 42
    """,
}


def test_paths_on_the_command_line_are_collected_in_their_order(tmp_path: Path) -> None:
    """license-expression 30.4.4 (``--doctest-modules`` in its addopts, its package under ``src``, not
    installed): ``pytest tests src`` imports the test modules first, which cannot import the package yet,
    and then ``src``'s modules, which put ``src`` on sys.path: 4 collection errors. rt sorted every file by
    its path, imported ``src`` first, and ran the 188 tests. pytest 9.2: 1 error (the test module) and the
    doctest passing with ``tests src``, 2 passed with ``src tests``."""
    write_files(tmp_path, SRC_LAYOUT_WITH_DOCTESTS)
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "tests", "src")
    assert "No module named 'pkg'" in rt_run.output, rt_run.output
    same_counts_as_pytest(tmp_path, "src", "tests")
    # files named one by one keep their order too
    pytest_run, rt_run = same_counts_as_pytest(tmp_path, "tests/test_answer.py", "src/pkg/__init__.py")
    assert "No module named 'pkg'" in rt_run.output, rt_run.output
