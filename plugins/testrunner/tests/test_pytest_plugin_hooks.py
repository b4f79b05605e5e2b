"""Hooks of installed pytest plugins (``pytest11`` entry points) that rt calls as pytest does, compared with
pytest's counts and node ids on the same small project.

Each plugin is a distribution of the test's own making, written into a folder both runners get on
``PYTHONPATH``, so pytest and ``rt test`` load it from its entry point as they load any installed plugin.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rt.testing import CliResult, counts_from_pytest, run_cli, run_pytest, summary_counts, write_files


def plugin_site(root: Path, name: str, source: str) -> Path:
    """A folder holding plugin module ``name`` and its distribution's ``pytest11`` entry point."""
    info = f"{name}-1.0.dist-info"
    return write_files(
        root,
        {
            f"{name}.py": source,
            f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 1.0\n",
            f"{info}/entry_points.txt": f"[pytest11]\n{name} = {name}\n",
        },
    )


def node_ids(output: str) -> list[str]:
    return sorted(line.strip() for line in output.splitlines() if "::" in line and " " not in line.strip())


def same_as_pytest(project: Path, site: Path) -> tuple[CliResult, CliResult]:
    """pytest and ``rt test`` on ``project`` with the plugin of ``site``: the same counts and node ids."""
    env = {"PYTHONPATH": str(site)}
    pytest_run = run_pytest(cwd=project, env=env)
    rt_run = run_cli("test", cwd=project, env=env)
    expected = counts_from_pytest(pytest_run.stdout)
    assert expected, pytest_run.output
    assert summary_counts(rt_run.stderr) == expected, (pytest_run.output, rt_run.output)
    pytest_ids = node_ids(run_pytest("--co", "-q", cwd=project, env=env).stdout)
    assert pytest_ids, pytest_run.output
    assert node_ids(run_cli("test", "--co", cwd=project, env=env).stdout) == pytest_ids
    return pytest_run, rt_run


MAKEITEM_PLUGIN = """
import inspect

import pytest


class Check(pytest.Item):
    def __init__(self, *, obj, **kwargs):
        super().__init__(**kwargs)
        self.obj = obj

    def runtest(self):
        self.obj()


def pytest_pycollect_makeitem(collector, name, obj):
    if inspect.isfunction(obj) and name.startswith("check_"):
        return Check.from_parent(collector, name=name, obj=obj)
    if name == "test_hidden":
        return []
    return None
"""


def test_an_installed_plugins_pycollect_makeitem_makes_and_drops_items(tmp_path: Path) -> None:
    """An installed plugin's ``pytest_pycollect_makeitem`` makes items of names pytest's rules do not take
    (``check_*`` functions) and drops one they do take (an empty list for ``test_hidden``). rt called only
    conftest.py files' implementations: the ``check_*`` tests were missing and ``test_hidden`` failed."""
    site = plugin_site(tmp_path / "site", "makeitem_plugin", MAKEITEM_PLUGIN)
    project = write_files(
        tmp_path / "project",
        {
            "pytest.ini": "[pytest]\n",
            "test_checks.py": """
            def check_good():
                assert 1


            def check_bad():
                assert 0


            def test_plain():
                pass


            def test_hidden():
                assert False


            class TestKept:
                def test_method(self):
                    pass
            """,
        },
    )
    _, rt_run = same_as_pytest(project, site)
    assert "3 pass" in rt_run.stderr and "1 fail" in rt_run.stderr, rt_run.output


FIXTURE_ADDING_PLUGIN = """
import pytest

USED = []


@pytest.fixture
def frozen():
    USED.append(True)
    yield "frozen"
    USED.pop()


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("frozen") or item.name.endswith("[added]"):
            item.fixturenames.insert(0, "frozen")


def pytest_configure(config):
    config.addinivalue_line("markers", "frozen: set the frozen fixture up for the test")
"""


