"""Collectors a suite's conftest.py returns from ``pytest_collect_file(file_path, parent)``.

Suites collect tests from files that are not Python modules this way: a ``pytest.File`` subclass for YAML or
JSON test cases whose ``collect()`` yields ``pytest.Item`` subclasses with ``runtest()``, ``repr_failure()``
and ``reportinfo()`` (pytest's "non-python tests" example), or pytest's own ``DoctestModule`` for a
package's modules (babel). rt gives the hook a parent that stands for pytest's folder node, so the suite's
``File.from_parent(parent, path=file_path)`` and ``Item.from_parent(self, name=...)`` build real pytest nodes
with pytest's node ids (``tests/test_cases.yaml::case``). Each item becomes an rt test that runs
``setup()``, ``runtest()`` and ``teardown()``; a failure is shown as the item's ``repr_failure`` writes it.
pytest's own doctest collectors are handed to rt's doctests (:mod:`rt_testrunner.doctests`).

Which files reach the hook is decided at discovery (:func:`rt_testrunner.discovery.claimed_suffixes`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rt.events import Location
from rt_testrunner import importing
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.outcomes import Kind, classify
from rt_testrunner.pymarks import CallSpec
from rt_testrunner.pynodes import PyItem
from rt_testrunner.pyruntest import make_runner

if TYPE_CHECKING:
    from rt_testrunner.pysession import PytestSession


class ItemFailure(AssertionError):
    """A custom item failed: its message is what the item's ``repr_failure`` wrote."""


class _SessionView:
    """``node.session`` for the nodes a conftest.py builds: rt's session, plus what pytest's node classes
    ask of theirs (the relative path of a location, the hook proxy, the initial paths)."""

    def __init__(self, session: PytestSession) -> None:
        self._session = session
        self._initialpaths: frozenset[Path] = frozenset()
        self._initialpaths_with_parents: frozenset[Path] = frozenset()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def isinitpath(self, path: Any, *, with_parents: bool = False) -> bool:
        """Whether ``path`` was named on the command line (pytest's initial paths; a plugin's
        ``pytest_collect_file`` collects such a file whatever its name)."""
        known = self._initialpaths_with_parents if with_parents else self._initialpaths
        return Path(path) in known

    def gethookproxy(self, path: Any) -> Any:
        return self._session.config.hook

    def _node_location_to_relpath(self, path: Any) -> str:
        return self._session.relative(str(path))


def _legacy_node_fspath() -> None:
    """``node.fspath`` on pytest's nodes: pytest's ``legacypath`` plugin adds that property to ``Node`` at
    start-up (``pytest_load_initial_conftests``), and suites' collectors still read it (pyyaml's
    ``Item.from_parent(collector, fspath=collector.fspath)``). Added once, as pytest adds it."""
    from _pytest import legacypath
    from _pytest.nodes import Node

    if not isinstance(getattr(Node, "fspath", None), property):
        Node.fspath = property(legacypath.Node_fspath, legacypath.Node_fspath_set)  # type: ignore[method-assign, unused-ignore]


class DirectoryNode:
    """The parent given to ``pytest_collect_file`` and above a ``pytest_pycollect_makeitem`` collector:
    pytest's node of the file's folder."""

    def __init__(self, path: Path, session: PytestSession) -> None:
        _legacy_node_fspath()
        self.path = path
        self.session = _SessionView(session)
        self.config = session.config
        relative = session.relative(str(path))
        self.nodeid = "" if relative in (".", "") else relative
        self.name = path.name
        self.parent: Any = None
        self.own_markers: list[Any] = []
        # pytest's folder nodes above the file: their names are keywords of its items (``-k sub``)
        self.keywords: dict[str, Any] = dict.fromkeys(self.nodeid.split("/") if self.nodeid else [], True)
        self.extra_keyword_matches: set[str] = set()
        self.stash: dict[Any, Any] = {}
        try:  # pytest 9.2's structured node ids: a child's id is made from its parent's
            from _pytest.nodeid import NodeId  # type: ignore[import-not-found, unused-ignore]

            self.id = NodeId(path=self.nodeid)
        except ImportError:
            pass

    @property
    def fspath(self) -> Any:
        return self.path

    @property
    def ihook(self) -> Any:
        return self.config.hook

    def iter_parents(self) -> Iterator[Any]:
        yield self

    def listchain(self) -> list[Any]:
        return [self]

    def iter_markers(self, name: str | None = None) -> Iterator[Any]:
        return iter(())

    def get_closest_marker(self, name: str, default: Any = None) -> Any:
        return default

    def getparent(self, cls: Any) -> Any:
        return self if isinstance(self, cls) else None

    def __repr__(self) -> str:
        return f"<Dir {self.name}>"


