"""``rt test`` on mechanisms found while running unseen projects' suites from their PyPI sdists (issue 15,
session 12, sweep L: projects that ship a pytest plugin of their own or drive pytest through heavy conftest.py
machinery): each test names the suite that showed it, runs pytest itself on the same small project and
compares the outcome counts and messages, so a difference in either runner shows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rt.testing import (
    counts_from_pytest,
    run_cli,
    run_pytest,
    same_counts_as_pytest,
    summary_counts,
    write_files,
)

#: a fixture that fakes the file system as pyfakefs's ``fs`` does: ``os`` replaced in every loaded module (but
#: pytest's capture and its path helpers, which pyfakefs's plugin leaves alone) by a stand-in whose functions
#: know no real descriptor nor file, until the fixture ends
_FAKE_FS_CONFTEST = """
import os
import sys
import types

import pytest

SKIPPED = {"os", "posixpath", "genericpath", "sys", "pytest", "_pytest.capture", "_pytest.pathlib", "py"}


def _refused(*args, **kwargs):
    raise OSError(9, "Bad file descriptor: not in the fake file system")


REAL = [os]  # out of the swap's reach, as the fake's own references are


class FakeOs(types.ModuleType):
    def __getattr__(self, name):
        return getattr(REAL[0], name)


@pytest.fixture
def fake_fs():
    fake = FakeOs("os")
    for name in ("write", "lseek", "pread", "ftruncate", "stat"):
        setattr(fake, name, _refused)
    swapped = []
    for name, module in list(sys.modules.items()):
        if module is None or name in SKIPPED:
            continue
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for attribute, value in list(namespace.items()):
            if value is REAL[0]:
                namespace[attribute] = fake
                swapped.append((namespace, attribute))
    yield fake
    for namespace, attribute in swapped:
        namespace[attribute] = REAL[0]
"""


def test_a_test_faking_the_file_system_keeps_its_output_and_the_run(tmp_path: Path) -> None:
    """pyfakefs 6.3.2: its ``fs`` fixture replaces ``os`` in every loaded module while a test runs, rt's
    capture among them, whose real descriptors the fake ``lseek`` and ``write`` do not know: the phase change
    after set-up raised inside rt, descriptors 1 and 2 stayed on the capture's files, and every later line of
    the run was lost (no summary, exit status 1). A module the test reloads meanwhile (pyfakefs's
    ``modules_to_reload``) was read through the faked ``pathlib``: ``FileNotFoundError``. pytest 9.2: 2 passed,
    1 failed, the failure's captured output shown."""
    write_files(
        tmp_path,
        {
            "conftest.py": _FAKE_FS_CONFTEST,
            "tests/__init__.py": "",
            "tests/helper.py": """
            import os

            VALUE = len(os.sep)
            """,
            "tests/test_fake.py": """
            import importlib

            from tests import helper


            def test_prints_and_reloads(fake_fs):
                print("inside the fake")
                assert importlib.reload(helper).VALUE == 1


            def test_fails_with_its_output(fake_fs):
                print("shown with the failure")
                assert helper.VALUE == 2


            def test_after():
                print("after")
            """,
        },
    )
    pytest_run, rt_run = same_counts_as_pytest(tmp_path)
    assert "shown with the failure" in pytest_run.output
    assert "shown with the failure" in rt_run.output, rt_run.output
    assert "test_after" in rt_run.output, rt_run.output
    assert "Bad file descriptor" not in rt_run.output, rt_run.output


@pytest.mark.parametrize("where", ["ini", "command line"])
def test_a_conftest_reads_the_deprecated_inicfg_under_a_filter_naming_pytest(
    tmp_path: Path, where: str
) -> None:
    """plumbum 2.0.2: its conftest.py's ``pytest_configure`` reads ``config.inicfg.get(...)``, deprecated in
    pytest 9 (``PytestRemovedIn10Warning``), which its ``filterwarnings = error`` makes an error unless a
    filter ignores it (here in the configuration, or ``-W`` as its run here needed it). rt's config had no
    ``inicfg`` (``AttributeError``), and a filter naming one of pytest's categories was dropped while pytest
    was not imported yet, so the warning was raised all the same. pytest 9.2: 1 passed."""
    ignore = "ignore::pytest.PytestRemovedIn10Warning"
    write_files(
        tmp_path,
        {
            "pytest.ini": f"""
            [pytest]
            filterwarnings =
                error
                {ignore if where == "ini" else ""}
            optional_tests = ssh sudo
            """,
            "conftest.py": """
            import pytest


            def pytest_addoption(parser):
                parser.addini("optional_tests", "optional tests", type="args")


            def pytest_configure(config):
                config.optional = config.inicfg.get("optional_tests", "none")
            """,
            "test_config.py": """
            def test_read(pytestconfig):
                assert pytestconfig.optional == "ssh sudo"
            """,
        },
    )
    same_counts_as_pytest(tmp_path, *(("-W", ignore) if where == "command line" else ()))


