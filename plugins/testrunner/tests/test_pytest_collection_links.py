"""Symbolic links to folders while collecting, under ``rt test`` as under pytest 9.2 (issue 15, session 15):
pytest follows them (a ``tests`` that links to a shared folder, a linked folder next to its target), skips
broken links, and names what it finds by the link's path, not the target's. rt's walk did not follow them
(pendulum's suite showed it: ``linked -> real`` gave pytest 2 passed, rt 1)."""

from __future__ import annotations

from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

#: each test writes its node id and its module's ``__name__`` where both runners' runs can be compared
_RECORDER = """
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _record(request):
    with open(Path(__file__).parent / "ids.txt", "a") as out:
        out.write(f"{request.node.nodeid} {request.module.__name__}\\n")
"""

_SHARED = {
    "__init__.py": "",
    "conftest.py": """
    import pytest


    @pytest.fixture
    def shared_value():
        return 3
    """,
    "test_shared.py": """
    import pickle


    class Point:
        pass


    def test_fixture_of_the_linked_conftest(shared_value):
        assert shared_value == 3


    def test_pickles_by_the_modules_name():
        assert type(pickle.loads(pickle.dumps(Point()))) is Point
    """,
}


def _project(base: Path) -> Path:
    """A project whose ``tests`` links to a package outside it, with a folder ``linked`` next to its target
    ``real``, and a broken link named as a test file."""
    write_files(base / "shared", _SHARED)
    root = write_files(
        base / "project",
        {
            "pytest.ini": "[pytest]\n",
            "conftest.py": _RECORDER,
            "real/test_real.py": """
            def test_real():
                assert True
            """,
        },
    )
    (root / "tests").symlink_to(base / "shared", target_is_directory=True)
    (root / "linked").symlink_to("real", target_is_directory=True)
    (root / "test_broken.py").symlink_to("missing.py")
    return root


def _runs(tmp_path: Path, *args: str) -> dict[str, tuple[dict[str, int], list[str], str]]:
    """pytest and ``rt test`` with ``args``, each on its own copy of :func:`_project`: the counts, the sorted
    ``node id module-name`` lines the tests wrote, and the output."""
    runs = {}
    for runner in ("pytest", "rt"):
        root = _project(tmp_path / runner)
        if runner == "pytest":
            result = run_pytest("-p", "no:randomly", *args, cwd=root)
            counts = counts_from_pytest(result.stdout)
        else:
            result = run_cli("test", *args, cwd=root)
            counts = summary_counts(result.stderr)
        ids = sorted((root / "ids.txt").read_text().splitlines()) if (root / "ids.txt").exists() else []
        runs[runner] = (counts, ids, result.output)
    return runs


def test_links_to_folders_are_followed_and_named_by_the_links_path(tmp_path: Path) -> None:
    """pytest 9.2: 4 passed, ``linked/test_real.py::test_real`` and ``real/test_real.py::test_real`` (one
    module, both paths), ``tests/test_shared.py`` as the package ``tests`` (pickling finds its classes) with
    its linked conftest.py's fixture; the broken link is no file. rt ran 1 test before."""
    runs = _runs(tmp_path)
    assert runs["pytest"][:2] == runs["rt"][:2], (runs["pytest"][2], runs["rt"][2])
    assert runs["rt"][0] == {"pass": 4}, runs["rt"][2]
    assert "tests/test_shared.py::test_pickles_by_the_modules_name tests.test_shared" in runs["rt"][1]


def test_a_linked_folder_named_on_the_command_line_keeps_the_links_path(tmp_path: Path) -> None:
    """``rt test tests`` and ``rt test tests/test_shared.py::test...``: pytest keeps the link's path
    (``absolutepath``, not ``resolve``), so the node ids and the module's name are ``tests``'s; rt resolved
    the argument to the target (``shared.test_shared``, outside the project)."""
    for args in (("tests",), ("tests/test_shared.py::test_pickles_by_the_modules_name",)):
        runs = _runs(tmp_path / args[0].replace("/", "_").replace(":", "_"), *args)
        assert runs["pytest"][:2] == runs["rt"][:2], (runs["pytest"][2], runs["rt"][2])
        assert runs["rt"][0], runs["rt"][2]


def test_a_link_to_a_folder_above_is_walked_once(tmp_path: Path) -> None:
    """``loop/up -> ..``: pytest follows it until the system refuses the path (the project's tests collected
    again at each level, 40 deep); rt follows every other link and leaves this one out, so each test runs
    once and the run ends."""
    root = write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_top.py": "def test_top():\n    pass\n",
            "loop/test_inner.py": "def test_inner():\n    pass\n",
        },
    )
    (root / "loop" / "up").symlink_to("..", target_is_directory=True)
    result = run_cli("test", cwd=root)
    assert summary_counts(result.stderr) == {"pass": 2}, result.output
