"""Collectors a suite's conftest.py returns from ``pytest_collect_file(file_path, parent)``.

Suites collect tests from files that are not Python modules this way: a ``pytest.File`` subclass for YAML or
JSON test cases whose ``collect()`` yields ``pytest.Item`` subclasses with ``runtest()``, ``repr_failure()``
and ``reportinfo()`` (pytest's "non-python tests" example), or pytest's own ``DoctestModule`` for a
package's modules (babel). rt gives the hook a parent that stands for pytest's folder node, so the suite's
``File.from_parent(parent, path=file_path)`` and ``Item.from_parent(self, name=...)`` build real pytest nodes
with pytest's node ids (``tests/test_cases.yaml::case``). Each item becomes an rt test that runs
``setup()``, ``runtest()`` and ``teardown()``; a failure is shown as the item's ``repr_failure`` writes it.
pytest's own doctest collectors are handed to rt's doctests (:mod:`rt_testrunner.doctests`).

Which files reach the hook is decided at discovery: the walk (:func:`rt_testrunner.discovery._walk`) hands it
the files whose suffix a conftest.py's or a plugin's source names (:func:`rt_testrunner.discovery.claims_in_source`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rt.events import Location
from rt_testrunner import importing, pyplugins
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.outcomes import Kind, classify
from rt_testrunner.pymarks import CallSpec
from rt_testrunner.pynodes import PyItem
from rt_testrunner.pyruntest import make_runner

if TYPE_CHECKING:
    from rt_testrunner.pysession import PytestSession


class ItemFailure(AssertionError):
    """A custom item failed: its message is what the item's ``repr_failure`` wrote."""


def _requested_fixtures(node: Any) -> list[str]:
    """The fixtures an item asked for as pytest's ``Function`` does (``fixturenames``, with ``funcargs``);
    none for a plain ``pytest.Item``, which pytest gives no fixtures, autouse ones included."""
    names = getattr(node, "fixturenames", None)
    if not isinstance(names, list | tuple) or not isinstance(getattr(node, "funcargs", None), dict):
        return []
    return [name for name in names if isinstance(name, str)]


class _ItemRequest:
    """``item._request`` while a custom item runs: rt's request for the test, with pytest's
    ``_fillfixtures()`` (the item's ``funcargs`` for every name of its ``fixturenames``)."""

    def __init__(self, node: Any, request: Any) -> None:
        self._node = node
        self._request = request

    def _fillfixtures(self) -> None:
        for name in _requested_fixtures(self._node):
            if name not in self._node.funcargs:
                self._node.funcargs[name] = self._request.getfixturevalue(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._request, name)


def _legacy_node_fspath() -> None:
    """``node.fspath`` on pytest's nodes: pytest's ``legacypath`` plugin adds that property to ``Node`` at
    start-up (``pytest_load_initial_conftests``), and suites' collectors still read it (pyyaml's
    ``Item.from_parent(collector, fspath=collector.fspath)``). Added once, as pytest adds it."""
    from _pytest import legacypath
    from _pytest.nodes import Node

    if not isinstance(getattr(Node, "fspath", None), property):
        Node.fspath = property(legacypath.Node_fspath, legacypath.Node_fspath_set)  # type: ignore[method-assign, unused-ignore]


def directory_node(path: Path, session: PytestSession) -> Any:
    """The parent given to ``pytest_collect_file`` and above a ``pytest_pycollect_makeitem`` collector:
    pytest's node of the file's folder, the one ``Dir`` or ``Package`` of that folder in the session
    (scope_nodes.py), so a hook's ``isinstance(parent, pytest.Package)`` or ``pytest.Dir`` holds as under
    pytest (pytest-yaml-style hooks that collect only under a package or folder collected nothing) and the
    ``File.from_parent(parent, path=...)`` it builds has pytest's chain above it."""
    from rt_testrunner.scope_nodes import folder_node

    _legacy_node_fspath()
    return folder_node(session, path)


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
    parent = directory_node(path.parent, session)
    for hook in ordered(hooks):
        from rt_testrunner.fixtures import argnames

        available = {"file_path": path, "parent": parent}
        collector = hook(**{name: available[name] for name in argnames(hook) if name in available})
        if collector is not None:
            _add_collector(collector, path, into, session, selectors, test_module)


