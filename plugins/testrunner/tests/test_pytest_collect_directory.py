"""``rt test`` on a conftest.py's ``pytest_collect_directory`` (pytest 8+): the hook's own ``pytest.Directory``
collector decides what a folder holds (pytest's documented manifest collector, a collector that leaves a
folder out, one that yields items of its own from data files, one whose ``collect()`` fails). Each test runs
pytest 9.2 and ``rt test`` on the same small project and compares the outcome counts and the node ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from rt.testing import counts_from_pytest, run_cli, run_pytest, summary_counts, write_files

#: pytest 9.2's documented example ("Using a custom directory collector", doc/en/example/customdirectory)
_MANIFEST_CONFTEST = """
import json

import pytest


class ManifestDirectory(pytest.Directory):
    def collect(self):
        # only the files manifest.json names, through pytest_collect_file
        manifest_path = self.path / "manifest.json"
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        ihook = self.ihook
        for file in manifest["files"]:
            yield from ihook.pytest_collect_file(file_path=self.path / file, parent=self)


@pytest.hookimpl
def pytest_collect_directory(path, parent):
    if path.joinpath("manifest.json").is_file():
        return ManifestDirectory.from_parent(parent=parent, path=path)
    return None
"""

#: three collectors of a suite's own, by folder: one that leaves its folder out, one that yields items of its
#: own for ``*.case`` files (and itself for the folders inside), and the manifest's
_COLLECTORS_CONFTEST = (
    _MANIFEST_CONFTEST.replace("@pytest.hookimpl\ndef pytest_collect_directory", "def manifest_directory")
    + """

class SkippedDirectory(pytest.Directory):
    def collect(self):
        return []


class CaseItem(pytest.Item):
    def __init__(self, *, expected, **kwargs):
        super().__init__(**kwargs)
        self.expected = expected

    def runtest(self):
        assert self.expected == "ok", f"case {self.name} says {self.expected}"

    def reportinfo(self):
        return self.path, 0, f"case: {self.name}"


class CaseDirectory(pytest.Directory):
    def collect(self):
        for entry in sorted(self.path.iterdir()):
            if entry.suffix == ".case":
                yield CaseItem.from_parent(self, name=entry.stem, expected=entry.read_text().strip())
            elif entry.is_dir():
                yield CaseDirectory.from_parent(self, path=entry)


def pytest_collect_directory(path, parent):
    if path.name == "skipped":
        return SkippedDirectory.from_parent(parent=parent, path=path)
    if path.name == "cases":
        return CaseDirectory.from_parent(parent=parent, path=path)
    return manifest_directory(path, parent)
