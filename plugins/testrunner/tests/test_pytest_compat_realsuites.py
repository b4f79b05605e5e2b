"""``rt test`` against pytest on small projects, one per mechanism found by running real suites from their
PyPI sdists (issue 15, bench/realsuites.py). Each test runs pytest itself on the same project and compares the
outcome counts, so a difference in either runner shows; the project named in a test's docstring is where the
difference was first seen."""

from __future__ import annotations

from pathlib import Path

from rt.testing import (
    CliResult,
    counts_from_pytest,
    run_cli,
    run_pytest,
    summary_counts,
    write_files,
)


def rt_counts(cwd: Path, *args: str) -> tuple[dict[str, int], CliResult]:
    result = run_cli("test", *args, cwd=cwd, timeout=180)
    return summary_counts(result.stderr), result


def pytest_counts(cwd: Path, *args: str) -> dict[str, int]:
    """pytest's outcome counts on ``cwd`` in rt's words, run as bench/realsuites.py runs it (``-q``: pytest 9
    then counts skipped subtests too)."""
    return counts_from_pytest(run_pytest("-q", "--color=no", *args, cwd=cwd).stdout)


def test_a_test_replacing_the_time_functions_leaves_the_runner_its_own_clocks(tmp_path: Path) -> None:
    """funcy 2.1: a test monkeypatches ``time.time`` with a short iterator's ``next``; rt read ``time.time()``
    after the call, before the teardown that undoes the patch, so that test and every later one failed with
    "coroutine raised StopIteration". rt's clocks are bound when it starts, as pytest's are."""
    write_files(
        tmp_path,
        {
            "test_clocks.py": """
        import time
        import pytest

        @pytest.mark.parametrize("name", ["time", "perf_counter", "monotonic"])
        def test_patched_clock(monkeypatch, name):
            ticks = iter([0.0, 1.0])
            monkeypatch.setattr(f"time.{name}", lambda: next(ticks))
            assert getattr(time, name)() == 0.0
            assert getattr(time, name)() == 1.0

        def test_later():
            assert time.time() > 1.0 and time.perf_counter() > 0 and time.monotonic() > 0
    """
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 4}
    got, result = rt_counts(tmp_path)
    assert got == expected, result.output


def test_test_modules_are_imported_under_the_warning_filters_of_a_collection(tmp_path: Path) -> None:
    """defusedxml 0.7.1: a test module records the DeprecationWarning an import gives
    (``with warnings.catch_warnings(record=True)`` at module level) and a test checks it; pytest imports test
    modules under its warning filters (deprecation warnings always shown, then ``filterwarnings``), so the
    warning is recorded. ``filterwarnings = error`` turns a warning at import into a collection error, and a
    filter a module sets when imported holds for the modules collected after it, not for the tests."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
        [tool.pytest.ini_options]
        filterwarnings = ["error::UserWarning"]
    """,
            "test_a_records.py": """
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.warn("old api", DeprecationWarning)

        def test_the_import_warning_was_recorded():
            assert [str(w.message) for w in caught] == ["old api"]
    """,
            "test_b_warns.py": """
        import warnings

        warnings.warn("at import", UserWarning)

        def test_never_collected():
            pass
    """,
            "test_c_sets_a_filter.py": """
        import warnings

        warnings.simplefilter("error", RuntimeWarning)

        def test_the_filter_is_gone_when_tests_run():
            warnings.warn("only a warning now", RuntimeWarning)
    """,
            "test_d_collected_after.py": """
        import warnings

        warnings.warn("an error while collecting", RuntimeWarning)

        def test_never_collected():
            pass
    """,
        },
    )
    expected = pytest_counts(tmp_path, "--continue-on-collection-errors")
    assert expected == {"pass": 2, "error": 2}
    got, result = rt_counts(tmp_path, "--continue-on-collection-errors")
    assert got == expected, result.output


def test_a_warning_at_import_names_the_importing_file(tmp_path: Path) -> None:
    """defusedxml 0.7.1: a module of the suite warns when imported, with ``stacklevel=2`` (the line that
    imports it), and a test checks the warning's file. rt rewrites the asserts of the suite's own modules; its
    loader used to run their code itself, so the warning named rt's importing.py."""
    write_files(
        tmp_path,
        {
            "legacy.py": """
        import warnings

        warnings.warn("legacy is deprecated", DeprecationWarning, stacklevel=2)
    """,
            "test_imports.py": """
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import legacy

        def test_the_warning_names_this_file():
            assert [w.filename.rsplit("/", 1)[-1] for w in caught] == ["test_imports.py"]
    """,
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 1}
    got, result = rt_counts(tmp_path)
    assert got == expected, result.output


def test_scope_teardowns_and_session_hooks_have_no_deadline(tmp_path: Path) -> None:
    """pint 0.25.3's pytest-benchmark benchmarks on a loaded machine: a module's fixtures took longer than 5 s
    to tear down, and rt counted "after_all hook: this test timed out after 5000ms" as a failure where pytest
    passed (213 passed against 213 passed and 1 failed). A pytest suite's tests have no deadline unless asked
    (``--timeout``, pytest-timeout); the teardowns of its module, class and session fixtures and its
    ``pytest_sessionfinish`` hooks had rt's 5 s one for ``after_all`` hooks. pytest 9.2: 2 passed; with
    ``--timeout`` rt bounds them again (here rt.toml's 1 s, shorter than each 1.2 s teardown, stands for the
    5 s)."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import time

            import pytest


            @pytest.fixture(scope="session")
            def slow_session():
                yield
                time.sleep(1.2)


            def pytest_sessionfinish(session):
                time.sleep(1.2)
            """,
            "test_slow.py": """
            import time

            import pytest


            @pytest.fixture(scope="module")
            def slow_module():
                yield
                time.sleep(1.2)


            class TestSlow:
                @pytest.fixture(scope="class")
                def slow_class(self):
                    yield
                    time.sleep(1.2)

                def test_a(self, slow_module, slow_class, slow_session):
                    pass


            def test_b(slow_module):
                pass
            """,
            "rt.toml": "[test]\ntimeout = 1000\n",
        },
    )
    pytest_found = pytest_counts(tmp_path)
    found, result = rt_counts(tmp_path)
    assert found == pytest_found == {"pass": 2}, result.output
    found, result = rt_counts(tmp_path, "--timeout=1000")
    assert found.get("error", 0) + found.get("fail", 0) >= 1, result.output