def test_pytesters_inner_runs_share_pytests_own_plugin_modules(tmp_path: Path) -> None:
    """pytest-snapshot 0.9.0 (108 tests, most through ``pytester``): 45 s under rt, 25 s under pytest.
    pytester puts ``sys.modules`` back after each test as it was when the test began; under pytest, pytest's
    own plugin modules (``_pytest.junitxml``, ``_pytest.pastebin``, ``_pytest.unittest`` ...) are loaded from
    its start-up, so every inner run uses the same ones, and a test that patches one patches what the inner
    pytest uses. Under rt they were first imported by the first inner run, dropped after its test, and
    imported again by each later one (80 ms a test). pytest 9.2: 2 passed; ``-p pytester`` on the command
    line, which rt also read without setting pytester up as a ``pytest_plugins`` entry does."""
    write_files(
        tmp_path,
        {
            "test_inner.py": """
            import sys

            import pytest

            SEEN = []


            @pytest.mark.parametrize("run", [1, 2])
            def test_inner_run(pytester, run):
                pytester.makepyfile(test_inside="def test_a(): pass")
                pytester.runpytest().assert_outcomes(passed=1)
                SEEN.append(sys.modules["_pytest.pastebin"])
                assert SEEN[0] is SEEN[-1]

            """,
        },
    )
    same_counts_as_pytest(tmp_path, "-p", "pytester")


#: a plugin's fixture, and a test whose pytester run inside counts the warnings of that run: pytest's "Module
#: already imported so cannot be rewritten" for a module it marks that another loader imported
_ANSWER_PLUGIN = """
import pytest


@pytest.fixture
def answer():
    return 42
"""
_INNER_RUN_TEST = """
pytest_plugins = ["pytester"]


def test_inner_run_warns_of_nothing(pytester, answer):
    pytester.makepyfile(test_inside="def test_a(answer): assert answer == 42")
    pytester.runpytest().assert_outcomes(passed=1, warnings=0)
"""


def test_a_plugins_sdist_egg_info_marks_its_tests_package_as_pytest_does(tmp_path: Path) -> None:
    """pytest-asyncio 1.5.0, its own suite run from its sdist: the sdist's ``pytest_asyncio.egg-info`` folder,
    on the path next to the installed plugin, lists every file of the sdist (SOURCES.txt), so pytest marks
    ``tests``, the suite's own package, for rewriting, and imports it through its rewriting hook. A pytester
    run inside a test marks it again; under rt it had been imported by another loader, and the inner run
    warned "Module already imported so cannot be rewritten: tests": 4 of its tests, which count the inner
    run's warnings, failed. pytest 9.2 (``python -m pytest``, the project's root on the path): 1 passed."""
    write_files(
        tmp_path,
        {
            "myplugin.py": _ANSWER_PLUGIN,
            "myplugin.egg-info/PKG-INFO": "Metadata-Version: 2.1\nName: myplugin\nVersion: 1.0\n",
            "myplugin.egg-info/entry_points.txt": "[pytest11]\nmyplugin = myplugin\n",
            "myplugin.egg-info/SOURCES.txt": "myplugin.py\ntests/__init__.py\ntests/test_inner.py\n",
            "tests/__init__.py": "",
            "tests/test_inner.py": _INNER_RUN_TEST,
        },
    )
    same_counts_as_pytest(tmp_path)


def test_every_distribution_of_a_plugin_on_the_path_is_marked_for_rewriting(tmp_path: Path) -> None:
    """pytest-rerunfailures 16.7, its own suite run from its sdist, installed editable: its installed
    metadata lists no module, and the sdist's ``src/pytest_rerunfailures.egg-info``, on the path after it
    (the editable install's ``src`` entry), lists every file of the sdist below a first folder, so pytest,
    which reads every distribution ``importlib.metadata.distributions()`` lists, strips that folder and marks
    the suite's own test module ``test_pytest_rerunfailures``; rt read only the first distribution of the
    plugin's name, and a pytester run inside a test warned "Module already imported so cannot be rewritten"
    (pytest 238 passed, rt 237 and 1 failed; now the same). pytest 9.2: 1 passed."""
    write_files(
        tmp_path,
        {
            # the installed metadata of an editable install: an entry point, no module of its own listed
            "site/myplugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: myplugin\nVersion: 1.0\n",
            "site/myplugin-1.0.dist-info/entry_points.txt": "[pytest11]\nmyplugin = myplugin\n",
            "site/myplugin-1.0.dist-info/RECORD": "myplugin-1.0.dist-info/METADATA,,\n__editable__.myplugin.pth,,\n",
            "src/myplugin.py": _ANSWER_PLUGIN,
            "src/myplugin.egg-info/PKG-INFO": "Metadata-Version: 2.1\nName: myplugin\nVersion: 1.0\n",
            "src/myplugin.egg-info/entry_points.txt": "[pytest11]\nmyplugin = myplugin\n",
            "src/myplugin.egg-info/SOURCES.txt": "README.rst\nsrc/myplugin.py\ntests/test_myplugin.py\n",
            "tests/test_myplugin.py": _INNER_RUN_TEST,
        },
    )
    env = {"PYTHONPATH": os.pathsep.join((str(tmp_path / "site"), str(tmp_path / "src")))}
    pytest_run = run_pytest(cwd=tmp_path, env=env)
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 1}, pytest_run.output
    rt_run = run_cli("test", cwd=tmp_path, env=env)
    assert summary_counts(rt_run.stderr) == {"pass": 1}, rt_run.output