def test_a_fixture_a_plugin_adds_to_item_fixturenames_is_set_up(tmp_path: Path) -> None:
    """pytest-freezer 0.4.9: its ``pytest_collection_modifyitems`` inserts ``freezer`` into the
    ``fixturenames`` of each test marked ``freeze_time``, and pytest sets it up with the test. rt handed
    plugins a copy of the list, so the time was not frozen. The parametrized tests of one function share
    pytest's list: a name added for one is set up for all of them."""
    site = plugin_site(tmp_path / "site", "fixture_adding_plugin", FIXTURE_ADDING_PLUGIN)
    project = write_files(
        tmp_path / "project",
        {
            "pytest.ini": "[pytest]\n",
            "test_added.py": """
            import pytest

            from fixture_adding_plugin import USED


            @pytest.mark.frozen
            def test_marked():
                assert USED == [True]


            def test_plain():
                assert USED == []


            @pytest.mark.parametrize("case", ["added", "not_added"])
            def test_param(case):
                assert USED == [True]
            """,
        },
    )
    _, rt_run = same_as_pytest(project, site)
    assert "4 pass" in rt_run.stderr, rt_run.output


#: a plugin in the manner of pytest-describe: each ``spec_*`` function is a block, a ``pytest.Module`` made of
#: the names the function returns (its locals), whose functions are all tests and whose fixtures are its own;
#: a block's ``needs`` are fixtures its tests get, added by the plugin's ``pytest_generate_tests``
BLOCK_PLUGIN = """
import types

import pytest


class Block(pytest.Module):
    @classmethod
    def from_parent(cls, parent, obj):
        node = super().from_parent(parent=parent, path=parent.path, nodeid=f"{parent.nodeid}::{obj.__name__}")
        node.name = obj.__name__
        node.function = obj
        node.own_markers = list(getattr(obj, "pytestmark", []))
        return node

    def _getobj(self):
        module = types.ModuleType(self.name)
        module.__dict__.update(self.function())
        return module

    def collect(self):
        self.session._fixturemanager.parsefactories(self)
        return super().collect()

    def funcnamefilter(self, name):
        return not name.startswith("_")

    def classnamefilter(self, name):
        return False


def pytest_pycollect_makeitem(collector, name, obj):
    if isinstance(obj, types.FunctionType) and name.startswith("spec_"):
        return Block.from_parent(collector, obj)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc):
    definition = metafunc.definition
    for block in [node for node in definition.listchain() if isinstance(node, Block)]:
        for name in getattr(block.function, "needs", ()):
            if name in metafunc.fixturenames:
                continue
            metafunc.fixturenames.append(name)
            info = definition._fixtureinfo
            object.__setattr__(info, "initialnames", (*info.initialnames, name))
            found = definition.session._fixturemanager.getfixturedefs(name, definition)
            metafunc._arg2fixturedefs[name] = list(found or ())
"""

BLOCK_TESTS = """
import pytest


@pytest.fixture
def where():
    return "module"


@pytest.fixture(params=[1, 2])
def level(request):
    return request.param


SET_UP = []


@pytest.fixture(scope="module")
def once():
    SET_UP.append(1)
    return len(SET_UP)


def test_module_fixture_first(once):
    assert once == 1


def spec_outer():
    @pytest.fixture
    def local():
        return 5

    def sees_both(local, where, once):
        assert (local, where, once) == (5, "module", 1)

    @pytest.mark.parametrize("n", [1, 2])
    def parametrized(n):
        assert n in (1, 2)

    def _helper():
        assert False

    @pytest.mark.skip(reason="the whole block")
    def spec_skipped():
        def would_fail():
            assert False

        return locals()

    def spec_inner():
        @pytest.fixture
        def where():
            return "inner"

        def sees_the_override(where):
            assert where == "inner"

        def fails():
            assert 1 == 2

        return locals()

    return locals()


def spec_with_needs():
    def at_each_level(request):
        assert "level" in request.fixturenames
        assert request.getfixturevalue("level") in (1, 2)

    return locals()


spec_with_needs.needs = ("level",)


def test_block_fixtures_stay_inside(request):
    with pytest.raises(pytest.FixtureLookupError):
        request.getfixturevalue("local")
"""


