"""The node id of a running test, as ``PYTEST_CURRENT_TEST`` shows it at each phase, is pytest's (issue 15,
session 15: rt makes a test's node id once and keeps it, where it made it again each time it was asked, several
times a phase). Each test runs pytest 9.2 and ``rt test`` on the same small project."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

PROJECT = {
    "conftest.py": """
    import os

    import pytest


    def _record():
        with open(os.environ["IDS_OUT"], "a") as out:
            out.write(os.environ["PYTEST_CURRENT_TEST"] + "\\n")


    @pytest.fixture(autouse=True)
    def phases():
        _record()
        yield
        _record()
    """,
    "tests/test_ids.py": """
    import os

    import pytest

    from conftest import _record


    @pytest.mark.parametrize("n", [1, "a b"])
    def test_param(n):
        _record()


    class TestOuter:
        @pytest.mark.parametrize("x", [0.5])
        def test_method(self, x):
            _record()

        class TestInner:
            def test_nested(self):
                _record()
    """,
}


def test_the_running_test_s_node_id_at_each_phase_is_pytest_s(tmp_path: Path) -> None:
    """Parametrized functions and methods, a nested class, a test file below the rootdir: the same ids, in the
    same order, at set-up, call and teardown. pytest 9.2: 4 passed."""
    project = write_files(tmp_path / "project", PROJECT)
    pytest_run = run_pytest(cwd=project, env={"IDS_OUT": str(tmp_path / "pytest.txt")})
    rt_run = run_cli("test", cwd=project, env={"IDS_OUT": str(tmp_path / "rt.txt")})
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 4}, pytest_run.output
    assert summary_counts(rt_run.stderr) == {"pass": 4}, rt_run.output
    under_pytest = (tmp_path / "pytest.txt").read_text().splitlines()
    assert under_pytest[:3] == [
        "tests/test_ids.py::test_param[1] (setup)",
        "tests/test_ids.py::test_param[1] (call)",
        "tests/test_ids.py::test_param[1] (teardown)",
    ]
    assert (tmp_path / "rt.txt").read_text().splitlines() == under_pytest
