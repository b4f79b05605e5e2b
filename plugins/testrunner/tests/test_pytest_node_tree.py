"""The nodes above a test under ``rt test`` as under pytest 9.2: ``Session > Dir (the rootdir) > Dir ... >
Package > Module > Class > Function``, each with pytest's class (for ``isinstance``), ``name``, ``nodeid`` and
``path`` (issue 15, session 14). Plugins walk them from the items: pytest-django and allure read
``item.getparent(pytest.Package)``, pytest-randomly groups by ``item.parent``; rt's module nodes had no
parent and a package's parent was the session."""

from __future__ import annotations

from pathlib import Path

from rt.testing import run_cli, run_pytest, write_files

_CONFTEST = """
import pytest


def _shown(node):
    return (node.__class__.__name__, node.name, node.nodeid, str(node.path))


def pytest_collection_modifyitems(session, config, items):
    with open("chains.txt", "a") as out:
        for item in items:
            out.write(f"{[_shown(node) for node in item.listchain()]}\\n")
            for kind in (pytest.Package, pytest.Dir, pytest.Directory, pytest.Module, pytest.Session):
                found = item.getparent(kind)
                out.write(f"  {kind.__name__}: {found and _shown(found)}\\n")
            module = item.getparent(pytest.Module)
            out.write(f"  module's parent: {_shown(module.parent)}\\n")
            out.write(f"  parents: {[node.name for node in item.iter_parents()]}\\n")
            out.write(f"  top: {isinstance(item.listchain()[0], pytest.Session)} {item.listchain()[0].parent}\\n")
"""


