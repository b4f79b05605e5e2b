"""Hooks of installed pytest plugins (``pytest11`` entry points) that rt calls as pytest does, compared with
pytest's counts and node ids on the same small project.

Each plugin is a distribution of the test's own making, written into a folder both runners get on
``PYTHONPATH``, so pytest and ``rt test`` load it from its entry point as they load any installed plugin.
"""

from __future__ import annotations

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