"""
)


def _test(name: str, body: str = "pass") -> str:
    return f"def {name}():\n    {body}\n"


def _node_ids(output: str) -> list[str]:
    """The node ids a ``--collect-only -q`` run lists (pytest's and rt's print one per line)."""
    return [line.strip() for line in output.splitlines() if "::" in line and " " not in line.strip()]


def _compare(root: Path, *args: str) -> tuple[dict[str, int], str]:
    """Run both on ``root`` with ``args``; assert the same counts and the same node ids in the same order (a
    manifest's files in its order, as pytest collects them). Returns pytest's counts and rt's output."""
    pytest_run = run_pytest("-p", "no:randomly", *args, cwd=root)
    expected = counts_from_pytest(pytest_run.stdout)
    rt_run = run_cli("test", *args, cwd=root, timeout=180)
    assert summary_counts(rt_run.stderr) == expected, (pytest_run.output, rt_run.output)
    pytest_ids = _node_ids(run_pytest("-p", "no:randomly", "--collect-only", "-q", *args, cwd=root).stdout)
    rt_ids = _node_ids(run_cli("test", "--collect-only", *args, cwd=root).stdout)
    assert rt_ids == pytest_ids, (pytest_ids, rt_ids)
    return expected, rt_run.output


def test_the_documented_manifest_collector_takes_only_the_files_it_names(tmp_path: Path) -> None:
    """pytest's own example: ``tests/manifest.json`` names two of the folder's three test modules, and pytest
    collects those two (2 passed); rt collected every test module of the folder (3 passed) and named the hook
    as not called. Here the third module fails if it runs."""
    write_files(
        tmp_path,
        {
            "conftest.py": _MANIFEST_CONFTEST,
            "pytest.ini": "[pytest]\n",
            "tests/manifest.json": '{"files": ["test_first.py", "test_second.py"]}',
            "tests/test_first.py": _test("test_1"),
            "tests/test_second.py": _test("test_2"),
            "tests/test_third.py": _test("test_3", "raise AssertionError('not in the manifest')"),
        },
    )
    expected, output = _compare(tmp_path)
    assert expected == {"pass": 2}, output
    assert "not called" not in output, output


def _collectors_project(root: Path) -> None:
    write_files(
        root,
        {
            "conftest.py": _COLLECTORS_CONFTEST,
            "pytest.ini": "[pytest]\n",
            "tests/test_top.py": _test("test_top"),
            "tests/listed/manifest.json": '{"files": ["test_z.py", "test_x.py"]}',
            "tests/listed/test_x.py": _test("test_x"),
            "tests/listed/test_y.py": _test("test_y", "raise AssertionError('not listed')"),
            "tests/listed/test_z.py": _test("test_z"),
            "tests/skipped/test_skipped.py": _test("test_skipped", "raise AssertionError('left out')"),
            "tests/skipped/deeper/test_deeper.py": _test("test_deeper", "raise AssertionError('left out')"),
            "tests/cases/one.case": "ok",
            "tests/cases/two.case": "bad",
            "tests/cases/nested/three.case": "ok",
            "tests/cases/test_beside.py": _test("test_beside", "raise AssertionError('not a case')"),
            "tests/pkg/__init__.py": "",
            "tests/pkg/test_pkg.py": _test("test_pkg"),
            "tests/pkg/inner/__init__.py": "",
            "tests/pkg/inner/test_inner.py": _test("test_inner"),
        },
    )


def test_folder_collectors_leave_out_take_and_add_what_pytest_does(tmp_path: Path) -> None:
    """A folder the hook's collector leaves empty runs nothing (its sub-folders neither), a folder of
    ``*.case`` files runs one item per case (``tests/cases::one``, ``tests/cases/nested::three``) and not the
    test module beside them, a manifest's folder its listed modules; the other folders (packages among them)
    as always. pytest 9.2: 5 passed plus 2 cases passed, 1 case failed."""
    _collectors_project(tmp_path)
    expected, output = _compare(tmp_path)
    assert expected == {"pass": 7, "fail": 1}, output
    assert "case two says bad" in output, output


def test_folder_collectors_under_parallel_and_from_a_named_folder(tmp_path: Path) -> None:
    """The same project under ``--parallel 2`` (each worker asks the hook for the folders of its files), and
    with folders named on the command line (``tests/cases tests/listed``: the hook is asked about each)."""
    _collectors_project(tmp_path)
    pytest_run = run_pytest("-p", "no:randomly", cwd=tmp_path)
    parallel = run_cli("test", "--parallel", "2", cwd=tmp_path, timeout=180)
    assert summary_counts(parallel.stderr) == counts_from_pytest(pytest_run.stdout), parallel.output
    expected, output = _compare(tmp_path, "tests/cases", "tests/listed")
    assert expected == {"pass": 4, "fail": 1}, output


def test_a_folder_collector_that_fails_is_a_collection_error_of_the_folder(tmp_path: Path) -> None:
    """pytest: ``ERROR collecting tests/broken`` (1 error, the run interrupted); nothing below it runs."""
    write_files(
        tmp_path,
        {
            "conftest.py": """
            import pytest


            class Broken(pytest.Directory):
                def collect(self):
                    raise RuntimeError("cannot read the folder's index")


            def pytest_collect_directory(path, parent):
                return Broken.from_parent(parent, path=path) if path.name == "broken" else None
            """,
            "pytest.ini": "[pytest]\n",
            "tests/broken/test_b.py": _test("test_b"),
            "tests/test_t.py": _test("test_t"),
        },
    )
    pytest_run = run_pytest(cwd=tmp_path)
    rt_run = run_cli("test", cwd=tmp_path)
    assert counts_from_pytest(pytest_run.stdout) == {"error": 1}, pytest_run.output
    assert summary_counts(rt_run.stderr) == {"error": 1}, rt_run.output
    assert "cannot read the folder's index" in rt_run.output, rt_run.output


#: a manifest collector yielding pytest's ``Module`` for each file the manifest names, which the walk would not
#: find (``check_extra.py``), as the hook's folder unit must
_MODULE_MANIFEST_PLUGIN = _MANIFEST_CONFTEST.replace(
    "yield from ihook.pytest_collect_file(file_path=self.path / file, parent=self)",
    "yield pytest.Module.from_parent(self, path=self.path / file)",
)


@pytest.mark.parametrize(
    "conftest",
    [
        'pytest_plugins = ["dirplugin"]\n',
        "pytest_plugins = (\n    'helpers',\n)\n",
        "from dirplugin import ManifestDirectory, pytest_collect_directory  # noqa: F401\n",
    ],
    ids=["pytest_plugins", "pytest_plugins_of_a_plugin", "imported"],
)
def test_a_hook_from_a_plugin_module_or_an_import_collects_its_folders(tmp_path: Path, conftest: str) -> None:
    """The review of b4dd092: rt made a folder below a conftest.py a unit of its own only when the conftest.py's
    text held ``def pytest_collect_directory``, so a hook the conftest.py gets from a ``pytest_plugins``
    module (or a module that one names), or imports, collected nothing beyond the walked test modules (1
    passed: ``check_extra.py``, which only the manifest names, never ran). pytest 9.2: 2 passed."""
    write_files(
        tmp_path,
        {
            "conftest.py": conftest,
            "dirplugin.py": _MODULE_MANIFEST_PLUGIN,
            "helpers.py": 'pytest_plugins = ["dirplugin"]\n',
            "pytest.ini": "[pytest]\n",
            "tests/manifest.json": '{"files": ["test_first.py", "check_extra.py"]}',
            "tests/test_first.py": _test("test_1"),
            "tests/check_extra.py": _test("test_extra"),
            "tests/test_third.py": _test("test_3", "raise AssertionError('not in the manifest')"),
        },
    )
    expected, output = _compare(tmp_path)
    assert expected == {"pass": 2}, output


def test_a_commented_out_hook_leaves_the_folders_as_always(tmp_path: Path) -> None:
    """The other side: a conftest.py whose hook is commented out has none, under pytest (3 passed) and rt; rt
    took the comment for the hook."""
    write_files(
        tmp_path,
        {
            "conftest.py": "# def pytest_collect_directory(path, parent):\n#     return None\n",
            "pytest.ini": "[pytest]\n",
            "tests/manifest.json": '{"files": ["test_first.py"]}',
            "tests/test_first.py": _test("test_1"),
            "tests/test_second.py": _test("test_2"),
            "tests/test_third.py": _test("test_3"),
        },
    )
    expected, output = _compare(tmp_path)
    assert expected == {"pass": 3}, output
    from rt_testrunner.directory_hooks import defines_directory_hook

    assert not defines_directory_hook(str(tmp_path / "conftest.py"), (tmp_path / "conftest.py").read_text())


@pytest.mark.parametrize("arguments", [(), ("--parallel=2",)], ids=["one_process", "parallel"])
def test_a_named_module_the_collector_leaves_out_is_not_found(
    tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    """The review of b4dd092: ``rt test tests/test_third.py``, a module the manifest does not name, ran
    nothing (status 5). pytest 9.2 stops before any test: ``ERROR: not found: FILE`` with ``(no match in any
    of [<ManifestDirectory tests>])``, status 4, with another named file too."""
    write_files(
        tmp_path,
        {
            "conftest.py": _MANIFEST_CONFTEST,
            "pytest.ini": "[pytest]\n",
            "tests/manifest.json": '{"files": ["test_first.py"]}',
            "tests/test_first.py": _test("test_1"),
            "tests/test_third.py": _test("test_3"),
        },
    )
    expected = f"not found: {tmp_path / 'tests' / 'test_third.py'}"
    for named in (("tests/test_third.py",), ("tests/test_first.py", "tests/test_third.py")):
        pytest_run = run_pytest("-p", "no:randomly", *named, cwd=tmp_path)
        assert pytest_run.code == 4, pytest_run.output
        assert expected in pytest_run.output
        assert "(no match in any of [<ManifestDirectory tests>])" in pytest_run.output
        rt_run = run_cli("test", "-p", "no:randomly", *arguments, *named, cwd=tmp_path, timeout=180)
        assert rt_run.code == 4, rt_run.output
        assert f"{expected} (no match in any of [<ManifestDirectory tests>])" in rt_run.output
        assert "(pass)" not in rt_run.output


#: an installed plugin (an entry point ``pytest11`` on ``PYTHONPATH``) with :data:`_MODULE_MANIFEST_PLUGIN`'s hook
_MANIFEST_SITE = {
    "dirplugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: dirplugin\nVersion: 1.0\n",
    "dirplugin-1.0.dist-info/entry_points.txt": "[pytest11]\ndirplugin = dirplugin\n",
    "dirplugin.py": _MODULE_MANIFEST_PLUGIN,
}


@pytest.mark.parametrize(
    "origin",
    ["installed_plugin", "registered_at_run_time", "computed_pytest_plugins"],
)
def test_a_hook_the_sources_do_not_show_collects_its_folders_in_its_order(
    tmp_path: Path, origin: str
) -> None:
    """rt read ``pytest_collect_directory`` from the conftest.py files' sources, so a hook they do not show
    (an installed plugin's, an object a conftest.py registers in ``pytest_configure``, a module of a
    ``pytest_plugins`` built by code) left out the test modules its collector left out but never ran what
    only it collects (``check_extra.py``, named by the manifest alone), and the modules ran in the folder's
    order where pytest runs them in the collector's (the manifest's). Once the plugins and conftest.py files
    are loaded, the session's implementations of the hook say which folders have a collector of their own.
    pytest 9.2: 3 passed, ``test_z``, ``test_extra``, ``test_a`` in that order, both ways."""
    conftests = {
        "installed_plugin": "",
        "registered_at_run_time": """
            import importlib


            def pytest_configure(config):
                config.pluginmanager.register(importlib.import_module("dirplugin"), "dirplugin")
            """,
        "computed_pytest_plugins": 'pytest_plugins = ["dir" + "plugin"]\n',
    }
    site = write_files(tmp_path / "site", _MANIFEST_SITE if origin == "installed_plugin" else {})
    project = write_files(
        tmp_path / "project",
        {
            "conftest.py": conftests[origin],
            "pytest.ini": "[pytest]\n",
            **({} if origin == "installed_plugin" else {"dirplugin.py": _MODULE_MANIFEST_PLUGIN}),
            "tests/manifest.json": '{"files": ["test_z.py", "check_extra.py", "test_a.py"]}',
            "tests/test_a.py": _test("test_a"),
            "tests/test_z.py": _test("test_z"),
            "tests/check_extra.py": _test("test_extra"),
            "tests/test_third.py": _test("test_3", "raise AssertionError('not in the manifest')"),
        },
    )
    env = {"PYTHONPATH": str(site)}
    pytest_run = run_pytest("-p", "no:randomly", "-v", cwd=project, env=env)
    assert counts_from_pytest(pytest_run.stdout) == {"pass": 3}, pytest_run.output
    expected = ["tests/test_z.py::test_z", "tests/check_extra.py::test_extra", "tests/test_a.py::test_a"]
    assert [line.split()[0] for line in pytest_run.stdout.splitlines() if "PASSED" in line] == expected
    rt_run = run_cli("test", "-p", "no:randomly", cwd=project, env=env)
    assert summary_counts(rt_run.stderr) == {"pass": 3}, rt_run.output
    ran = [line.split()[1] for line in rt_run.output.splitlines() if line.startswith("(pass)")]
    assert ran == ["test_z", "check_extra.py", "test_a"], rt_run.output
    collected = run_cli("test", "-p", "no:randomly", "--collect-only", cwd=project, env=env)
    assert _node_ids(collected.stdout) == expected, collected.output


#: a ``pytest.Dir`` subclass for every ``pkg*`` folder (the folder collected as pytest's own ``Dir`` does), and
#: the manifest's collector where a folder has one
_EVERY_FOLDER_CONFTEST = (
    _MANIFEST_CONFTEST.replace("@pytest.hookimpl\ndef pytest_collect_directory", "def manifest_directory")
    + """

class MyDir(pytest.Dir):
    pass


def pytest_collect_directory(path, parent):
    if path.joinpath("manifest.json").is_file():
        return manifest_directory(path, parent)
    if path.name.startswith("pkg"):
        return MyDir.from_parent(parent, path=path)
"""
)


def test_many_folders_with_collectors_of_their_own_run_in_their_order(tmp_path: Path) -> None:
    """Six folders taken by a ``pytest.Dir`` subclass of the conftest.py's, beside a plain folder and a
    manifest's folder that names its modules backwards: each folder's tests in its collector's order, the
    folders in the walk's, the same node ids as pytest 9.2 (12 passed)."""
    files = {
        "conftest.py": _EVERY_FOLDER_CONFTEST,
        "pytest.ini": "[pytest]\n",
        "plain/test_p.py": _test("test_p"),
    }
    for k in range(6):
        files[f"pkg{k}/test_a{k}.py"] = _test("test_a") + _test("test_b")
        files[f"pkg{k}/sub/test_c{k}.py"] = _test("test_c")
    files["listed/manifest.json"] = '{"files": ["test_z.py", "test_m.py"]}'
    files["listed/test_m.py"] = _test("test_m")
    files["listed/test_z.py"] = _test("test_z")
    write_files(tmp_path, files)
    expected, output = _compare(tmp_path)
    assert expected == {"pass": 21}, output


class _Node:
    """An item whose ``path`` counts its reads."""

    reads = 0

    def __init__(self, path: Path) -> None:
        self._path = path

    @property
    def path(self) -> Path:
        _Node.reads += 1
        return self._path


class _Order(list[Path]):
    """A collector's order that counts the passes over it."""

    passes = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        _Order.passes += 1
        return super().__iter__()


@pytest.mark.parametrize(("folders", "per_folder"), [(150, 20), (1, 3000)])
def test_sorting_by_the_folder_collectors_is_linear_in_the_items(
    folders: int, per_folder: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sorting the items by their folders' collectors read every item's path once per folder and searched the
    collector's order once per item (150 folders of 20 tests: 10 s under rt where pytest takes 3.6 s; one
    manifest of 3,000 modules: 3,000 passes over it). Now each item's path is read once and each order is
    passed over once, whatever the number of folders or the size of a manifest; the order is a manifest's
    (backwards here), each folder's items where its first was."""
    from types import SimpleNamespace

    from rt_testrunner.pydirectory import Folder, in_collectors_order

    root = Path("/project")
    monkeypatch.setattr(_Node, "reads", 0)
    monkeypatch.setattr(_Order, "passes", 0)
    collectors: dict[Path, Folder | None] = {root / "plain": None}
    nodes, expected = [], []
    for k in range(folders):
        folder = root / f"pkg{k}"
        files = [folder / f"test_{i}.py" for i in range(per_folder)]
        collectors[folder] = Folder(None, order=_Order(files[::-1]))
        nodes += [_Node(path) for path in files]
        expected += [path for path in files[::-1]]
    nodes.insert(1, _Node(root / "plain" / "test_p.py"))
    expected.insert(per_folder, root / "plain" / "test_p.py")
    session = SimpleNamespace(folder_collectors=collectors)
    assert in_collectors_order(nodes, session)  # type: ignore[arg-type]
    assert [node._path for node in nodes] == expected
    assert _Node.reads == len(nodes)
    assert _Order.passes == folders
