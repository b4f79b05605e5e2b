"""``rt test`` reads each test module's source once for an import of pytest (pytest_imports.py), before the
run decides whether to load the installed plugins (issue 15, session 17): the collection of each file did the
same read again while the plugins were still not loaded, always in vain after the first pass found none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rt.testing import cli_environ, counts_from_pytest, run_pytest, summary_counts, write_files

#: ``rt test`` in this interpreter with every call of ``module_imports_pytest`` counted by file name, the
#: counts written to ``SCANS_OUT`` when the run ends
_COUNTING_RT = """
import atexit, collections, json, os, runpy, sys

from rt_testrunner import pytest_imports

calls = collections.Counter()
original = pytest_imports.module_imports_pytest


def counted(path):
    calls[path.name] += 1
    return original(path)


pytest_imports.module_imports_pytest = counted


def written():
    with open(os.environ["SCANS_OUT"], "w") as out:
        json.dump(calls, out)


atexit.register(written)
sys.argv = ["rt", *sys.argv[1:]]
runpy.run_module("rt", run_name="__main__", alter_sys=True)
"""

#: an installed plugin (an entry point ``pytest11`` on ``PYTHONPATH``) whose ``pytest_configure`` leaves a
#: mark a test module can read when it is imported
_PLUGIN_SITE = {
    "mark_plugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: mark-plugin\nVersion: 1.0\n",
    "mark_plugin-1.0.dist-info/entry_points.txt": "[pytest11]\nmark = mark_plugin\n",
    "mark_plugin.py": """
        import os


        def pytest_configure(config):
            os.environ["MARK_PLUGIN_CONFIGURED"] = "1"
    """,
}

#: a test module that imports pytest from its second version on: its test rewrites it, so a rerun
#: (``--rerun-each``) reloads a module that needs the plugins configured before its import
_SELF_REWRITING = """
import os
import pathlib

SOURCE = pathlib.Path(__file__)
SECOND = 'import pytest\\nimport os\\n\\nassert os.environ.get("MARK_PLUGIN_CONFIGURED")\\n\\n\\ndef test_b():\\n    pass\\n'


def test_b():
    SOURCE.write_text(SECOND)
"""


def _counting_rt(project: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> tuple[str, int]:
    """``rt test *args`` in ``project`` with the scans counted into ``out``: its stderr and status."""
    script = out.parent / "counting_rt.py"
    script.write_text(_COUNTING_RT)
    completed = subprocess.run(
        [sys.executable, str(script), "test", *args],
        cwd=project,
        env=cli_environ({"SCANS_OUT": str(out), **(env or {})}),
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return completed.stdout + completed.stderr, completed.returncode


def test_each_test_module_is_read_once_for_an_import_of_pytest(tmp_path: Path) -> None:
    """200 test files of 300 lines cost 1-6 ms more than needed: collect.load_plugins_for read every file
    to decide whether the installed plugins load, and collect.load_file read each again (2 reads per file).
    A module rt imports when its turn comes (``x.test.py``, of the spec's patterns) is read once too. pytest
    9.2 (which collects neither ``x.test.py`` nor rt's own tests): 3 passed."""
    project = write_files(
        tmp_path / "project",
        {
            "test_one.py": "def test_one():\n    pass\n",
            "test_two.py": "def test_two():\n    pass\n\n\ndef test_three():\n    pass\n",
            "x.test.py": "from rt.test import test\n\ntest('declared', lambda: None)\n",
        },
    )
    pytest_run = run_pytest(cwd=project)
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 3}, pytest_run.output
    out = tmp_path / "scans.json"
    output, status = _counting_rt(project, out)
    assert status == 0, output
    assert "4 pass" in output, output
    assert json.loads(out.read_text()) == {"test_one.py": 1, "test_two.py": 1, "x.test.py": 1}


def test_a_rerun_reads_the_reloaded_module_again(tmp_path: Path) -> None:
    """The other side: a rerun (``--rerun-each``) reloads the module, which may have changed since it was read,
    so it is read again, and a module that imports pytest now has the installed plugins configured before its
    import, as a first run would (here its first run rewrites it to need them)."""
    site = write_files(tmp_path / "site", _PLUGIN_SITE)
    project = write_files(tmp_path / "project", {"test_b.py": _SELF_REWRITING})
    out = tmp_path / "scans.json"
    output, status = _counting_rt(project, out, "--rerun-each", "2", env={"PYTHONPATH": str(site)})
    assert status == 0, output
    assert summary_counts(output) == {"pass": 2}, output
    assert json.loads(out.read_text()) == {"test_b.py": 2}
