"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 14, sweep Q: developer tools, markdown and template engines, databases and ORMs on SQLite): each test
names the suite that showed it, runs pytest itself on the same small project and compares the outcome counts,
so a difference in either runner shows."""

from __future__ import annotations

from pathlib import Path

from rt.testing import run_cli, run_pytest, same_counts_as_pytest, summary_counts, write_files


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


def test_a_reports_traceback_holds_the_suites_frames_not_the_runners(tmp_path: Path) -> None:
    """sqlalchemy-utils 0.43.0 (215 set-up errors: its fixtures need PostgreSQL and MySQL servers): rt's
    ``TestReport`` of each error rendered the exception's whole traceback, rt's own long modules between the
    test and its fixture included, whose sources pytest's renderer reads and parses entry by entry: 200 ms a
    report, the run 2.5 times pytest's. pytest cuts its own frames from a report's traceback, and rt now
    cuts its own: ``report.longreprtext`` shows the conftest.py's fixture and the suite's helper under both,
    no runner's module. pytest 9.2: 1 passed, 1 failed, 1 error."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "helper.py": """
                def connect():
                    raise ConnectionError("no server here")
            """,
            "conftest.py": """
                import pytest

                import helper


                @pytest.fixture
                def engine():
                    return helper.connect()


                def pytest_runtest_logreport(report):
                    if report.failed:
                        with open("reports.txt", "a") as reports:
                            reports.write(report.longreprtext + "\\n")
            """,
            "test_db.py": """
                import helper


                def test_query(engine):
                    pass


                def test_connect():
                    helper.connect()


                def test_passes():
                    pass
            """,
        },
    )
    reports = tmp_path / "reports.txt"
    texts = []
    for run in (lambda: run_pytest(cwd=tmp_path), lambda: run_cli("test", cwd=tmp_path)):
        reports.unlink(missing_ok=True)
        result = run()
        texts.append(reports.read_text())
        assert texts[-1].count("ConnectionError: no server here") == 2, (result.output, texts[-1])
    for text in texts:
        assert "helper.py" in text and "conftest.py" in text, texts
        assert "rt_testrunner" not in text and "_pytest" not in text, texts
    same_counts_as_pytest(tmp_path)


def test_config_and_items_keep_pytests_older_name_of_the_stash(tmp_path: Path) -> None:
    """black 26.10.1: its tests/optional.py (a ``pytest_plugins`` module of its tests/conftest.py) keeps the
    optional markers in ``config._store`` from ``pytest_configure`` and skips the tests marked with a
    disabled one from ``pytest_collection_modifyitems``. rt's config had no ``_store``, pytest's older name
    of ``config.stash`` that it still keeps (items have it too), and the ``AttributeError`` went unseen (see
    the next test): its 2 ``no_jupyter`` tests ran and failed where pytest skips them. pytest 9.2: 1 passed,
    1 skipped."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nmarkers =\n    optional: run on request\n",
            "tests/__init__.py": "",
            "tests/conftest.py": 'pytest_plugins = ["tests.optional"]\n',
            "tests/optional.py": """
                import pytest

                ENABLED = pytest.StashKey[frozenset]()
                SEEN = pytest.StashKey[bool]()


                def pytest_configure(config):
                    config._store[ENABLED] = frozenset()


                def pytest_collection_modifyitems(config, items):
                    enabled = config.stash[ENABLED]
                    for item in items:
                        item._store[SEEN] = True
                        if item.get_closest_marker("optional") and "optional" not in enabled:
                            item.add_marker(pytest.mark.skip(reason="optional"))


                def pytest_runtest_setup(item):
                    assert item.stash[SEEN]
            """,
            "tests/test_marked.py": """
                import pytest


                @pytest.mark.optional
                def test_optional():
                    raise AssertionError("runs only on request")


                def test_always():
                    pass
            """,
        },
    )
    pytest_run, _ = same_counts_as_pytest(tmp_path)
    assert "1 passed, 1 skipped" in pytest_run.output, pytest_run.output


def test_a_listed_plugin_whose_configure_fails_is_no_silent_success(tmp_path: Path) -> None:
    """black 26.10.1 again: the ``AttributeError`` its ``pytest_plugins`` module raised in ``pytest_configure``
    was lost. rt loads the initial tests/conftest.py at start-up and, when it fails, again when its first
    file is collected, to report the error there; the plugin it names had been noted as loaded the first
    time, so the second load skipped it and the run went on green. pytest stops with an INTERNALERROR
    (status 3); rt reports the error as its collection error of that folder, as for the conftest.py's own
    ``pytest_configure``, and runs no test there."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "tests/__init__.py": "",
            "tests/conftest.py": 'pytest_plugins = ["tests.plug"]\n',
            "tests/plug.py": """
                def pytest_configure(config):
                    raise RuntimeError("boom in configure")
            """,
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    pytest_run = run_pytest(cwd=tmp_path)
    assert pytest_run.code == 3 and "boom in configure" in pytest_run.output, pytest_run.output
    rt_run = run_cli("test", cwd=tmp_path)
    assert rt_run.code != 0 and "boom in configure" in rt_run.output, rt_run.output
    assert summary_counts(rt_run.stderr) == {"error": 1}, rt_run.output
