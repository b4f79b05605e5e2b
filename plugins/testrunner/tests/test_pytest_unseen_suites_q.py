"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 14, sweep Q: developer tools, markdown and template engines, databases and ORMs on SQLite): each test
names the suite that showed it, runs pytest itself on the same small project and compares the outcome counts,
so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files


def test_importlib_mode_leaves_sys_path_as_it_is(tmp_path: Path) -> None:
    """validate-pyproject 0.27 (``--import-mode importlib --doctest-modules`` in addopts, ``testpaths = src
    tests``): rt put ``src`` first on ``sys.path`` to import the library's modules for their doctests, as
    pytest's default mode does; the sdist's ``src/validate_pyproject.egg-info`` then came before the installed
    distribution's metadata, ``importlib.metadata.files()`` named a ``src/LICENSE.txt`` the sdist lacks, and
    133 more tests failed than under pytest, which in importlib mode imports each file from where it is and
    never changes ``sys.path``. Here the library's package (not importable from ``sys.path``) is imported
    from its own folder with its submodule, a test package's relative import still works, and neither folder
    is put on the path. pytest 9.2: 5 passed."""
    write_files(
        tmp_path,
        {
            "pytest.ini": (
                "[pytest]\naddopts = --import-mode=importlib --doctest-modules\ntestpaths = src tests\n"
            ),
            "src/mylib/__init__.py": '''
                """The library.

                >>> VALUE
                2
                """
                VALUE = 2
            ''',
            "src/mylib/core.py": '''
                from mylib import VALUE


                def double():
                    """
                    >>> double()
                    4
                    """
                    return 2 * VALUE
            ''',
            "tests/test_paths.py": """
                import os
                import sys

                ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


                def test_src_is_not_on_the_path():
                    assert os.path.join(ROOT, "src") not in sys.path


                def test_the_tests_folder_is_not_on_the_path():
                    assert os.path.join(ROOT, "tests") not in sys.path
            """,
            "tests/pkg/__init__.py": "",
            "tests/pkg/helpers.py": "ANSWER = 42\n",
            "tests/pkg/test_relative.py": """
                from .helpers import ANSWER


                def test_relative_import():
                    assert ANSWER == 42
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "5 passed" in pytest_run.output, pytest_run.output
