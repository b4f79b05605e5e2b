"""Module names under ``--import-mode=importlib``, under ``rt test`` as under pytest 9.2 (issue 15, session 15):
pytest names a test file outside any package by its path from the rootdir (``tests/test_x.py`` is
``tests.test_x``, ``tests/sub/test_x.py`` is ``tests.sub.test_x``), with the folders above as modules, so two
files of one name are two modules and ``pickle`` finds the classes of each. rt named both ``test_x`` and ran
the second file's tests from the first one's module."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

_NAMED = """
import pickle
import sys
from pathlib import Path


class Point:
    pass


def test_name_and_pickling():
    names = sys.modules["conftest"].NAMES
    with open(names, "a") as out:
        out.write(f"{__name__} {Path(__file__).relative_to(names.parent).as_posix()}\\n")
    assert type(pickle.loads(pickle.dumps(Point()))) is Point
"""


def test_a_file_outside_any_package_is_named_by_its_path_from_the_rootdir(tmp_path: Path) -> None:
    """pytest 9.2: 4 passed, ``tests.test_x``, ``tests.sub.test_x``, ``tests.sub.test_y`` and ``pkg.test_x``
    (a package's file keeps its package name)."""
    files = {
        "pytest.ini": "[pytest]\naddopts = --import-mode=importlib\n",
        "conftest.py": "from pathlib import Path\n\nNAMES = Path(__file__).parent / 'names.txt'\n",
        "tests/test_x.py": _NAMED,
        "tests/sub/test_x.py": _NAMED,
        "tests/sub/test_y.py": _NAMED,
        "pkg/__init__.py": "",
        "pkg/test_x.py": _NAMED,
    }
    names = {}
    for runner in ("pytest", "rt"):
        root = write_files(tmp_path / runner, files)
        if runner == "pytest":
            result = run_pytest("-p", "no:randomly", cwd=root)
            counts = counts_from_pytest(result.stdout)
        else:
            result = run_cli("test", cwd=root)
            counts = summary_counts(result.stderr)
        assert counts == {"pass": 4}, result.output
        names[runner] = sorted((root / "names.txt").read_text().splitlines())
    assert "tests.sub.test_x tests/sub/test_x.py" in names["pytest"]
    assert names["rt"] == names["pytest"]