def make_module(path: Path, into: Suite, session: PytestSession, selectors: tuple[str, ...]) -> bool:
    """``pytest_pycollect_makemodule(module_path, parent)`` of the conftest.py files and plugins above test
    module ``path`` (a firstresult hook: the nearest conftest.py first). False when none answers or the
    answer is pytest's own ``Module`` (rt collects the module as always); else what the answer collects is
    added to ``into`` (a ``Module`` subclass by its own rules, any other collector by its ``collect()``), and
    the module is imported only if that collector imports it."""
    import pytest

    hooks = session.hooks_for("pytest_pycollect_makemodule", str(path))
    if not hooks:
        return False
    available = {"module_path": path, "parent": directory_node(path.parent, session)}
    answer = pyplugins.call("pytest_pycollect_makemodule", hooks, available, firstresult=True)
    if answer is None or type(answer) is pytest.Module:
        return False
    _add_collector(answer, path, into, session, selectors)
    return True


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
    import pytest

    if isinstance(collector, pytest.Module) and not any(
        c.__module__ == "_pytest.doctest" for c in kind.__mro__
    ):
        if isinstance(collector.parent, pytest.Module | pytest.Class):
            # a Module a pytest_pycollect_makeitem hook made of a name of the file (pytest-describe's block
            # for a describe_* function): its own object (its _getobj) holds its tests and fixtures
            scope = str(collector.nodeid).split("::", 1)[1]
            session.collect_nodes(collector, collector.obj, into, str(path), selectors, scope)
            return
        # a suite's or plugin's own Module subclass (pytest-relaxed's SpecModule): rt's collection of the
        # module, with the names the collector's own rules take (pyforeign.py)
        try:
            module = importing.import_path(path)
        except BaseException:
            session.failed_modules.add(path)  # a test module that does not import: pytest's collection error
            raise
        from rt_testrunner import pyforeign

        pyforeign.hold_module(collector, module)
        session.collect_nodes(collector, module, into, str(path), selectors)
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
            try:
                _add_collector(node, path, suite, session, selectors)
            except BaseException as exc:  # that collector's collection error, as pytest's: the others go on
                from rt_testrunner.pycollect_module import node_failed

                node_failed(suite, exc, selectors)
                continue
            if suite.children:
                into.children.append(suite)


def _selected(node: Any, selectors: tuple[str, ...]) -> bool:
    own = str(node.nodeid).split("::", 1)[1] if "::" in str(node.nodeid) else node.name
    return any(own == s or own.startswith(s + "::") or own.split("[")[0] == s for s in selectors)


def _test_case(node: Any, path: Path, suite: Suite, session: PytestSession) -> TestCase:
    fixturenames = _requested_fixtures(node)
    key = f"{path}::{node.name}"
    closure = session.registry.closure(fixturenames, key, set()) if fixturenames else []
    item = CustomItem(
        session,
        str(path),
        None,
        None,
        None,
        node.name,
        node.name,
        list(node.iter_markers()),
        CallSpec(),
        fixturenames,
        closure,
    )
    item.function = _runner(node)
    item.node = node
    for collector in _collectors_with_setup(node):
        _COLLECTORS.setdefault(id(collector), _CollectorState(collector)).remaining += 1
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
    """The test's call: the item's ``runtest()``, a failure described by the item's own
    ``repr_failure(excinfo)`` when it has one (its set-up and teardown are :class:`CustomItem`'s)."""

    def run() -> None:
        try:
            node.runtest()
        except BaseException as exc:
            text = _described(node, exc)
            if text is None:
                raise
            raise ItemFailure(text) from None

    return run


