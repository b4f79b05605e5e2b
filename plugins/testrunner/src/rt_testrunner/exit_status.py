"""The exit status of ``rt test``: the reference runtime's for the spec's tests, pytest's for a pytest suite.

The reference runtime exits 0 when every test passed and 1 otherwise (a failed test, a file that failed to
load, nothing to run). A pytest suite's CI reads pytest's statuses, which tell more apart: 1 tests failed,
2 the run was interrupted (``KeyboardInterrupt`` in a test, ``pytest.exit()``, errors during collection),
5 no tests were collected (none at all, or none left by ``-k``/``-m``), and ``pytest.exit(msg, returncode=N)``
exits N (a test module calling it at import is a collection error: 2, as pytest's).

Which rule applies is drawn where the collection-error rule draws it (runner.py's ``_collection_failed``): a
run is a pytest suite's when the project has pytest configuration (``pytest.ini``, ``[tool.pytest.ini_options]``
...) or a conftest.py above a test file, or a test file is named by pytest's patterns only (``test_*.py``,
a doctest file). A project of the spec's patterns (``x_test.py``, ``x.test.py``) alone keeps 0 and 1.

pytest's 3 (internal error) and 4 (usage error) stay rt's: ``rt test``'s command line is rt's own (a bad flag
value exits 1, as the reference runtime; an unknown flag is the ``rt`` command line's error, 2), and a
conftest.py's session-wide hook that raises is reported as a collection error of the run (2), with its
traceback, where pytest prints ``INTERNALERROR`` and exits 3. pytest's 3 is rt's for an installed plugin's
start-up hook raising a warning the suite's filters make an error (the suite's configuration, not rt's
emulation: :meth:`rt_testrunner.pysession.PytestSession._call_plugins`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rt_testrunner.discovery import SUFFIXES, TestFile

OK = 0
TESTS_FAILED = 1
#: pytest's ``ExitCode.INTERRUPTED``
INTERRUPTED = 2
#: pytest's ``ExitCode.INTERNAL_ERROR``: a plugin's start-up hook raised a warning the filters make an error
INTERNAL_ERROR = 3
#: pytest's ``ExitCode.USAGE_ERROR``: an option no plugin registered, a value an option refuses
USAGE_ERROR = 4
#: pytest's ``ExitCode.NO_TESTS_COLLECTED``
NO_TESTS_COLLECTED = 5


def is_pytest_suite(pyconfig: Any, files: Sequence[TestFile]) -> bool:
    """The run is a pytest suite's: pytest configuration, a conftest.py above a test file (up to the rootdir,
    as they are loaded) or at the rootdir, or a test file that only pytest's patterns name."""
    if pyconfig.inifile is not None:
        return True
    if any(not test_file.path.name.endswith(SUFFIXES) for test_file in files):
        return True
    rootdir: Path = pyconfig.rootdir
    seen: set[Path] = set()
    for test_file in files:
        chain = [test_file.path.parent, *test_file.path.parent.parents]
        for folder in chain if rootdir in chain else chain[:1]:
            if folder in seen:
                break
            seen.add(folder)
            if (folder / "conftest.py").is_file():
                return True
            if folder == rootdir:
                break
    return (rootdir / "conftest.py").is_file()


def exit_status(
    *,
    failed: bool,
    tests: int,
    interrupted: bool,
    exit_code: int | None,
    pytest_suite: bool,
    pass_with_no_tests: bool = False,
) -> int:
    """The status to exit with. ``failed``: a test failed, a file failed to load, a coverage threshold was
    missed; ``tests``: how many tests ran (or were skipped); ``interrupted``: ``KeyboardInterrupt``,
    ``pytest.exit()`` or collection errors stopped the run; ``exit_code``: ``pytest.exit``'s ``returncode``."""
    if exit_code is not None:
        return exit_code
    if pytest_suite and interrupted:
        return INTERRUPTED
    if failed or interrupted:
        return TESTS_FAILED
    if tests == 0 and not pass_with_no_tests:
        return NO_TESTS_COLLECTED if pytest_suite else TESTS_FAILED
    return OK
