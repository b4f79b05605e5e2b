"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (and GitHub
sources when the sdist has no tests; issue 15, session 9, sweep D): each test names the suite that showed it,
runs pytest itself on the same small project and compares the outcome counts, so a difference in either
runner shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def rt_test(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """``rt test`` in ``root``: the summary's counts and the whole output."""
    result = run_cli("test", *args, cwd=root, timeout=180)
    return summary_counts(result.stderr), result.output


def pytest_counts(root: Path, *args: str) -> dict[str, int]:
    """pytest's outcome counts in ``root``, in rt's words."""
    return counts_from_pytest(run_pytest(*args, cwd=root).stdout)


#: a conftest.py written for pytest 8 and older: pytest 9 removed the ``py.path`` ``path`` argument of
#: ``pytest_ignore_collect`` (docopt's, boltons' and wrapt's conftest.py files had such hooks)
OLD_HOOK = """
def pytest_ignore_collect(path, config):
    return None
"""

#: a conftest.py that cannot be imported
BROKEN_IMPORT = """
import a_module_that_is_not_installed
"""


@pytest.mark.parametrize("conftest", [OLD_HOOK, BROKEN_IMPORT], ids=["hookimpl", "import"])
@pytest.mark.parametrize("args", [(), ("--continue-on-collection-errors",)], ids=["stop", "continue"])
def test_a_conftest_that_does_not_load_is_one_error_for_its_folder(
    tmp_path: Path, conftest: str, args: tuple[str, ...]
) -> None:
    """docopt at its GitHub head: pytest registers a conftest.py as a plugin, and pluggy refuses a hook whose
    arguments are not in pytest's hook specification (``PluginValidationError``); a conftest.py that raises
    when imported fails alike. Either way pytest reports one collection error for the folder of that
    conftest.py and collects nothing below it, however many test files it holds; the files elsewhere still
    run with ``--continue-on-collection-errors``. rt used to report the first file below as failing to load
    with a ``TypeError`` from calling the old hook, and then to run the folder's other files.
    pytest 9.2: 1 error (stop), 1 passed and 1 error (continue)."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "test_top.py": "def test_top():\n    pass\n",
            "sub/conftest.py": conftest,
            "sub/test_b.py": "def test_b():\n    pass\n",
            "sub/test_c.py": "def test_c():\n    pass\n",
            "sub/deeper/test_d.py": "def test_d():\n    pass\n",
        },
    )
    expected = pytest_counts(tmp_path, *args)
    assert expected == ({"pass": 1, "error": 1} if args else {"error": 1})
    found, output = rt_test(tmp_path, *args)
    assert found == expected, output
    if conftest is OLD_HOOK:
        # pluggy's own words, naming the conftest.py, the hook and the argument pytest does not know
        assert "pytest_ignore_collect(path, config)" in output, output
        assert "Argument(s) {'path'} are declared in the hookimpl" in output, output
        assert "TypeError" not in output, output


def test_hook_arguments_with_defaults_and_known_ones_are_accepted(tmp_path: Path) -> None:
    """pluggy checks only the arguments without a default value, and a hook of pytest's specification taking
    some of its arguments is fine; a ``pytest_`` name that is no function (``pytest_plugins``, a constant) is
    not a hook. pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            pytest_plugins = []
            pytest_some_setting = 3

            def pytest_ignore_collect(collection_path, path=None):
                return None

            def pytest_collection_modifyitems(items):
                items.reverse()
            """,
            "test_x.py": "def test_x():\n    pass\n\ndef test_y():\n    pass\n",
        },
    )
    expected = pytest_counts(tmp_path)
    assert expected == {"pass": 2}
    found, output = rt_test(tmp_path)
    assert found == expected, output