def test_a_plugins_module_collector_for_a_name_holds_its_tests(tmp_path: Path) -> None:
    """pytest-describe 3.2.0: its ``pytest_pycollect_makeitem`` makes a ``pytest.Module`` of each
    ``describe_*`` function (its ``_getobj`` runs the function for its locals), nested blocks too, and its
    ``pytest_generate_tests`` looks for its blocks in ``metafunc.definition.listchain()`` and adds the fixtures
    a block takes as arguments to ``metafunc.fixturenames``. rt collected the file's names into such a
    collector instead of its own (errors, wrong tests), and the generate hook failed on rt's definition (no
    ``listchain``), which left the plugin out. Node ids ``file::block::inner::test``, the block's fixtures
    visible to its own tests only, its marks on its tests, a fixture a hook adds set up (and parametrized),
    each test once in ``pytest_collection_modifyitems``, the file's module fixture shared with the blocks."""
    site = plugin_site(tmp_path / "site", "block_plugin", BLOCK_PLUGIN)
    project = write_files(tmp_path / "project", {"pytest.ini": "[pytest]\n", "test_blocks.py": BLOCK_TESTS})
    conftest = (
        "def pytest_collection_modifyitems(items):\n    assert len(set(map(id, items))) == len(items) == 10\n"
    )
    (project / "conftest.py").write_text(conftest)
    _, rt_run = same_as_pytest(project, site)
    assert "8 pass" in rt_run.stderr and "1 skip" in rt_run.stderr and "1 fail" in rt_run.stderr, (
        rt_run.output
    )
    assert "left out" not in rt_run.stderr, rt_run.output


#: a module-scoped fixture first set up inside a block lasts as long as that block (pytest's module scope of a
#: test is its nearest ``pytest.Module``, the block); a test between two nested blocks runs between them
BLOCK_SCOPES = """
import pytest

MADE = []
ORDER = []


@pytest.fixture(scope="module")
def resource():
    MADE.append(1)
    yield len(MADE)
    MADE.append(-1)


def spec_a():
    def first(resource):
        ORDER.append("first")
        assert resource == 1

    def spec_inner():
        def deep(resource):
            ORDER.append("deep")
            assert resource == 1

        return locals()

    def after_inner(resource):
        ORDER.append("after_inner")
        assert resource == 1

    return locals()


def spec_b():
    def spec_c():
        def only(resource):
            assert resource == 3

        return locals()

    def other(resource):
        assert MADE == [1, -1, 1, -1, 1]

    return locals()


def test_last(resource):
    assert ORDER == ["first", "deep", "after_inner"]
    assert resource == 7
"""


def test_a_module_fixture_first_set_up_in_a_block_ends_with_the_block(tmp_path: Path) -> None:
    """pytest-describe 3.2.0: a module-scoped fixture is pytest's for the nearest ``pytest.Module`` of the test
    that sets it up, a ``describe_*`` block: torn down when the block ends, made again for the next block
    (rt kept one for the whole file). And a nested block between two tests of its block runs between them
    (rt ran it after the block's tests). pytest 9.2: 6 passed."""
    site = plugin_site(tmp_path / "site", "block_plugin", BLOCK_PLUGIN)
    project = write_files(tmp_path / "project", {"pytest.ini": "[pytest]\n", "test_scopes.py": BLOCK_SCOPES})
    _, rt_run = same_as_pytest(project, site)
    assert "6 pass" in rt_run.stderr, rt_run.output


#: a plugin in the manner of pytest-bdd: its ``pytest_configure`` keeps the config, which a function of the plugin
#: reads while a test module is imported (pytest-bdd's ``scenarios()``)
CONFIGURED_PLUGIN = """
CONFIGS = []


def pytest_configure(config):
    CONFIGS.append(config)


def make_tests(namespace):
    config = CONFIGS[-1]
    namespace["test_made"] = lambda: None
    namespace["test_made_fails"] = lambda: config.getoption("nothing_like_this")
"""


