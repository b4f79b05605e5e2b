"""The tests read nothing outside the repository, so a fresh clone runs them.

The guard lives in the top-level conftest.py (an audit hook on ``open()``); these tests run it on a
throwaway project laid out like this repository: the same conftest.py at its root, a test that reads a file
beside the project (as the CSRF tests once read ``../shared/csrf-vectors.json``), and one that reads inside.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from rt.testing import clean_environ

ROOT = Path(__file__).resolve().parents[1]


def _project(tmp_path: Path, test_body: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    project = tmp_path / "work" / "repo"
    (project / "tests" / "data").mkdir(parents=True)
    shutil.copy(ROOT / "conftest.py", project / "conftest.py")
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = ['-p', 'no:cacheprovider']\n")
    (project / "tests" / "data" / "inside.json").write_text("[1]")
    (tmp_path / "work" / "shared").mkdir()
    (tmp_path / "work" / "shared" / "vectors.json").write_text("[2]")
    (project / "tests" / "test_reads.py").write_text(textwrap.dedent(test_body))
    # The throwaway project sits under the temporary directory, which the guard allows in general (tests
    # write and read their tmp_path there); RT_GUARD_TMP=0 makes it hold the project to the rule.
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA"], cwd=project, capture_output=True, text=True, timeout=120,
        env=clean_environ({"RT_GUARD_TMP": "0"}),
    )
    return project, result


def test_a_test_reading_beside_the_repository_fails(tmp_path):
    _, result = _project(tmp_path, """
        import json
        from pathlib import Path

        HERE = Path(__file__).parent

        def test_reads_inside():
            assert json.loads((HERE / "data" / "inside.json").read_text()) == [1]

        def test_reads_beside():
            assert json.loads((HERE / ".." / ".." / "shared" / "vectors.json").read_text()) == [2]
    """)
    output = result.stdout
    assert result.returncode == 1, output + result.stderr
    assert "PASSED tests/test_reads.py::test_reads_inside" in output
    assert "FAILED tests/test_reads.py::test_reads_beside" in output
    assert "read outside the repository" in output and "shared/vectors.json" in output


def test_a_read_at_import_time_fails_the_collection(tmp_path):
    _, result = _project(tmp_path, """
        from pathlib import Path

        VECTORS = (Path(__file__).parents[2] / "shared" / "vectors.json").read_text()

        def test_uses_vectors():
            assert VECTORS
    """)
    assert result.returncode != 0
    assert "ERROR tests/test_reads.py" in result.stdout
    assert "read outside the repository" in result.stdout


def test_the_repository_runs_under_the_guard():
    """This suite itself runs with the guard: the hook is installed in this very process."""
    root, outside = sys._rt_repo_guard
    assert Path(root) == ROOT
    assert not outside(str(ROOT / "README.md"))
    assert outside(str(ROOT.parent / "shared" / "csrf-vectors.json"))