def collect_file(
    path: Path, into: Suite, session: PytestSession, selectors: tuple[str, ...], test_module: bool = False
) -> None:
    """Add what the ``pytest_collect_file`` hooks of the conftest.py files above ``path`` collect from it
    (pluggy's order: the nearest conftest.py first) to ``into``. ``test_module``: ``path`` is a test module,
    whose tests rt collects already (a ``pytest.Module`` a hook returns for it adds nothing)."""
    from rt_testrunner.makereport import ordered

    hooks = session.hooks_for("pytest_collect_file", str(path))
    if not hooks:
        return
    parent = DirectoryNode(path.parent, session)
    for hook in ordered(hooks):
        from rt_testrunner.fixtures import argnames

        available = {"file_path": path, "parent": parent}
        collector = hook(**{name: available[name] for name in argnames(hook) if name in available})
        if collector is not None:
            _add_collector(collector, path, into, session, selectors, test_module)


def _add_collector(
    collector: Any,
    path: Path,
    into: Suite,
    session: PytestSession,
    selectors: tuple[str, ...],
    test_module: bool = False,
) -> None:
    kind = type(collector)
    if kind.__module__ == "_pytest.python" and kind.__name__ == "Module":
        # pytest's own module collector for a file of the suite's own naming (``check_*.py``): rt's collection
        # of a test module, under the module's real name
        if not test_module:
            session.collect(importing.import_path(path), into, str(path), selectors, set())
        return
    if kind.__module__ == "_pytest.doctest":
        from rt_testrunner import doctests

        if kind.__name__ == "DoctestTextfile":
            doctests.add_text_doctests(path, into, session)
        else:  # DoctestModule: the module's docstrings, as --doctest-modules collects them
            doctests.add_module_doctests(importing.import_path(path), path, into, session, selectors)
        return
    add_nodes(collector.collect(), path, into, session, selectors)


def add_nodes(
    nodes: Iterable[Any], path: Path, into: Suite, session: PytestSession, selectors: tuple[str, ...]
) -> None:
    """Add pytest's items (each an rt test) and collectors (each a suite of what it collects) to ``into``."""
    import pytest

    for node in nodes:
        if isinstance(node, pytest.Item):
            if not selectors or _selected(node, selectors):
                into.children.append(_test_case(node, path, into, session))
        elif isinstance(node, pytest.Collector):
            suite = Suite(node.name, into)
            _add_collector(node, path, suite, session, selectors)
            if suite.children:
                into.children.append(suite)


def _selected(node: Any, selectors: tuple[str, ...]) -> bool:
    own = str(node.nodeid).split("::", 1)[1] if "::" in str(node.nodeid) else node.name
    return any(own == s or own.startswith(s + "::") or own.split("[")[0] == s for s in selectors)


def _test_case(node: Any, path: Path, suite: Suite, session: PytestSession) -> TestCase:
    item = CustomItem(
        session,
        str(path),
        None,
        None,
        _runner(node),
        node.name,
        node.name,
        list(node.iter_markers()),
        CallSpec(),
        [],
        [],
    )
    item.node = node
    location = _location(node, path)
    return TestCase(node.name, make_runner(item), suite, location=location, item=item)


def _location(node: Any, path: Path) -> Location:
    """Where ``reportinfo()`` says the item is (its line is 0-based), else the file's first line."""
    try:
        where, line, _ = node.reportinfo()
    except Exception:  # noqa: BLE001 - a suite's reportinfo that fails only costs the line
        return Location(str(path), 1, 1)
    return Location(os.fspath(where), (line or 0) + 1 if isinstance(line, int) else 1, 1)


def _runner(node: Any) -> Callable[[], None]:
    """The test: the item's ``setup()``, ``runtest()``, ``teardown()``; a failure described by the item's own
    ``repr_failure(excinfo)`` when it has one."""

    def run() -> None:
        node.setup()
        try:
            node.runtest()
        except BaseException as exc:
            text = _described(node, exc)
            if text is None:
                raise
            raise ItemFailure(text) from None
        finally:
            node.teardown()

    return run


def _described(node: Any, exc: BaseException) -> str | None:
    if isinstance(exc, KeyboardInterrupt) or classify(exc) in (Kind.SKIP, Kind.XFAIL, Kind.EXIT):
        return None
    from _pytest.nodes import Node

    if type(node).repr_failure is Node.repr_failure:
        return None
    import pytest

    try:
        text = node.repr_failure(pytest.ExceptionInfo.from_exception(exc))
    except Exception:  # noqa: BLE001 - pytest's own formatting needs options rt does not have: rt's then
        return None
    return str(text)


@attrs.define(eq=False)
class CustomItem(PyItem):
    """A test a conftest.py's collector made: named, selected and reported by its pytest node."""

    is_function = False

    @property
    def key(self) -> str:
        return f"{self.file}::{self.name}"

    @property
    def nodeid(self) -> str:
        return str(self.node.nodeid)

    def keywords(self) -> set[str]:
        node = self.node
        words = {n.name for n in node.listchain()}
        words.update(node.keywords)
        words.update(node.listextrakeywords() if hasattr(node, "listextrakeywords") else ())
        words.update(m.name for m in node.iter_markers())
        return words

    def mark_names(self) -> set[str]:
        return {m.name for m in self.node.iter_markers()}