def test_a_test_module_that_imports_pytest_has_the_plugins_configured_first(tmp_path: Path) -> None:
    """pytest-bdd 9.0.1 in a project without pytest configuration or conftest.py: its test module calls
    ``scenarios()`` at import, which reads the config its ``pytest_configure`` kept. rt loaded and configured
    the installed plugins only in a pytest project (a configuration file, a conftest.py, pytest already
    imported), so the module failed to import (``IndexError``: 1 error). pytest 9.2: 1 passed, 1 failed."""
    site = plugin_site(tmp_path / "site", "configured_plugin", CONFIGURED_PLUGIN)
    project = write_files(
        tmp_path / "project",
        {
            "test_made.py": """
            import pytest

            from configured_plugin import make_tests

            make_tests(globals())
            """
        },
    )
    _, rt_run = same_as_pytest(project, site)
    assert "1 pass" in rt_run.stderr and "1 fail" in rt_run.stderr, rt_run.output


#: a plugin in the manner of pytest-isort and pytest-pycodestyle: one check item for every .py file
CHECK_PLUGIN = """
import pytest


class Check(pytest.Item):
    def runtest(self):
        if "TODO" in self.path.read_text():
            raise AssertionError(f"{self.path.name} has a TODO")


class Checked(pytest.File):
    def collect(self):
        yield Check.from_parent(self, name="CHECK")


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".py":
        return Checked.from_parent(parent, path=file_path)
    return None
"""


def test_an_installed_plugins_collect_file_gets_the_modules_doctest_modules_collects(tmp_path: Path) -> None:
    """dictdiffer at its GitHub head (1ae323e), ``--isort --pycodestyle --doctest-modules`` in its
    pytest.ini: pytest-isort and pytest-pycodestyle check every .py file, the package's modules included,
    which ``--doctest-modules`` collects for their doctests; rt handed the plugins' hooks the test modules
    only (117 of pytest's 133 items)."""
    site = plugin_site(tmp_path / "site", "check_plugin", CHECK_PLUGIN)
    project = write_files(
        tmp_path / "project",
        {
            "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
            "pkg/__init__.py": "",
            "pkg/good.py": '''
            def double(x):
                """
                >>> double(2)
                4
                """
                return 2 * x
            ''',
            "pkg/todo.py": "# TODO: something\n",
            "tests/test_pkg.py": "from pkg.good import double\n\n\ndef test_double():\n    assert double(3) == 6\n",
        },
    )
    _, rt_run = same_as_pytest(project, site)
    assert "todo.py has a TODO" in rt_run.stderr and "5 pass" in rt_run.stderr, rt_run.output


def test_markeval_namespace_hooks_give_names_to_condition_strings(tmp_path: Path) -> None:
    """``pytest_markeval_namespace(config)`` of the conftest.py files above a test and of the plugins: the
    names a ``skipif``/``xfail`` condition string is evaluated with, the nearest conftest.py's winning a
    name, then the test module's globals. rt did not call the hook: such a condition was a ``NameError``."""
    site = plugin_site(
        tmp_path / "site",
        "namespace_plugin",
        "def pytest_markeval_namespace():\n    return {'color': 'green', 'from_plugin': True}\n",
    )
    project = write_files(
        tmp_path / "project",
        {
            "pytest.ini": "[pytest]\n",
            "conftest.py": "def pytest_markeval_namespace(config):\n    return {'color': 'red', 'size': 1}\n",
            "sub/conftest.py": "def pytest_markeval_namespace():\n    return {'color': 'blue'}\n",
            "test_top.py": """
            import pytest

            LOCAL = 5


            @pytest.mark.skipif("color == 'red' and from_plugin", reason="red")
            def test_red_skipped():
                pass


            @pytest.mark.skipif("size == 2")
            def test_size_runs():
                pass


            @pytest.mark.xfail("LOCAL == 5 and color == 'red'", reason="module globals too")
            def test_xfailed():
                assert False
            """,
            "sub/test_sub.py": """
            import pytest


            @pytest.mark.skipif("color == 'blue' and size == 1", reason="blue")
            def test_blue_skipped():
                pass


            @pytest.mark.skipif("color != 'blue'")
            def test_blue_runs():
                pass
            """,
        },
    )
    _, rt_run = same_as_pytest(project, site)
    assert "2 pass" in rt_run.stderr and "2 skip" in rt_run.stderr and "1 xfail" in rt_run.stderr, (
        rt_run.output
    )