def _chains_under_both(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    """Run pytest and ``rt test`` on a project of ``files`` each: the ``chains.txt`` its conftest.py wrote,
    the project's path shown as ``ROOT``."""
    chains = {}
    for runner in ("pytest", "rt"):
        root = write_files(tmp_path / runner / "project", files)
        result = (
            run_pytest("-p", "no:randomly", cwd=root) if runner == "pytest" else run_cli("test", cwd=root)
        )
        assert result.code == 0, result.output
        chains[runner] = (root / "chains.txt").read_text().replace(str(root), "ROOT")
    return chains


def test_a_tests_parents_are_pytests_session_dirs_package_module_and_class(tmp_path: Path) -> None:
    files = {
        "conftest.py": _CONFTEST,
        "tests/pkg/__init__.py": "",
        "tests/pkg/conftest.py": """
        import pytest


        @pytest.fixture(scope="package")
        def package_resource(request):
            chain = [(node.__class__.__name__, node.nodeid) for node in request.node.listchain()]
            with open("chains.txt", "a") as out:
                out.write(f"package fixture: {chain}\\n")
        """,
        "tests/pkg/sub/__init__.py": "",
        "tests/pkg/sub/test_deep.py": """
        class TestDeep:
            def test_method(self, package_resource):
                pass
        """,
        "tests/test_plain.py": """
        def test_function():
            pass
        """,
    }
    chains = _chains_under_both(tmp_path, files)
    expected = chains["pytest"]
    assert "('Package', 'sub', 'tests/pkg/sub', 'ROOT/tests/pkg/sub')" in expected
    assert "module's parent: ('Dir', 'tests', 'tests', 'ROOT/tests')" in expected
    assert (
        "package fixture: [('Session', ''), ('Dir', '.'), ('Dir', 'tests'), ('Package', 'tests/pkg')]"
        in expected
    )
    assert chains["rt"] == expected


def test_a_conftest_collectors_items_have_the_folders_and_session_above(tmp_path: Path) -> None:
    """A conftest.py's ``pytest_collect_file`` gets the file's folder as ``parent``; its items' chain goes up
    through the folders' ``Dir`` nodes to the ``Session``, as under pytest (rt's folder node had no parent, so
    ``listchain()`` began with it)."""
    files = {
        "conftest.py": """
import pytest


def pytest_collection_modifyitems(session, config, items):
    with open("chains.txt", "a") as out:
        for item in items:
            chain = [(node.name, node.nodeid, str(node.path)) for node in item.listchain()]
            out.write(f"{chain}\\n")
            out.write(f"  parents: {[node.name for node in item.iter_parents()]}\\n")


class CheckFile(pytest.File):
    def collect(self):
        for line in self.path.read_text().split():
            yield CheckItem.from_parent(self, name=line)


class CheckItem(pytest.Item):
    def runtest(self):
        pass


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".check":
        return CheckFile.from_parent(parent, path=file_path)
""",
        "tests/data/cases.check": "first second",
        "tests/data/__init__.py": "",
    }
    chains = _chains_under_both(tmp_path, files)
    expected = chains["pytest"].splitlines()
    assert expected[0].startswith(
        "[('', '', 'ROOT'), ('project', '.', 'ROOT'), ('tests', 'tests', 'ROOT/tests')"
    )
    assert chains["rt"].splitlines() == expected


_PACKAGE_ONLY_CONFTEST = """
import pytest


class CaseFile(pytest.File):
    def collect(self):
        yield CaseItem.from_parent(self, name="case")


class CaseItem(pytest.Item):
    def runtest(self):
        pass


def _shown(node):
    return (node.__class__.__name__, node.nodeid)


def pytest_collect_file(parent, file_path):
    # as pytest-yaml-style plugins: a file is a case file under a package or a plain folder only
    if file_path.suffix == ".case" and isinstance(parent, (pytest.Package, pytest.Dir)):
        kind = "package" if isinstance(parent, pytest.Package) else "dir"
        with open("chains.txt", "a") as out:
            out.write(f"collect_file {file_path.name}: {kind} {isinstance(parent, pytest.Directory)}\\n")
        return CaseFile.from_parent(parent, path=file_path)


def pytest_sessionstart(session):
    pytest.started_session = session


def pytest_collection_modifyitems(session, config, items):
    with open("chains.txt", "a") as out:
        for item in items:
            chain = item.listchain()
            same = [
                item.session is chain[0],
                session is chain[0],
                pytest.started_session is chain[0],
                all(node.session is chain[0] for node in chain),
            ]
            package = item.getparent(pytest.Package)
            out.write(f"{item.nodeid}: {[_shown(n) for n in chain]} {same} {package and package.nodeid}\\n")


@pytest.fixture
def request_session(request):
    return request.session is request.node.listchain()[0]
"""


def test_the_folder_node_given_to_collect_file_is_pytests_dir_or_package_and_one_session(
    tmp_path: Path,
) -> None:
    """A conftest.py's ``pytest_collect_file`` that collects only when ``isinstance(parent, pytest.Package)``
    (or ``pytest.Dir``) gets pytest's folder node under rt too (rt's own folder class collected nothing:
    0 tests where pytest has 3); and ``item.session``, every node's ``session``, the hooks' ``session`` and
    ``request.session`` are the ``Session`` node at the top of ``listchain()``, one object as pytest's
    (rt's were its session and a view of it, so ``item.session is item.listchain()[0]`` was False)."""
    files = {
        "conftest.py": _PACKAGE_ONLY_CONFTEST,
        "top.case": "",
        "plain/one.case": "",
        "pkg/__init__.py": "",
        "pkg/two.case": "",
        "pkg/test_session.py": """
        class TestSession:
            def test_is_one(self, request, request_session):
                assert request_session
                assert request.node.session is request.node.listchain()[0]
        """,
    }
    chains = _chains_under_both(tmp_path, files)
    expected = chains["pytest"]
    assert "collect_file two.case: package True" in expected
    assert "pkg/two.case::case: [('Session', ''), ('Dir', '.'), ('Package', 'pkg'), ('CaseFile'" in expected
    assert "[True, True, True, True] pkg" in expected
    assert sorted(chains["rt"].splitlines()) == sorted(expected.splitlines())


def test_a_plugin_setting_session_shouldstop_or_shouldfail_ends_the_run(tmp_path: Path) -> None:
    """A ``pytest_runtest_makereport`` hook that sets ``item.session.shouldstop`` (or ``shouldfail``), as
    pytest's stepwise plugin does: pytest's run loop starts no further test, prints the reason and exits 2
    (``Interrupted``) or 1 (``Failed``). rt never read either and ran every test (the third one failed).
    pytest 9.2: 2 passed, status 2 and 1."""
    for attribute, status in (("shouldstop", 2), ("shouldfail", 1)):
        files = {
            "conftest.py": f"""
def pytest_runtest_makereport(item, call):
    if call.when == "call" and item.name == "test_stops":
        item.session.{attribute} = "enough for now"
""",
            "test_run.py": """
            def test_first():
                pass


            def test_stops():
                pass


            def test_never_started():
                raise AssertionError("the run should have stopped")
            """,
        }
        root = write_files(tmp_path / attribute, files)
        pytest_run = run_pytest("-p", "no:randomly", cwd=root)
        rt_run = run_cli("test", cwd=root)
        assert "2 passed" in pytest_run.stdout and pytest_run.code == status, pytest_run.output
        assert " 2 pass\n" in rt_run.stderr and " 0 fail\n" in rt_run.stderr, rt_run.output
        assert "enough for now" in rt_run.stderr and rt_run.code == status, rt_run.output


def test_session_testsfailed_counts_the_failed_reports(tmp_path: Path) -> None:
    """``session.testsfailed`` (pytest-cov's ``--no-cov-on-fail`` reads it in its run loop, pytest-rerunfailures
    lowers it): pytest counts each failed report of a test, its set-up's, call's and teardown's, not an expected
    failure. rt's session had no such attribute (an AttributeError in the hook). pytest 9.2: 3."""
    files = {
        "conftest.py": """
import pytest


def pytest_sessionfinish(session, exitstatus):
    with open("chains.txt", "a") as out:
        out.write(f"testsfailed {session.testsfailed} {exitstatus}\\n")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown")


@pytest.fixture
def broken_setup():
    raise RuntimeError("set-up")
""",
        "test_counted.py": """
        import pytest


        def test_passes():
            pass


        def test_fails():
            assert False


        def test_teardown_fails(broken_teardown):
            pass


        def test_setup_fails(broken_setup):
            pass


        @pytest.mark.xfail
        def test_expected():
            assert False
        """,
    }
    chains = {}
    for runner in ("pytest", "rt"):
        root = write_files(tmp_path / runner, files)
        run_pytest("-p", "no:randomly", cwd=root) if runner == "pytest" else run_cli("test", cwd=root)
        chains[runner] = (root / "chains.txt").read_text()
    assert chains["pytest"] == "testsfailed 3 1\n"
    assert chains["rt"] == chains["pytest"]