@attrs.define(eq=False)
class _CollectorState:
    """A collector above custom items whose ``setup()``/``teardown()`` are its own: its items not run yet,
    whether it is set up, and the error its ``setup()`` raised (pytest's ``SetupState`` raises it again for
    each of its items: each is an error at set-up, none runs)."""

    collector: Any
    remaining: int = 0
    set_up: bool = False
    error: BaseException | None = None


#: the collectors above custom items whose ``setup()``/``teardown()`` are their own, by id
_COLLECTORS: dict[int, _CollectorState] = {}


def _collectors_with_setup(node: Any) -> list[Any]:
    """The pytest collectors above ``node`` (outermost first) whose class has a ``setup()`` or ``teardown()``
    of its own (pytest's own ``Node`` does nothing in them; rt's folder and session nodes above, which pass
    for pytest's, have none)."""
    from _pytest.nodes import Node

    chain = node.listchain()[:-1] if hasattr(node, "listchain") else []
    return [
        c
        for c in chain
        if isinstance(c, Node)
        and (
            getattr(type(c), "setup", Node.setup) is not Node.setup
            or getattr(type(c), "teardown", Node.teardown) is not Node.teardown
        )
    ]


def _set_up(state: _CollectorState, session: PytestSession) -> None:
    """A collector's ``setup()``, once, before its first item; an error it raised is raised again."""
    if state.error is not None:
        raise state.error
    if state.set_up:
        return
    state.set_up = True  # torn down even when its setup() fails, as pytest's SetupState does
    session.config.add_cleanup(functools.partial(_tear_down, state, everything=True))
    try:
        state.collector.setup()
    except BaseException as exc:
        state.error = exc
        raise


def _tear_down(state: _CollectorState, everything: bool = False) -> None:
    """A collector's ``teardown()``, once: after its last item ran, or when the session ends (its items that
    did not run, left out by ``-k``, never count down)."""
    if state.set_up and (state.remaining <= 0 or everything):
        state.set_up = False
        state.collector.teardown()


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
    #: its ``setup()`` was called, so its ``teardown()`` is due
    node_set_up: bool = False

    @property
    def key(self) -> str:
        return f"{self.file}::{self.name}"

    @property
    def nodeid(self) -> str:
        return str(self.node.nodeid)

    def keywords(self) -> set[str]:
        node = self.node
        import pytest

        # the names of its collectors, but the session's and the rootdir's, as pytest's -k matches them
        words = {
            n.name
            for n in node.listchain()
            if not isinstance(n, pytest.Session)
            and not (isinstance(n, pytest.Directory) and isinstance(n.parent, pytest.Session))
        }
        words.update(node.keywords)
        words.update(node.listextrakeywords() if hasattr(node, "listextrakeywords") else ())
        words.update(m.name for m in node.iter_markers())
        return words

    def mark_names(self) -> set[str]:
        return {m.name for m in self.node.iter_markers()}

    def setup_node(self) -> None:
        """pytest's set-up phase after the fixtures: the values of the fixtures the item requested itself
        (``fixturenames``) in its ``funcargs``, the ``setup()`` of its collectors not set up yet (a
        ``pytest.File`` whose ``setup()`` prepares what its items share, sybil's document namespace), then
        its own ``setup()``. Any of them failing is an error at set-up of the item, as under pytest."""
        node = self.node
        if self.fixturenames and self.setup is not None:
            values = self.setup.values
            node.funcargs.update({name: values[name] for name in self.fixturenames if name in values})
            node._request = _ItemRequest(node, self.setup.request)
        for collector in _collectors_with_setup(node):
            state = _COLLECTORS.get(id(collector))
            if state is not None:
                _set_up(state, self.session)
        self.node_set_up = True
        node.setup()

    def teardown_node(self) -> None:
        """The item's ``teardown()`` (when its ``setup()`` was called), then that of each collector whose
        last item this was."""
        try:
            if self.node_set_up:
                self.node_set_up = False
                self.node.teardown()
        finally:
            for collector in reversed(_collectors_with_setup(self.node)):
                state = _COLLECTORS.get(id(collector))
                if state is not None:
                    state.remaining -= 1
                    _tear_down(state)