def file_each_runner_writes(project: Path, site: Path, name: str) -> list[tuple[str, str]]:
    """pytest, then ``rt test`` on ``project`` with the plugin of ``site``: the text of the file ``name`` each
    run wrote (removed after each, so a run that writes none fails) and the run's output."""
    written = []
    for run in (run_pytest, lambda **kwargs: run_cli("test", **kwargs)):
        result = run(cwd=project, env={"PYTHONPATH": str(site)})
        written.append(((project / name).read_text(), result.output))
        (project / name).unlink()
    return written


#: an installed plugin that wraps each test's protocol (as pytest-profiling and pytest-json-report do)
PROTOCOL_PLUGIN = """
import pytest

LOG = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    LOG.append(f"protocol start {item.name}")
    outcome = yield
    LOG.append(f"protocol end {item.name} {outcome.get_result()}")


def pytest_sessionfinish(session):
    with open("hooks.log", "w") as log:
        log.write("\\n".join(LOG))
"""

#: a conftest.py whose wrappers time and patch around the set-up and teardown of the fixtures
PROTOCOL_CONFTEST = """
import os

import pytest

from protocolplugin import LOG


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    LOG.append(f"setup start {item.name}")
    os.environ["PATCHED_FOR_SETUP"] = "1"
    try:
        return (yield)
    finally:
        del os.environ["PATCHED_FOR_SETUP"]
        LOG.append(f"setup end {item.name}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    LOG.append(f"teardown start {item.name}")
    outcome = yield
    LOG.append(f"teardown end {item.name} {outcome.excinfo is not None}")


def pytest_runtest_logstart(nodeid, location):
    LOG.append(f"logstart {nodeid} {location[2]}")


def pytest_runtest_logfinish(nodeid, location):
    LOG.append(f"logfinish {nodeid}")


@pytest.fixture
def resource():
    LOG.append(f"fixture setup {os.environ.get('PATCHED_FOR_SETUP')}")
    state = {"value": 1}
    yield state
    LOG.append("fixture teardown")
    if state.get("broken"):
        raise RuntimeError("teardown broke")
"""


def test_protocol_setup_and_teardown_wrappers_wrap_the_fixtures(tmp_path: Path) -> None:
    """pytest-profiling 1.8 and pytest-json-report 1.5 wrap each test's ``pytest_runtest_protocol``; a
    conftest.py's ``pytest_runtest_setup`` wrapper patches around the fixtures' set-up, its
    ``pytest_runtest_teardown`` wrapper sees the fixtures' teardown error. rt called neither the protocol
    hooks nor ``pytest_runtest_logstart``/``_logfinish``, and set the fixtures up after the setup wrappers had
    finished. Both runners' hooks write what they saw, in order, to a file: the files are the same."""
    site = plugin_site(tmp_path / "site", "protocolplugin", PROTOCOL_PLUGIN)
    project = write_files(
        tmp_path / "project",
        {
            "conftest.py": PROTOCOL_CONFTEST,
            "test_wrapped.py": """
            def test_uses_the_resource(resource):
                assert resource["value"] == 1


            def test_fails(resource):
                resource["broken"] = True
                assert resource["value"] == 2


            def test_alone():
                pass
            """,
        },
    )
    (pytest_log, pytest_output), (rt_log, rt_output) = file_each_runner_writes(project, site, "hooks.log")
    assert "fixture setup 1" in pytest_log and "protocol end test_fails True" in pytest_log, pytest_output
    assert "teardown end test_fails True" in pytest_log, pytest_output
    assert rt_log == pytest_log, (pytest_log, rt_log, rt_output)
    same_as_pytest(project, site)


