"""``rt test``'s "warnings summary" for a pytest suite (issue 15, session 12): pytest lists each warning its
run recorded, grouped by text, under the node ids (or the ``file:line`` of a collection warning) that raised
it; rt printed only the count. Each test runs pytest 9.2 and ``rt test`` on one small project and compares
the section's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

_WARNS = {
    "test_import.py": """
    import warnings

    warnings.warn("at import", RuntimeWarning)


    def test_plain():
        pass
    """,
    "test_warns.py": """
    import warnings

    import pytest


    def helper():
        warnings.warn("old api", DeprecationWarning)


    def test_a():
        helper()


    def test_b():
        helper()


    @pytest.mark.parametrize("x", [1, 2])
    def test_param(x):
        warnings.warn(UserWarning(f"user {x}"))


    def test_twice():
        warnings.warn("plain")
        warnings.warn("plain")


    @pytest.mark.parametrize("n", range(12))
    def test_many(n):
        warnings.warn("the same, many times", FutureWarning)
    """,
}


def section(output: str) -> str:
    """The "warnings summary" section of a run's output, from its title line to pytest's docs line."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if " warnings summary " in line]
    if not starts:
        return ""
    end = next(i for i in range(starts[0], len(lines)) if lines[i].startswith("-- Docs:"))
    return "\n".join(lines[starts[0] : end + 1])


