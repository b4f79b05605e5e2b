"""Collection through pytest's hooks, compared with pytest's counts: every file handed to the
``pytest_collect_file`` hooks of the conftest.py files above it (conftest.py files included) and of the
installed and ``-p`` plugins, and the ``pytest.Module`` subclasses such hooks return (pytest-relaxed's)."""

from __future__ import annotations

from pathlib import Path

from rt.testing import same_counts_as_pytest, write_files

#: a plugin in the manner of pytest-relaxed: every .py file but conftest.py and test_*.py is a module whose
#: public functions and classes (nested ones too, with their outer class's helpers) are tests, and names
#: starting with "_" are not collected
RELAXED_PLUGIN = """
import inspect
import types

import pytest
from _pytest.python import PyCollector
from _pytest.terminal import TerminalReporter


def pytest_ignore_collect(collection_path, config):
    return collection_path.name.startswith("_")


def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".py" or file_path.name == "conftest.py" or file_path.name.startswith("test_"):
        return None
    return SpecModule.from_parent(parent=parent, path=file_path)


class Reporter(TerminalReporter):
    def __init__(self, builtin):
        TerminalReporter.__init__(self, builtin.config)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    builtin = config.pluginmanager.getplugin("terminalreporter")
    config.pluginmanager.unregister(builtin)
    config.pluginmanager.register(Reporter(builtin), "terminalreporter")


class Relaxed(PyCollector):
    def istestclass(self, obj, name):
        return not name.startswith("_")

    def istestfunction(self, obj, name):
        return not name.startswith("_") and not hasattr(obj, "_pytestfixturefunction")


class SpecModule(Relaxed, pytest.Module):
    def istestfunction(self, obj, name):
        return super().istestfunction(obj, name) and inspect.getmodule(obj) is self.obj

    def istestclass(self, obj, name):
        return super().istestclass(obj, name) and inspect.getmodule(obj) is self.obj

    def collect(self):
        return [
            SpecClass.from_parent(item.parent, name=item.name) if isinstance(item, pytest.Class) else item
            for item in super().collect()
        ]


class SpecClass(Relaxed, pytest.Class):
    def _getobj(self):
        obj = super()._getobj()
        if isinstance(self.parent, SpecClass):
            for name in set(dir(self.parent.obj)) - set(dir(obj)):
                value = getattr(self.parent.obj, name)
                if not isinstance(value, type) and name.startswith("_") and not name.startswith("__"):
                    setattr(obj, name, value)
        return obj

    def collect(self):
        return [
            SpecClass.from_parent(item.parent, name=item.name) if isinstance(item, pytest.Class) else item
            for item in super().collect()
        ]
"""

SPEC_TESTS = {
    "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef word():\n    return 'spec'\n",
    "tests/parser.py": (
        "import os\n"
        "from os.path import join\n\n"
        "def parses_a_word(word):\n    assert word == 'spec'\n\n"
        "def fails_plainly():\n    assert 1 == 2\n\n"
        "def _helper():\n    raise AssertionError('not a test')\n\n"
        "class Parser:\n"
        "    def _made(self):\n        return 3\n\n"
        "    def makes_three(self):\n        assert self._made() == 3\n\n"
        "    class nested:\n"
        "        def sees_the_outer_helper(self):\n            assert self._made() == 3\n\n"
        "        def is_skipped(self):\n            import pytest\n            pytest.skip('no')\n"
    ),
    "tests/_private.py": "def would_fail():\n    assert False\n",
    "tests/test_plain.py": "def test_one():\n    pass\n\ndef helper_not_a_test():\n    assert False\n",
    "tests/data.txt": "not python\n",
}


def test_an_installed_plugins_collect_file_hook_gets_every_python_file(tmp_path: Path) -> None:
    """invoke 3.0.3 with pytest-relaxed: the plugin (an installed distribution's pytest11 entry point) collects
    every .py file of tests/ as its own Module subclass whose naming rules take every public function and
    class, and nested classes with their outer class's helpers; it replaces pytest's terminal reporter, whose
    output rt keeps its own. Before, rt handed the plugin no file and found no test."""
    site = tmp_path / "site"
    write_files(
        site,
        {
            "relaxed_like.py": RELAXED_PLUGIN,
            "relaxed_like-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: relaxed-like\nVersion: 1.0\n",
            "relaxed_like-1.0.dist-info/entry_points.txt": "[pytest11]\nrelaxed = relaxed_like\n",
        },
    )
    project = write_files(tmp_path / "project", {**SPEC_TESTS, "pytest.ini": "[pytest]\n"})
    pytest_run, rt_run = same_counts_as_pytest_with_path(project, site)
    assert "4 pass" in rt_run.stderr and "1 fail" in rt_run.stderr and "1 skip" in rt_run.stderr, (
        rt_run.output
    )