#: an installed plugin that writes a report file as pytest-json-report and pytest-html do: an object it
#: registers in ``pytest_configure`` declares its own ``firstresult`` hook in ``pytest_addhooks``, reads each
#: phase's captured output from ``item._report_sections`` and each report's status from pytest's own
#: ``pytest_report_teststatus``, writes the file when the session finishes and a last line in
#: ``pytest_unconfigure``; the installed distributions come from ``list_plugin_distinfo`` (pytest-metadata)
REPORT_PLUGIN = """
import json

import pytest


class Hooks:
    @pytest.hookspec(firstresult=True)
    def pytest_report_stage(self, report):
        pass


class Report:
    def __init__(self, config):
        self.config = config
        self.rows = []

    def pytest_addhooks(self, pluginmanager):
        pluginmanager.add_hookspecs(Hooks)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = (yield).get_result()
        report.streams = [(when, key, text) for when, key, text in item._report_sections if when == call.when]

    def pytest_runtest_logreport(self, report):
        status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)[0]
        stage = self.config.hook.pytest_report_stage(report=report)
        self.rows.append([report.nodeid, report.when, status, stage, report.streams])

    def pytest_report_stage(self, report):
        return report.outcome

    def pytest_sessionfinish(self, session):
        summary = {"collected": session.testscollected, "root": session.fspath.basename}
        with open("report.json", "w") as file:
            json.dump({"summary": summary, "rows": self.rows}, file, indent=1)


def pytest_configure(config):
    config.pluginmanager.register(Report(config), "report")
    names = [dist.project_name for _, dist in config.pluginmanager.list_plugin_distinfo()]
    config.report_distribution = "report-plugin" in names


def pytest_unconfigure(config):
    with open("report.json", "a") as file:
        file.write(f"\\nunconfigured {config.report_distribution}")
"""


def test_a_report_plugins_file_is_the_same_as_under_pytest(tmp_path: Path) -> None:
    """pytest-json-report 1.5 and pytest-html 4.2 (with pytest-metadata 3.1) under ``rt test``: pytest-metadata's
    ``pytest_configure`` failed (no ``pluginmanager.list_plugin_distinfo``), json-report's hooks on
    ``session.testscollected``, ``session.fspath``, ``item._report_sections`` and ``config.hook.
    pytest_report_teststatus`` (pytest's own implementations answer it), its stage hook gave a list (the
    ``firstresult`` spec its registered object declares in ``pytest_addhooks`` was never read), a test its
    ``skip`` mark skipped had no set-up and teardown reports (missing from both files), and no
    ``pytest_unconfigure`` was called. The file the plugin writes is the same under both runners."""
    site = plugin_site(tmp_path / "site", "report_plugin", REPORT_PLUGIN)
    project = write_files(
        tmp_path / "project",
        {
            "pytest.ini": "[pytest]\n",
            "test_report.py": """
            import sys

            import pytest


            @pytest.fixture
            def noisy():
                print("set up")
                yield
                print("torn down", file=sys.stderr)


            def test_prints(noisy):
                print("hello")


            def test_fails():
                assert 1 == 2


            @pytest.mark.skip(reason="not today")
            def test_skipped():
                pass


            @pytest.mark.xfail
            def test_xfails():
                assert 0
            """,
        },
    )
    (pytest_report, pytest_output), (rt_report, rt_output) = file_each_runner_writes(
        project, site, "report.json"
    )
    assert pytest_report.endswith("unconfigured True"), pytest_output
    assert '"skipped"' in pytest_report and "hello" in pytest_report, pytest_output
    assert rt_report == pytest_report, (pytest_report, rt_report, rt_output)
    same_as_pytest(project, site)


