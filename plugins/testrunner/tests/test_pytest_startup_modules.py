"""``rt test`` leaves imported the standard library modules pytest's start-up leaves imported that a suite can
use without importing them (issue 15, session 13): a submodule a bare ``import package`` does not give, used
as an attribute of that package. Each test runs pytest 9.2 and ``rt test`` on the same small project."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

#: a test module of a pytest suite that lists the standard library's submodules imported when its test runs,
#: and one as Faker 40.63.0's ``test_xml``: ``xml.etree`` read after a bare ``import xml``
PROJECT = {
    "test_modules.py": """
    import json
    import os
    import sys
    import xml

    import pytest


    def test_lists_the_submodules_imported():
        names = [name for name in sys.modules if "." in name and name.partition(".")[0] in sys.stdlib_module_names]
        with open(os.environ["MODULES_OUT"], "w") as out:
            json.dump(sorted(names), out)


    def test_xml_after_a_bare_import():
        assert xml.etree.ElementTree.fromstring("<a b='1'/>").get("b") == "1"
    """,
}


def _given_by_its_package(name: str) -> bool:
    """Whether a bare import of ``name``'s package, in a fresh interpreter, makes ``name`` its attribute (as
    ``import unittest`` gives ``unittest.case``): a suite then needs nobody else to have imported it."""
    package, _, child = name.rpartition(".")
    code = f"import importlib, sys; sys.exit(0 if {child!r} in vars(importlib.import_module({package!r})) else 1)"
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True).returncode == 0


def test_the_submodules_pytest_start_up_leaves_imported_are_imported(tmp_path: Path) -> None:
    """Faker 40.63.0: ``test_xml`` failed under rt only (``module 'xml' has no attribute 'etree'``): pytest's
    junitxml plugin imports ``xml.etree.ElementTree`` at start-up, and a bare ``import xml`` then reaches it.
    Every standard library submodule imported under pytest when a test runs, which a bare import of its
    package does not give, is imported under rt too (pytest's own plugins and what ``import pytest`` imports;
    no installed plugin). pytest 9.2: 2 passed."""
    project = write_files(tmp_path / "project", PROJECT)
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    pytest_run = run_pytest(cwd=project, env={**env, "MODULES_OUT": str(tmp_path / "pytest.json")})
    rt_run = run_cli("test", cwd=project, env={**env, "MODULES_OUT": str(tmp_path / "rt.json")})
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 2}, pytest_run.output
    assert summary_counts(rt_run.stderr) == {"pass": 2}, rt_run.output
    under_pytest = set(json.loads((tmp_path / "pytest.json").read_text()))
    under_rt = set(json.loads((tmp_path / "rt.json").read_text()))
    missing = sorted(name for name in under_pytest - under_rt if not _given_by_its_package(name))
    assert missing == [], rt_run.output