def same_counts_as_pytest_with_path(project: Path, site: Path, *args: str) -> tuple[object, object]:
    """:func:`same_counts_as_pytest` with ``site`` on PYTHONPATH (a plugin distribution both runners load)."""
    from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts

    env = {"PYTHONPATH": str(site)}
    pytest_run = run_pytest(*args, cwd=project, env=env)
    rt_run = run_cli("test", *args, cwd=project, env=env)
    expected = counts_from_pytest(pytest_run.stdout)
    assert expected, pytest_run.output
    assert summary_counts(rt_run.stderr) == expected, (pytest_run.output, rt_run.output)
    return pytest_run, rt_run


def test_a_p_plugins_collect_file_hook_and_a_module_that_does_not_import(tmp_path: Path) -> None:
    """The same plugin named with ``-p`` in addopts; a module it takes that fails to import is a collection
    error that stops the run (pytest's "Interrupted: 1 error during collection")."""
    project = write_files(
        tmp_path,
        {
            **SPEC_TESTS,
            "relaxed_like.py": RELAXED_PLUGIN,
            "pytest.ini": "[pytest]\naddopts = -p relaxed_like\npythonpath = .\ntestpaths = tests\n",
        },
    )
    same_counts_as_pytest(project)
    (project / "tests" / "broken.py").write_text("import not_a_module_anywhere\n")
    _, rt_run = same_counts_as_pytest(project)
    assert "Interrupted: 1 error during collection" in rt_run.stderr, rt_run.output


def test_a_conftest_collector_gets_the_conftest_file_itself(tmp_path: Path) -> None:
    """wrapt 2.5.2: tests/conftest.py's ``pytest_collect_file`` returns a collector for the conftest.py file
    itself (pytest hands it every file, conftest.py files too), which yields one item per data file."""
    project = write_files(
        tmp_path,
        {
            "tests/conftest.py": (
                "import pytest\n\n"
                "class Pair(pytest.Item):\n"
                "    def runtest(self):\n"
                "        if 'skip' in self.name:\n            pytest.skip('no tool')\n"
                "        assert 'bad' not in self.name\n\n"
                "class Pairs(pytest.File):\n"
                "    def collect(self):\n"
                "        for case in sorted(self.path.parent.glob('cases/case_*.out')):\n"
                "            yield Pair.from_parent(self, name=case.stem)\n\n"
                "def pytest_collect_file(file_path, parent):\n"
                "    if file_path.name == 'conftest.py':\n"
                "        return Pairs.from_parent(parent, path=file_path)\n"
            ),
            "tests/cases/case_good.out": "",
            "tests/cases/case_skip.out": "",
            "tests/cases/case_bad.out": "",
            "tests/test_plain.py": "def test_one():\n    pass\n",
        },
    )
    _, rt_run = same_counts_as_pytest(project)
    assert "tests/conftest.py" in rt_run.stderr, rt_run.output


def test_a_conftest_hook_naming_no_suffix_gets_every_file(tmp_path: Path) -> None:
    """A conftest.py's ``pytest_collect_file`` that reads which files it takes from the configuration (no
    suffix in its source) is handed every file, as pytest hands it."""
    project = write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\ncase_glob = *.case\n",
            "conftest.py": (
                "import fnmatch\nimport pytest\n\n"
                "def pytest_addoption(parser):\n    parser.addini('case_glob', 'files of cases')\n\n"
                "class Case(pytest.Item):\n"
                "    def runtest(self):\n        assert self.path.read_text().strip() == 'ok'\n\n"
                "class Cases(pytest.File):\n"
                "    def collect(self):\n        yield Case.from_parent(self, name=self.path.stem)\n\n"
                "def pytest_collect_file(file_path, parent):\n"
                "    if fnmatch.fnmatch(file_path.name, parent.config.getini('case_glob')):\n"
                "        return Cases.from_parent(parent, path=file_path)\n"
            ),
            "cases/one.case": "ok\n",
            "cases/two.case": "not ok\n",
            "cases/notes.txt": "ok\n",
        },
    )
    same_counts_as_pytest(project)