def test_a_report_plugins_file_under_parallel_has_every_workers_rows(tmp_path: Path) -> None:
    """``--parallel=2`` with a plugin that writes its file from the reports it gets in
    ``pytest_runtest_logreport`` (pytest-html 4.2, pytest-json-report 1.5): each worker's plugin saw its own
    tests only, and the file of the last worker to end stayed, with its rows alone. The other workers'
    reports, serialized as pytest-xdist's workers send theirs (what the plugin's hookwrapper added to a report
    travels too), are now given to the plugin of the worker that ends the session before its
    ``pytest_sessionfinish``: the file has every row of the one-process run, and of pytest's (in the order the
    workers finished the files, as under pytest-xdist)."""
    site = plugin_site(tmp_path / "site", "report_plugin", REPORT_PLUGIN)
    test_file = """
    import os
    import time
    from pathlib import Path

    import pytest


    def test_prints():
        # under --parallel=2, wait (a while at most) until the other worker runs a file too
        seen = Path(__file__).parent / "workers"
        seen.mkdir(exist_ok=True)
        (seen / os.environ.get("RT_TEST_WORKER", "pytest")).touch()
        deadline = time.monotonic() + 30
        while "RT_TEST_WORKER" in os.environ and len(list(seen.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        print("hello from NAME")


    def test_fails():
        assert 1 == 2


    @pytest.mark.skip(reason="not today")
    def test_skipped():
        pass
    """
    project = write_files(
        tmp_path / "project",
        {
            "pytest.ini": "[pytest]\n",
            **{f"test_{n}.py": test_file.replace("NAME", n) for n in ("a", "b", "c", "d")},
        },
    )
    reports = {}
    for name, args in (("pytest", None), ("one", ()), ("parallel", ("--parallel=2",))):
        env = {"PYTHONPATH": str(site)}
        shutil.rmtree(project / "workers", ignore_errors=True)
        result = (
            run_pytest(cwd=project, env=env) if args is None else run_cli("test", *args, cwd=project, env=env)
        )
        written = json.loads((project / "report.json").read_text().rsplit("\n", 1)[0])
        (project / "report.json").unlink()
        reports[name] = (written["summary"], sorted(map(str, written["rows"])))
        assert len(written["rows"]) == 4 * (3 + 3 + 2), (name, result.output)  # no call for a skip
    assert "hello from d" in str(reports["pytest"][1])
    assert sorted(path.name for path in (project / "workers").iterdir()) == ["1", "2"]
    assert reports["parallel"] == reports["one"] == reports["pytest"]


#: an installed plugin that calls marked tests itself (as pytest-twisted calls them in its reactor) and one
#: that wraps every test function (as pytest-memray's ``pytest_pyfunc_call`` wrapper puts a tracking wrapper
#: in ``pyfuncitem.obj``'s place)
PYFUNC_PLUGIN = """
import functools

import pytest

CALLS = []


class Tracker:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        function = pyfuncitem.obj

        @functools.wraps(function)
        def tracked(*args, **kwargs):
            CALLS.append("tracked " + pyfuncitem.name)
            return function(*args, **kwargs)

        pyfuncitem.obj = tracked
        yield


def pytest_configure(config):
    config.addinivalue_line("markers", "inreactor: the plugin calls the test")
    config.pluginmanager.register(Tracker(), "tracker")


def pytest_pyfunc_call(pyfuncitem):
    if pyfuncitem.get_closest_marker("inreactor") is None:
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    CALLS.append(pyfuncitem.name)
    pyfuncitem.obj(**arguments, called_by="plugin")
    return True
"""