@pytest.mark.parametrize("args", [(), ("--parallel", "2")], ids=["one process", "parallel"])
def test_the_warnings_summary_lists_each_warning_as_pytests_does(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """The section pytest prints: a warning raised at a module's import under ``file:line``, each text once
    under the node ids that raised it (one entry per text, in the order first raised: the text names the
    line, so one test warning from two lines is two entries), ten or more node ids for one text as ``file: N warnings``,
    each text indented as ``warnings.formatwarning`` writes it; then pytest's docs line. rt printed only
    "19 warnings". Under ``--parallel`` the same section (the collection's warnings once)."""
    write_files(tmp_path, _WARNS)
    expected = section(run_pytest(cwd=tmp_path).stdout)
    assert "test_import.py:4\n  " in expected and "test_warns.py: 12 warnings" in expected, expected
    assert "test_warns.py::test_a\ntest_warns.py::test_b\n" in expected, expected
    found = run_cli("test", *args, cwd=tmp_path, timeout=180)
    assert section(found.stderr) == expected, found.output
    assert " 19 warnings" in found.stderr


def test_disable_warnings_leaves_the_section_out_and_keeps_the_count(tmp_path: Path) -> None:
    """``--disable-warnings``: pytest counts the warnings ("19 warnings") but prints no section."""
    write_files(tmp_path, _WARNS)
    pytest_run = run_pytest("--disable-warnings", cwd=tmp_path)
    assert section(pytest_run.stdout) == "" and "19 warnings" in pytest_run.stdout, pytest_run.output
    found = run_cli("test", "--disable-warnings", cwd=tmp_path, timeout=180)
    assert section(found.stderr) == "", found.output
    assert " 19 warnings" in found.stderr


@pytest.mark.parametrize("args", [(), ("--parallel", "2")], ids=["one process", "parallel"])
def test_an_initial_conftests_warning_comes_before_the_collected_files(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """pytest loads its initial conftest.py files (the run's folder's, its ``test*`` subfolders') at start-up,
    before it collects: the warning ``tests/conftest.py`` raises when imported is listed before those of
    ``alpha/``, collected first. rt loaded each conftest.py when the first file below it was collected, and
    listed the warnings in that order. pytest 9.2: tests/conftest.py, alpha/conftest.py, alpha/test_a.py."""
    write_files(
        tmp_path,
        {
            "tests/conftest.py": 'import warnings\n\nwarnings.warn("tests conftest", UserWarning)\n',
            "tests/test_t.py": "def test_t():\n    pass\n",
            "alpha/conftest.py": 'import warnings\n\nwarnings.warn("alpha conftest", UserWarning)\n',
            "alpha/test_a.py": 'import warnings\n\nwarnings.warn("module alpha", UserWarning)\n\n\n'
            "def test_a():\n    pass\n",
        },
    )
    expected = section(run_pytest(cwd=tmp_path).stdout)
    assert expected.index("tests/conftest.py:3") < expected.index("alpha/conftest.py:3"), expected
    found = run_cli("test", *args, cwd=tmp_path, timeout=180)
    assert section(found.stderr) == expected, found.output


@pytest.mark.parametrize("args", [(), ("--parallel", "2")], ids=["one process", "parallel"])
def test_the_filters_a_plugin_adds_at_configure_and_session_start_hold_for_the_session(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """pytest runs ``pytest_configure`` and ``pytest_sessionstart`` inside one ``catch_warnings`` that ends
    with the session: a filter an initial conftest.py adds there holds while the files are imported and the
    tests run, below the configuration's ``filterwarnings``. SQLAlchemy's testing plugin makes its
    ``SAWarning`` an error at session start (test/sql/test_selectable.py's ``test_alias_handles_column_context``
    expects the error; rt showed the warning). rt ran the hooks in shorter ``catch_warnings`` blocks and lost
    the filters. pytest 9.2: 2 failed, 2 passed, 1 error (the warning at import), 1 warning."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\nfilterwarnings =\n    ignore:configured but ignored\n",
            "conftest.py": """
            import warnings


            class SessionWarning(UserWarning):
                pass


            def pytest_configure(config):
                warnings.filterwarnings("error", message="configured")


            def pytest_sessionstart(session):
                warnings.filterwarnings("error", category=SessionWarning)
            """,
            "test_import.py": """
            import warnings

            warnings.warn("configured, at import")


            def test_never_collected():
                pass
            """,
            "test_run.py": """
            import warnings

            from conftest import SessionWarning


            def test_configured():
                warnings.warn("configured")


            def test_session():
                warnings.warn("at session start", SessionWarning)


            def test_the_configuration_wins():
                warnings.warn("configured but ignored")


            def test_other():
                warnings.warn("other")
            """,
        },
    )
    by_pytest = run_pytest("--continue-on-collection-errors", cwd=tmp_path)
    expected = counts_from_pytest(by_pytest.stdout)
    assert expected == {"fail": 2, "pass": 2, "error": 1}, by_pytest.output
    assert " 1 warning" in by_pytest.stdout
    found = run_cli("test", "--continue-on-collection-errors", *args, cwd=tmp_path, timeout=180)
    assert summary_counts(found.stderr) == expected, found.output
    assert section(found.stderr) == section(by_pytest.stdout), found.output


def test_the_farthest_filterwarnings_mark_wins_as_under_pytest(tmp_path: Path) -> None:
    """pytest applies a test's ``filterwarnings`` marks nearest first (``item.iter_markers``), each in front of
    the filters before it, so the module's or class's mark (or one a hook gives the class) wins over the test's
    own; rt applied them farthest first, the test's own winning. pytest 9.2: 3 failed, 1 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest


            def pytest_collection_modifyitems(items):
                for item in items:
                    if item.name == "test_hook":
                        item.parent.add_marker(pytest.mark.filterwarnings("error::UserWarning"))
            """,
            "test_marks.py": """
            import warnings

            import pytest

            pytestmark = pytest.mark.filterwarnings("error::UserWarning")


            @pytest.mark.filterwarnings("ignore::UserWarning")
            def test_module_wins():
                warnings.warn("x", UserWarning)


            @pytest.mark.filterwarnings("ignore::RuntimeWarning")
            def test_other_category():
                warnings.warn("y", RuntimeWarning)


            class TestClassWins:
                pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

                @pytest.mark.filterwarnings("error::UserWarning")
                def test_module_above_the_class(self):
                    warnings.warn("z", UserWarning)
            """,
            "test_hooked.py": """
            import warnings

            import pytest


            class TestHooked:
                @pytest.mark.filterwarnings("ignore::UserWarning")
                def test_hook(self):
                    warnings.warn("w", UserWarning)
            """,
        },
    )
    by_pytest = run_pytest(cwd=tmp_path)
    expected = counts_from_pytest(by_pytest.stdout)
    assert expected == {"fail": 3, "pass": 1}, by_pytest.output
    found = run_cli("test", cwd=tmp_path, timeout=180)
    assert summary_counts(found.stderr) == expected, found.output


def test_a_plugin_is_told_the_warnings_of_the_collection_as_of_the_tests(tmp_path: Path) -> None:
    """pytest's warnings plugin hands each warning to ``pytest_warning_recorded`` after the collection too
    (``when="collect"``, node id ``""``: an unknown mark's, a module's at import), as it does after each test
    (``"runtest"``). rt told a plugin only the tests' (pytest-json-report's list lacked the others). The same
    calls under pytest 9.2, ``rt test`` and ``rt test --parallel 2``: the worker that ends the session has
    every collection warning (each worker collects every file) and is handed the other workers' tests'
    warnings, as pytest-xdist's controller is (before, it had its own tests' alone)."""
    write_files(
        tmp_path,
        {
            "test_import.py": _WARNS["test_import.py"],
            "test_warns.py": """
            import warnings


            def test_warns():
                warnings.warn("in a test", UserWarning)
            """,
            "pytest.ini": "[pytest]\n",
            "test_marked.py": """
            import pytest


            @pytest.mark.not_registered
            def test_marked():
                pass
            """,
            "conftest.py": """
            import os

            TOLD = []


            def pytest_warning_recorded(warning_message, when, nodeid, location):
                TOLD.append(repr((when, nodeid, str(warning_message.message), location)))


            def pytest_terminal_summary(terminalreporter):
                with open("told.txt", "w") as out:
                    out.write("\\n".join(sorted(TOLD)))
            """,
        },
    )
    told = tmp_path / "told.txt"
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    expected = told.read_text()
    assert "('collect', '', 'at import', None)" in expected, pytest_run.output
    assert "('collect', '', 'Unknown pytest.mark.not_registered" in expected, expected
    assert "('runtest', 'test_warns.py::test_warns', 'in a test', None)" in expected, expected
    for args in ((), ("--parallel", "2")):
        told.unlink(missing_ok=True)
        rt_run = run_cli("test", *args, cwd=tmp_path)
        assert told.read_text() == expected, rt_run.output


def test_a_warning_hook_that_raises_ends_the_run_as_pytests_internal_error(tmp_path: Path) -> None:
    """A ``pytest_warning_recorded`` hook that raises leaves pytest's run loop: INTERNALERROR, status 3, no
    further test runs, and the test's later warnings are handed to no hook. rt printed one line and went on
    (status 0, the next test's warnings told, the rest of the failing test's lost without a word). The same
    hook calls and status under pytest 9.2, ``rt test`` and ``rt test --parallel 2``."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            def pytest_warning_recorded(warning_message, when, nodeid, location):
                with open("told.txt", "a") as out:
                    out.write(f"{when} {nodeid} {warning_message.message}\\n")
                if "boom" in str(warning_message.message):
                    raise RuntimeError("hook failed")
            """,
            "test_w.py": """
            import warnings


            def test_a():
                warnings.warn("boom one")
                warnings.warn("second")


            def test_b():
                warnings.warn("third")
            """,
        },
    )
    told = tmp_path / "told.txt"
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    assert pytest_run.code == 3, pytest_run.output
    expected = told.read_text()
    assert expected == "runtest test_w.py::test_a boom one\n", expected
    for args in ((), ("--parallel", "2")):
        told.unlink()
        rt_run = run_cli("test", "-p", "no:randomly", *args, cwd=tmp_path)
        assert rt_run.code == 3, rt_run.output
        assert "INTERNALERROR: pytest_warning_recorded raised RuntimeError: hook failed" in rt_run.output
        assert told.read_text() == expected


def test_a_warning_hook_that_raises_after_the_collection_stops_the_run_before_any_test(
    tmp_path: Path,
) -> None:
    """The collection's warnings reach ``pytest_warning_recorded`` when the collection ends; a hook raising
    there leaves pytest's ``pytest_collection``: INTERNALERROR, status 3, before any test. rt printed one line
    and ran every test, then stopped with status 3. The same under pytest 9.2, ``rt test`` and ``rt test
    --parallel 2``: status 3, the hook told the import's warning, no test run."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            def pytest_warning_recorded(warning_message, when, nodeid, location):
                with open("told.txt", "a") as out:
                    out.write(f"{when} {nodeid!r} {warning_message.message}\\n")
                raise RuntimeError("hook failed")
            """,
            "test_w.py": """
            import warnings

            warnings.warn("at import")


            def test_a():
                open("ran.txt", "a").write("test_a\\n")


            def test_b():
                open("ran.txt", "a").write("test_b\\n")
            """,
        },
    )
    told, ran = tmp_path / "told.txt", tmp_path / "ran.txt"
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    assert pytest_run.code == 3, pytest_run.output
    assert not ran.exists()
    expected = told.read_text()
    assert expected == "collect '' at import\n", expected
    for args in ((), ("--parallel", "2")):
        told.unlink()
        rt_run = run_cli("test", "-p", "no:randomly", *args, cwd=tmp_path)
        assert rt_run.code == 3, rt_run.output
        assert "INTERNALERROR: pytest_warning_recorded raised RuntimeError: hook failed" in rt_run.output
        assert not ran.exists(), ran.read_text()
        assert set(told.read_text().splitlines()) == set(expected.splitlines())