def test_pycollect_makemodule_of_a_conftest(tmp_path: Path) -> None:
    """wrapt 2.5.2's conftest.py: ``pytest_pycollect_makemodule`` returns a collector of no tests for the
    modules of a newer Python (they are not imported: their syntax is not this Python's), and a
    ``pytest.Module`` subclass takes ``check_*`` functions too; other modules are pytest's own."""
    project = write_files(
        tmp_path,
        {
            "tests/conftest.py": (
                "import pytest\n\n"
                "class Dummy(pytest.File):\n"
                "    def collect(self):\n        return []\n\n"
                "class Checks(pytest.Module):\n"
                "    def istestfunction(self, obj, name):\n"
                "        return name.startswith('check_') or super().istestfunction(obj, name)\n\n"
                "def pytest_pycollect_makemodule(module_path, parent):\n"
                "    if module_path.name.endswith('_py399.py'):\n"
                "        return Dummy.from_parent(parent, path=module_path)\n"
                "    if 'checks' in module_path.name:\n"
                "        return Checks.from_parent(parent, path=module_path)\n"
            ),
            "tests/test_new_py399.py": "def test_new():\n    match = = 1\n",
            "tests/test_checks.py": (
                "import pytest\n\n"
                "def check_one():\n    pass\n\n"
                "@pytest.mark.parametrize('n', [1, 2])\ndef check_param(n):\n    assert n == 1\n\n"
                "def test_plain():\n    pass\n"
            ),
            "tests/test_other.py": "def test_other():\n    pass\n\ndef check_not_here():\n    assert False\n",
        },
    )
    _, rt_run = same_counts_as_pytest(project)
    assert "4 pass" in rt_run.stderr and "1 fail" in rt_run.stderr, rt_run.output


#: a conftest.py that collects classes its name filters leave out, one of them once per backend (a subclass it
#: sets on the module), by answering pytest_pycollect_makeitem with pytest's own Class nodes, as SQLAlchemy's
#: testing plugin does for its `*Test` classes
CLASSES_MADE_BY_A_HOOK = {
    "conftest.py": """
        import inspect
        import pytest

        def pytest_pycollect_makeitem(collector, name, obj):
            if inspect.isclass(obj) and name.endswith("Test"):
                if getattr(obj, "per_backend", False):
                    made = []
                    for backend in ("sqlite", "memory"):
                        sub = type(f"{name}_{backend}", (obj,), {"backend": backend})
                        setattr(collector.module, sub.__name__, sub)
                        made.append(pytest.Class.from_parent(collector, name=sub.__name__))
                    return made
                return [pytest.Class.from_parent(collector, name=name)]
    """,
    "test_made.py": """
        import pytest

        class OrdinaryTest:
            def test_one(self):
                pass

            @pytest.mark.parametrize("n", [1, 2])
            def test_param(self, n, tmp_path):
                assert n < 2

        class BackendTest:
            per_backend = True
            backend = None

            def test_backend(self):
                assert self.backend in ("sqlite", "memory")

            def test_only_sqlite(self):
                assert self.backend == "sqlite"

        class TestPlain:
            def test_plain(self):
                pass
    """,
}


def test_pytest_class_nodes_a_makeitem_hook_answers_with_are_collected(tmp_path: Path) -> None:
    """A ``pytest_pycollect_makeitem`` that answers with pytest's own ``Class`` of a class rt's name filters
    leave out, or of subclasses it made under other names, has them collected as test classes, fixtures,
    parametrize and all (rt dropped the names: SQLAlchemy's `*Test` classes ran no test)."""
    write_files(tmp_path, CLASSES_MADE_BY_A_HOOK)
    _, rt_run = same_counts_as_pytest(tmp_path)
    assert "(fail) BackendTest_memory > test_only_sqlite" in rt_run.stderr
    assert "(pass) BackendTest_sqlite > test_only_sqlite" in rt_run.stderr