def test_an_installed_plugins_pyfunc_call_calls_and_wraps_the_test(tmp_path: Path) -> None:
    """pytest-twisted 1.14 runs each test from its ``pytest_pyfunc_call`` (in its reactor) and answers True;
    pytest-memray 1.7's ``pytest_pyfunc_call`` wrapper puts a tracking function in the test's place. rt called
    no installed plugin's ``pytest_pyfunc_call`` (only a conftest.py's), so the plugin's keyword argument was
    missing and nothing was tracked. The hooks' record is the same under both runners."""
    site = plugin_site(tmp_path / "site", "pyfuncplugin", PYFUNC_PLUGIN)
    project = write_files(
        tmp_path / "project",
        {
            "pytest.ini": "[pytest]\n",
            "test_called.py": """
            import pytest

            from pyfuncplugin import CALLS


            @pytest.fixture
            def value():
                return 3


            @pytest.mark.inreactor
            def test_called_by_the_plugin(value, called_by=None):
                assert (value, called_by) == (3, "plugin")


            def test_called_by_the_runner(value, called_by=None):
                assert (value, called_by) == (3, None)


            def test_record():
                with open("calls.txt", "w") as file:
                    file.write("\\n".join(CALLS))
            """,
        },
    )
    (pytest_calls, pytest_output), (rt_calls, rt_output) = file_each_runner_writes(project, site, "calls.txt")
    assert "tracked test_called_by_the_plugin" in pytest_calls, pytest_output
    assert rt_calls == pytest_calls, (pytest_calls, rt_calls, rt_output)
    same_as_pytest(project, site)


#: a plugin in the manner of pytest-asyncio 1.5.0: its ``pytest_configure`` warns about its configuration
WARNING_PLUGIN = """
import warnings

import pytest


def pytest_configure(config):
    warnings.warn(pytest.PytestDeprecationWarning("The option 'loop_scope' is unset.\\nSet it explicitly."))
"""


def test_a_plugins_start_up_warning_the_filters_make_an_error_stops_the_run(tmp_path: Path) -> None:
    """pytest-asyncio 1.5.0 warns in ``pytest_configure`` when ``asyncio_default_fixture_loop_scope`` is unset;
    pytest configures its plugins under the suite's ``filterwarnings``, so with ``error`` among them (blinker,
    flask-caching, aiohttp-jinja2, janus) pytest stops before collecting: INTERNALERROR, status 3. rt left the
    plugin out and ran the suite, its async tests failing as if no plugin were installed. Now the run stops
    before any test, status 3, with one line naming the plugin, the hook and the warning. Without the
    ``error`` filter the warning is shown and the test runs under both. pytest 9.2: status 3, no test run."""
    site = plugin_site(tmp_path / "site", "warning_plugin", WARNING_PLUGIN)
    test = {"test_one.py": "def test_one():\n    pass\n"}
    strict = write_files(
        tmp_path / "strict",
        {**test, "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'},
    )
    env = {"PYTHONPATH": str(site)}
    pytest_run = run_pytest(cwd=strict, env=env)
    assert pytest_run.code == 3 and "INTERNALERROR" in pytest_run.output, pytest_run.output
    rt_run = run_cli("test", cwd=strict, env=env)
    assert rt_run.code == 3, rt_run.output
    assert summary_counts(rt_run.stderr) == {}, rt_run.output
    stops = [line for line in rt_run.stderr.splitlines() if "internal error" in line]
    assert stops == [
        "!!! internal error: pytest plugin 'warning-plugin': pytest_configure raised PytestDeprecationWarning: "
        "The option 'loop_scope' is unset. (a warning the filterwarnings make an error: pytest stops with "
        "an INTERNALERROR) !!!"
    ], rt_run.output
    assert "Traceback" not in rt_run.output
    lenient = write_files(tmp_path / "lenient", {**test, "pyproject.toml": "[tool.pytest.ini_options]\n"})
    _, rt_run = same_as_pytest(lenient, site)
    assert "The option 'loop_scope' is unset." in rt_run.stderr, rt_run.output
