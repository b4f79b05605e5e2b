"""The nodes of pytest's API a suite reaches: the test item (:class:`PyItem`, rt's record of one collected
test) and the ``request.node`` it shows (:class:`Node`: name, node id, marks, keywords, ``funcargs``), its
parents (``item.parent``, ``item.getparent(pytest.Module)``, ``listchain()``) and ``config.hook``.

pytest builds a tree of collectors (session, packages, modules, classes) above each test; suites' hooks walk
it to read a module's or a class's object and marks (``item.getparent(pytest.Class)``). rt collects file by
file without that tree, so these nodes are made on demand from what the item knows. ``config.hook.NAME(...)``
calls the ``NAME`` functions of the conftest.py files loaded, as pluggy would (a hook a suite calls itself,
such as ``pytest_deselected(items=...)`` when its ``pytest_collection_modifyitems`` drops items).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rt.events import Location
from rt_testrunner.pymarks import CallSpec, Mark, marks_of, unpack_mark

if TYPE_CHECKING:
    from rt_testrunner.fixtures import FixtureDef, Setup
    from rt_testrunner.pyconfig_objects import Config
    from rt_testrunner.pysession import PytestSession


#: the pytest class each kind of node rt makes stands for, with the module that defines it
_PYTEST_CLASSES = {
    "function": ("_pytest.python", "Function"),
    "unittest": ("_pytest.unittest", "TestCaseFunction"),
    "doctest": ("_pytest.doctest", "DoctestItem"),
    "module": ("_pytest.python", "Module"),
    "class": ("_pytest.python", "Class"),
    "package": ("_pytest.python", "Package"),
    "dir": ("_pytest.main", "Dir"),
    "session": ("_pytest.main", "Session"),
}


def pytest_class(kind: str, default: type) -> type:
    """The pytest class a node of ``kind`` passes for in ``isinstance``, as a suite's hooks check it
    (``isinstance(item, pytest.Function)``, ``isinstance(item.parent, pytest.Class)``); ``default``, the
    node's own type, while the suite has not imported pytest (rt never imports it for them)."""
    if "pytest" not in sys.modules:
        return default
    module_name, name = _PYTEST_CLASSES[kind]
    try:
        found = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        return default
    return found if isinstance(found, type) else default


def legacy_path(path: Path) -> Any:
    """``node.fspath``/``request.fspath`` as pytest gives them: a ``py.path.local`` (pytest's LEGACY_PATH,
    with ``dirname``, ``join``, ``strpath``), which plugins still use (pytest-datadir); a pathlib path when
    the suite never imported pytest (nothing then expects the old type)."""
    if "pytest" not in sys.modules:
        return path
    from _pytest.compat import legacy_path as make

    return make(path)


def warn(node: Any, warning: Warning) -> None:
    """``node.warn(warning)``: the warning, issued at the node's file and line as pytest's ``Node.warn``."""
    if not isinstance(warning, Warning):
        raise ValueError(f"warning must be an instance of Warning or subclass, got {warning!r}")
    location = getattr(node, "location", None)
    line = location[1] if location is not None and location[1] is not None else 0
    warnings.warn_explicit(warning, category=None, filename=str(node.path), lineno=line + 1)


class _OfItem:
    """What a node made for a test shows of that test's session: its config, session and module, and
    ``node.warn`` (the test item and the parents above it alike)."""

    _item: PyItem

    def warn(self, warning: Warning) -> None:
        warn(self, warning)

    @property
    def config(self) -> Config:
        return self._item.session.config

    @property
    def session(self) -> Any:
        """pytest's ``Session`` node, the top of ``listchain()``: one object for every node of the session."""
        from rt_testrunner.scope_nodes import session_node

        return session_node(self._item.session)

    @property
    def module(self) -> Any:
        return self._item.module


class ParentNode(_OfItem):
    """A module or class above a test, as pytest's ``Module``/``Class`` collector shows it."""

    def __init__(
        self, kind: str, obj: Any, name: str, nodeid: str, path: Path, parent: Any, item: Any
    ) -> None:
        self.kind = kind
        self.obj = obj
        self.name = name
        self.nodeid = nodeid
        self.path = path
        self.parent = parent
        self._item = item
        self.stash: dict[Any, Any] = {}
        self._store = self.stash  # pytest's older name of the stash, which it still keeps
        #: the marks ``add_marker`` gave the node (a collection hook's: SQLAlchemy's marks its backend classes)
        self.added_markers: list[Any] = []

    @property
    def fspath(self) -> Any:
        return legacy_path(self.path)

    @property
    def cls(self) -> Any:
        return self.obj if self.kind == "class" else None

    @property
    def own_markers(self) -> list[Any]:
        return [*marks_of(self.obj, mro=self.kind == "class"), *self.added_markers]

    def iter_markers(self, name: str | None = None) -> Iterator[Any]:
        return (m for m in self.own_markers if name is None or m.name == name)

    def get_closest_marker(self, name: str, default: Any = None) -> Any:
        return next(self.iter_markers(name), default)

    def add_marker(self, marker: Any, append: bool = True) -> None:
        mark = Mark(marker) if isinstance(marker, str) else unpack_mark(marker)
        self.added_markers.insert(len(self.added_markers) if append else 0, mark)
        MARKED_ABOVE[0] += 1

    # -- what pytest's own nodes read of their parent: a hook may build one under this node, as SQLAlchemy's
    # testing plugin builds a ``pytest.Class`` of a subclass under the module (``Class.from_parent``) and
    # collects it with pytest's ``Class.collect()`` (its fixture manager and hooks are rt's, pyforeign.py)

    @property
    def ihook(self) -> Any:
        return self.session.gethookproxy(self.path)

    @property
    def id(self) -> Any:
        """pytest 9.2's structured node id, which a child node's is made from."""
        from _pytest.nodeid import NodeId  # type: ignore[import-not-found, unused-ignore]

        parent_id = getattr(self.parent, "id", None)
        if self.kind == "module" or parent_id is None:
            return NodeId(path=self.nodeid)
        return parent_id.child(self.name)

    @property
    def keywords(self) -> dict[str, Any]:
        return {self.name: True, **{mark.name: mark for mark in self.own_markers}}

    def listchain(self) -> list[Any]:
        return [*(self.parent.listchain() if self.parent is not None else []), self]

    def iter_parents(self) -> Iterator[Any]:
        return _iter_parents(self)

    def getparent(self, cls: Any) -> Any:
        return find_parent(self, cls)

    def __repr__(self) -> str:
        return f"<{self.kind.capitalize()} {self.name}>"

    def _pytest_class(self) -> type:
        return pytest_class(self.kind, type(self))

    #: ``isinstance(node, pytest.Module)`` / ``pytest.Class`` holds, as ``unittest.mock`` makes a spec'd
    #: mock pass for its class: ``isinstance`` reads ``__class__`` when the type itself does not match
    __class__ = property(_pytest_class)


def class_path(cls: type) -> str:
    """A test class's part of its tests' node ids: ``TestOuter::TestInner`` for a class defined inside
    another, which pytest collects as the outer one's child."""
    return cls.__qualname__.replace(".", "::")


#: how many marks ``add_marker`` gave the module, class, folder and session nodes (a collection hook's, such as
#: ``item.parent.add_marker("slow")``): while none, a test's marks are its own (the common case pays one look)
MARKED_ABOVE = [0]


def marks_may_be_above(node: Node) -> bool:
    """Whether a test's marks are worth looking for above it: ``add_marker`` gave rt's module, class, folder
    or session nodes one (:data:`MARKED_ABOVE`), or a hook's own collector node above it took its marks
    (:func:`marks_taken`), whose later marks rt cannot see coming. Every other test's marks are its own, so
    one hook-built class does not make every test of the run walk its parents."""
    return bool(MARKED_ABOVE[0]) or _taken_above(node._item.collector)


def _taken_above(collector: Any) -> bool:
    """A hook's collector node that took its marks is ``collector`` or above it: found once per collector
    (a collector's parents are set when it is made, and :func:`marks_taken` marks a class before the tests
    below it are made)."""
    if collector is None:
        return False
    known = getattr(collector, "rt_taken_above", None)
    if known is None:
        known = any(getattr(above, "rt_marks_taken", None) is not None for above in _iter_parents(collector))
        try:
            collector.rt_taken_above = known
        except AttributeError:  # a node that takes no attributes: asked again next time
            pass
    return bool(known)


def marks_added_above(node: Any) -> list[tuple[Any, Any]]:
    """The marks ``add_marker`` gave the nodes above a test, each with its node, nearest first: pytest's
    ``item.iter_markers()`` yields them after the test's own (its module's and class's own marks are among the
    test's already), so ``-m``, ``-k`` and the hooks that read a test's marks see them."""
    from rt_testrunner.scope_nodes import ScopeNode

    found: list[tuple[Any, Any]] = []
    for above in _iter_parents(node.parent):
        if isinstance(above, ParentNode):
            found += [(above, mark) for mark in above.added_markers]
        elif isinstance(above, ScopeNode):
            found += [(above, mark) for mark in above.own_markers]
        else:  # a hook's own collector node (its marks when rt collected it are the tests' own already)
            taken = getattr(above, "rt_marks_taken", None)
            if taken is not None:
                found += [(above, mark) for mark in above.own_markers[taken:]]
    return found


def marks_taken(node: Any) -> None:
    """Remember the marks a hook's own collector node (a ``pytest.Class`` a collection hook built) has when rt
    collects the tests below it, which are their own marks then: those the hook adds to it later (after its
    ``collect()``, as SQLAlchemy's testing plugin may) are found above the tests (:func:`marks_added_above`),
    as pytest's ``item.iter_markers()`` reads the parent's ``own_markers`` when asked."""
    node.rt_marks_taken = len(node.own_markers)


def _iter_parents(node: Any) -> Iterator[Any]:
    """pytest's ``node.iter_parents()``: the node, then each parent up to the session."""
    while node is not None:
        yield node
        node = getattr(node, "parent", None)


def parent_of(item: Any) -> ParentNode:
    """The class node of a test in a class, else its module node (whose parent is its folder's node): one
    node per module and per class in the session, as pytest's, so a hook that tells the tests of a class by
    their parent (SQLAlchemy's ``nextitem.getparent(pytest.Class) is not _current_class`` ends the class)
    sees them together."""
    from rt_testrunner.scope_nodes import folder_node

    known: dict[tuple[str, str, int], ParentNode] = item.session.parent_nodes
    module = known.get(("module", item.file, id(item.module)))
    if module is None:
        relative = item.session.relative(item.file)
        path = Path(item.file)
        module = ParentNode(
            "module", item.module, path.name, relative, path, folder_node(item.session, path.parent), item
        )
        known["module", item.file, id(item.module)] = module
    if item.cls is None:
        return module
    node = known.get(("class", item.file, id(item.cls)))
    if node is None:
        nodeid = f"{module.nodeid}::{class_path(item.cls)}"
        node = ParentNode("class", item.cls, item.cls.__name__, nodeid, module.path, module, item)
        known["class", item.file, id(item.cls)] = node
    return node


def find_parent(node: Any, cls: Any) -> Any:
    """``node.getparent(cls)``: the nearest node of pytest's class ``cls`` (matched by its name: Function,
    Item, Class, Module, Package, Dir, Session), the node itself included."""
    from rt_testrunner.scope_nodes import wanted_kinds

    wanted = wanted_kinds(cls)
    current = node
    while current is not None:
        if not hasattr(current, "kind") and isinstance(cls, type) and isinstance(current, cls):
            return current  # one of pytest's own nodes (a plugin's collector above the test)
        kind = getattr(current, "kind", "function")
        if kind in wanted:
            return current
        current = current.parent
    return None


def scope_node(node: Any, scope: str) -> Any:
    """The node above a test's that a ``class`` or ``module`` scope stands for, as pytest's ``request.node``
    of such a fixture: the test's class (a test outside a class: its module), its module; a plugin's
    ``pytest.Module`` above the test (pytest-describe's block) is the module. The test's node when there is
    none."""
    current = getattr(node, "parent", None)
    while current is not None:
        kind = getattr(current, "kind", None) or _pytest_kind(current)
        if kind == "module" or (kind == "class" and scope == "class"):
            return current
        current = getattr(current, "parent", None)
    return node


def _pytest_kind(node: Any) -> str | None:
    """``"module"`` or ``"class"`` for one of pytest's own collectors (a plugin's), from its class's names."""
    names = {kind.__name__ for kind in type(node).__mro__}
    return "module" if "Module" in names else "class" if "Class" in names else None


class HookRelay:
    """``config.hook``: ``config.hook.NAME(**kwargs)`` calls the ``NAME`` hooks of the installed plugins and
    of every loaded conftest.py with the arguments each declares, in pluggy's order, and returns their answers
    that are not None, or the first of them for a ``firstresult`` hook (pytest's own, and those a plugin
    declared with ``pluginmanager.add_hookspecs``)."""

    def __init__(self, modules: Callable[[], Iterable[Any]], firstresult: set[str] | None = None) -> None:
        self._modules = modules
        self._firstresult = firstresult if firstresult is not None else set()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if not name.startswith("pytest_"):
            raise AttributeError(name)

        def call(**kwargs: Any) -> Any:
            from rt_testrunner import pyplugins

            found = [getattr(m, name) for m in self._modules() if callable(getattr(m, name, None))]
            hooks = [*_pytest_own(name), *found]
            firstresult = name in self._firstresult or name in pyplugins.PYTEST_FIRSTRESULT
            return pyplugins.call(name, hooks, kwargs, firstresult=firstresult)

        def get_hookimpls() -> list[Any]:
            """pluggy's ``HookCaller.get_hookimpls()``, as plugins ask it whether anyone implements a hook."""
            return [getattr(m, name) for m in self._modules() if callable(getattr(m, name, None))]

        call.get_hookimpls = get_hookimpls  # type: ignore[attr-defined]
        return call


#: hooks whose pytest's own implementations (in its plugins, by module) answer when a plugin relays them
#: through ``config.hook``: pytest-json-report asks ``pytest_report_teststatus`` each report's outcome
_PYTEST_OWN = {"pytest_report_teststatus": ("_pytest.runner", "_pytest.terminal", "_pytest.skipping")}


def _pytest_own(name: str) -> list[Callable[..., Any]]:
    """pytest's own implementations of hook ``name`` (:data:`_PYTEST_OWN`), in pytest's registration order."""
    found = []
    for module in _PYTEST_OWN.get(name, ()):
        hook = getattr(importlib.import_module(module), name, None)
        if callable(hook):
            found.append(hook)
    return found


def test_instance(item: PyItem) -> Any:
    """The instance of the test's class, as pytest's ``Function.instance``: one per test, made when first
    asked (pytest makes it while it collects; a hook may read it before the set-up) and kept with the item.
    A ``unittest.TestCase``'s is dropped after its teardown, as pytest drops it: asked again, it is another."""
    if item.instance is None and item.cls is not None:
        item.instance = item.cls(item.originalname) if item.is_unittest else item.cls()
    return item.instance


class NodeKeywords(MutableMapping[str, Any]):
    """``node.keywords`` (and ``request.keywords``): the test's names and marks, plus what the suite stores
    in it, which stays for the test's later readers (parso's fixtures pass values to each other that way) and
    for ``-k``, as pytest's."""

    def __init__(self, item: PyItem) -> None:
        self._item = item
        self.added: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        """What the suite stored, else the test function's attribute, else the test's mark of that name (the
        mark itself, with its ``args`` and ``kwargs``, as pytest's: inline-snapshot reads
        ``request.keywords["xfail"].args``), else True for the test's other names."""
        if key in self.added:
            return self.added[key]
        attributes = getattr(self._item.function, "__dict__", {})
        if key in attributes:
            return attributes[key]
        marks = self._item.node.own_markers if self._item.node is not None else self._item.marks
        mark = next((m for m in marks if getattr(m, "name", None) == key), None)
        if mark is not None:
            return mark
        if key in self._names():
            return True
        raise KeyError(key)

    def _names(self) -> set[str]:
        """The test's names (``-k``'s) and those of the nodes above every test that ``-k`` leaves out: the
        rootdir's folder and the session (``""``), which pytest's keywords hold too (``report.keywords``, the
        ``keywords`` pytest-json-report lists)."""
        names = self._item.keywords()
        # and the parameters' id, which pytest gives a parametrized test as a keyword of its own
        names.update((Path(self._item.session.pyconfig.rootdir).name, "", self._item.callspec.id))
        return names

    def __setitem__(self, key: str, value: Any) -> None:
        self.added[key] = value

    def __delitem__(self, key: str) -> None:
        raise ValueError("cannot delete key in keywords dict")

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


class Node(_OfItem):
    """``request.node``: the test as pytest's item API shows it."""

    def __init__(self, item: PyItem, kind: str = "") -> None:
        self._item = item
        #: the kind of pytest item the test is (``function``, ``unittest``, ``doctest``: _PYTEST_CLASSES)
        self._class_kind = kind or ("unittest" if item.is_unittest else "function")
        self.name = item.name
        self.originalname = item.originalname
        self.nodeid = item.nodeid
        self.own_markers: list[Any] = list(item.marks)
        self.user_properties: list[tuple[str, Any]] = []
        self.stash: dict[Any, Any] = {}
        self._store = self.stash  # pytest's older name of the stash, which it still keeps
        self.extra_keyword_matches: set[str] = set()
        #: the function a plugin put in the test's place (``item.obj = wrapper``), which the call then runs
        self.replaced_obj: Any = None
        #: pytest's ``item._report_sections``: each phase's captured output, (when, "stdout", text) ...
        self._report_sections: list[tuple[str, str, str]] = []
        if item.callspec.ids:  # as pytest's: only a parametrized test has one (suites ask with hasattr)
            self.callspec = types.SimpleNamespace(
                params=dict(item.all_params), id=item.param_id, indices=dict(item.param_indices)
            )
        self._keywords = NodeKeywords(item)
        self._parent: Any = None
        self._location: tuple[str, int | None, str] | None = None
        #: the keywords of the last report, with the marks and added keywords they were made from
        self._reported: tuple[tuple[int, int], dict[str, Any]] | None = None

    @property
    def keywords(self) -> NodeKeywords:
        return self._keywords

    @property
    def path(self) -> Path:
        return Path(self._item.file)

    @property
    def fspath(self) -> Any:
        return legacy_path(self.path)

    @property
    def cls(self) -> Any:
        return self._item.cls

    @property
    def function(self) -> Any:
        return self._item.function

    @property
    def obj(self) -> Any:
        """The test function, bound to the test's instance (as pytest's ``Function.obj``: a
        ``unittest.TestCase``'s method bound to the case that runs it, whose ``__self__`` plugins read), or
        the one a plugin set in its place."""
        if self.replaced_obj is not None:
            return self.replaced_obj
        instance = test_instance(self._item)
        if instance is not None:
            return getattr(instance, self._item.originalname, self._item.function)
        return self._item.function

    @obj.setter
    def obj(self, value: Any) -> None:
        """A plugin's wrapper in the test function's place, as pytest's ``Function.obj`` takes one: trio's own
        ``pytest_pyfunc_call`` replaces an async test with a sync function that runs it on trio, and pytest's
        call then runs that function."""
        self.replaced_obj = value

    @property
    def _fixtureinfo(self) -> Any:
        """What ``pytest_pyfunc_call`` hooks read to pick the test's own arguments from ``funcargs``."""
        return types.SimpleNamespace(
            argnames=tuple(self._item.requested), names_closure=list(self._item.fixturenames)
        )

    @property
    def _request(self) -> Any:
        from rt_testrunner.fixtures import FixtureRequest

        setup = self._item.setup
        return FixtureRequest(self._item, setup) if setup is not None else None

    @_request.setter
    def _request(self, value: Any) -> None:
        """pytest's ``runtestprotocol`` drops the request after the teardown (``item._request = False``): rt's
        is made again for each set-up, so there is nothing to drop."""

    def _initrequest(self) -> None:
        """pytest's ``runtestprotocol`` asks for a new request before running the test again: rt makes one
        at each set-up."""

    @property
    def ihook(self) -> Any:
        """pytest's ``item.ihook``: the runtest hooks run rt's phases of this test (a plain
        ``pytest_runtest_protocol`` drives them through pytest's ``runtestprotocol``), the others are
        ``config.hook``'s."""
        from rt_testrunner.pyprotocol import item_hooks

        return item_hooks(self._item)

    @property
    def instance(self) -> Any:
        return test_instance(self._item)

    @property
    def fixturenames(self) -> list[str]:
        """The test's own list, as pytest's: what a plugin adds to it (pytest-freezer inserts ``freezer`` for
        the tests marked ``freeze_time`` in ``pytest_collection_modifyitems``) is set up with the test."""
        return self._item.fixturenames

    @property
    def funcargs(self) -> dict[str, Any]:
        setup = self._item.setup
        values = dict(self._item.direct_params)
        if setup is not None:
            values.update(setup.values)
        return values

    @funcargs.setter
    def funcargs(self, value: Any) -> None:
        """pytest's ``runtestprotocol`` drops the values after the teardown (``item.funcargs = None``): rt's
        are the set-up's, gone with it."""

    def iter_markers(self, name: str | None = None) -> Iterator[Any]:
        if marks_may_be_above(self):
            return (mark for _, mark in self.iter_markers_with_node(name))
        return (m for m in self.own_markers if name is None or m.name == name)

    def iter_markers_with_node(self, name: str | None = None) -> Iterator[tuple[Any, Any]]:
        pairs = [(self, mark) for mark in self.own_markers]
        if marks_may_be_above(self):
            pairs += marks_added_above(self)
        return (pair for pair in pairs if name is None or pair[1].name == name)

    def get_closest_marker(self, name: str, default: Any = None) -> Any:
        return next(self.iter_markers(name), default)

    def add_marker(self, marker: Any, append: bool = True) -> None:
        mark = Mark(marker) if isinstance(marker, str) else unpack_mark(marker)
        if append:
            self.own_markers.append(mark)
        else:
            self.own_markers.insert(0, mark)

    @property
    def parent(self) -> Any:
        """The test's class, else its module, as pytest's collector (made when first asked for)."""
        if self._parent is None:
            self._parent = self._item.collector if self._item.collector is not None else parent_of(self._item)
        return self._parent

    @property
    def id(self) -> Any:
        """pytest 9.2's structured node id of the test, as its ``Function`` builds it: the parent's with the
        function's own name and the parameters' id. pytest's ``TestReport.from_item_and_call`` reads it, and
        pytest-retry makes each retry's report so."""
        from _pytest.nodeid import NodeId  # type: ignore[import-not-found, unused-ignore]

        parent_id = getattr(self.parent, "id", None)
        if not isinstance(parent_id, NodeId) or parent_id.params is not None:
            return NodeId.parse(self.nodeid)
        params = self._item.param_id if self._item.callspec.ids else None
        return parent_id.child(self.originalname).with_params(params)

    @property
    def location(self) -> tuple[str, int | None, str]:
        """pytest's ``item.location``: relative path, 0-based line, dotted name inside the module (each phase's
        report carries it: worked out once)."""
        if self._location is None:
            found = location_of(self._item.function)
            line = found.line - 1 if found is not None else None
            self._location = (
                self._item.session.relative(self._item.file),
                line,
                self.nodeid.split("::", 1)[1].replace("::", "."),
            )
        return self._location

    def report_keywords(self) -> dict[str, Any]:
        """``TestReport.keywords`` (each name 1), made again for a phase only when a mark or a keyword was
        added since the last one: every phase of every test has a report when a plugin reads them."""
        state = (len(self.own_markers), len(self._keywords.added))
        if self._reported is None or self._reported[0] != state:
            self._reported = (state, dict.fromkeys(self._keywords, 1))
        return dict(self._reported[1])

    def listchain(self) -> list[Any]:
        return [*self.parent.listchain(), self]

    def iter_parents(self) -> Iterator[Any]:
        return _iter_parents(self)

    def getparent(self, cls: Any) -> Any:
        return find_parent(self, cls)

    def add_report_section(self, when: str, key: str, content: str) -> None:
        """pytest's ``Item.add_report_section``: a section (``when``, ``key``, ``content``) of the item's
        reports; rt adds each phase's captured stdout and stderr when report hooks read them."""
        if content:
            self._report_sections.append((when, key, content))

    def repr_failure(self, excinfo: Any, style: str | None = None) -> str:
        """pytest's ``Item.repr_failure``: the failure's text as rt reports it. Plugins format an error of the
        running test with it: Hypothesis, when a project's configuration makes rt run its plugin, renders each
        failing example's traceback this way (textdistance 4.6.3: every failing ``@given`` test failed with an
        ``AttributeError`` instead of its own error)."""
        from rt_testrunner.failures import render_exception

        return render_exception(excinfo.value, Path(self._item.session.root)).details

    def __repr__(self) -> str:
        return f"<Function {self.name}>"

    def _pytest_class(self) -> type:
        return pytest_class(self._class_kind, type(self))

    #: ``isinstance(item, pytest.Function)`` (``pytest.Item``; a unittest test's ``TestCaseFunction``, a
    #: doctest's ``DoctestItem``) holds, as ``unittest.mock`` makes a spec'd mock pass for its class:
    #: ``isinstance`` reads ``__class__`` when the type itself does not match (build 1.6.1's conftest.py
    #: wraps the call of ``pytest.Function`` items only, and raised for every other one)
    __class__ = property(_pytest_class)


@attrs.define(eq=False)
class PyItem:
    session: PytestSession
    file: str
    module: Any
    cls: Any
    function: Any
    name: str
    originalname: str
    marks: list[Any]
    callspec: CallSpec
    fixturenames: list[str]
    closure: list[FixtureDef]
    is_unittest: bool = False
    requested: tuple[str, ...] = ()
    """The test function's own arguments (``argnames``), read once at collection."""
    #: the test's class instance (pytest's ``Function.instance``): made when first asked or at set-up, kept with
    #: the item for the session (what the test set on ``self`` stays readable by later hooks, as under pytest)
    instance: Any = None
    #: the instance's test was torn down: a set-up again (a rerun) makes a fresh one
    instance_done: bool = False
    setup: Setup | None = None
    node: Any = None
    #: the scope of each parameter that comes from a fixture wider than a function (pytest's order: reorder.py)
    param_scopes: dict[str, str] = attrs.Factory(dict)
    #: the plugin that runs the async test, and so its backend (async_plugins.py); None for a sync test
    claim: Any = None
    #: in an rt test file or a project without pytest: async code runs on rt's backend (async_plugins.py)
    native_async: bool = False
    #: the ``caplog`` fixture's object while a test that uses it runs (made when its setup starts)
    caplog: Any = None
    #: the (logger, handler) pairs added to non-propagating loggers for the phase running now
    log_attached: list[tuple[Any, Any]] = attrs.Factory(list)
    #: pytest-timeout's time-out of the call alone (``func_only``), in milliseconds; None: the whole test's
    call_timeout_ms: int | None = None
    #: the test that runs after this one in its file (``nextitem`` of the protocol and teardown hooks)
    next_item: PyItem | None = None
    #: whether the runner linked ``next_item`` (None then means no test follows in this process's turn)
    next_known: bool = False
    #: a unittest test's second error (its ``tearDown`` or a cleanup failing after the test failed): pytest
    #: reports it as the test's teardown error (pyunittest.py)
    unittest_teardown_error: BaseException | None = None

    #: the collectors between the module and the test that are neither the module nor a class: a plugin's
    #: ``pytest.Module`` made of a name of the module (pytest-describe's ``describe_a::describe_b``)
    scope: str = ""
    #: pytest's collector above the test when a suite's or plugin's own collector made it (pytest-describe's
    #: block): the test node's parent, so ``item.listchain()`` shows it
    collector: Any = None
    #: :attr:`nodeid` once made: asked for several times at each phase of the test (``PYTEST_CURRENT_TEST``,
    #: the report, the hooks), and made of fields that do not change once the test is collected
    _nodeid: str | None = attrs.field(default=None, init=False, repr=False)

    #: a test function (pytest's ``Function``), which ``pytest_pyfunc_call`` calls; not a conftest's own item
    is_function = True

    @property
    def inner_id(self) -> str:
        """The node id's part after the file: ``[scope::][Class::]name``."""
        return inner_id(self.scope, self.cls, self.name)

    @property
    def key(self) -> str:
        return f"{self.file}::{self.inner_id}"

    @property
    def nodeid(self) -> str:
        found = self._nodeid
        if found is None:
            found = self._nodeid = f"{self.session.relative(self.file)}::{self.inner_id}"
        return found

    @property
    def package(self) -> str | None:
        directory = os.path.dirname(self.file)
        return directory if os.path.exists(os.path.join(directory, "__init__.py")) else None

    @property
    def direct_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.callspec.params.items() if k not in self.callspec.indirect}

    @property
    def params(self) -> dict[str, Any]:
        return {k: v for k, v in self.callspec.params.items() if k in self.callspec.indirect}

    @property
    def all_params(self) -> dict[str, Any]:
        return self.callspec.params

    @property
    def param_indices(self) -> dict[str, int]:
        return self.callspec.indices

    @property
    def param_id(self) -> str:
        return self.callspec.id

    def keywords(self) -> set[str]:
        words = {self.name, os.path.basename(self.file)}
        if self.cls is not None:
            # the class and those it is nested in, as pytest's chain of nodes names them (not its bases)
            words.update(self.cls.__qualname__.rpartition("<locals>.")[2].split("."))
        if self.scope:
            words.update(self.scope.split("::"))
        relative = self.session.relative(self.file)
        words.update(relative.split("/")[:-1])
        words.update(m.name for m in (self.node.own_markers if self.node is not None else self.marks))
        words.update(getattr(self.function, "__dict__", {}).keys())
        if self.node is not None:
            words.update(self.node.keywords.added)
            if marks_may_be_above(self.node):
                words.update(mark.name for _, mark in marks_added_above(self.node))
        return words

    def mark_names(self) -> set[str]:
        """The names ``-m`` matches: pytest's ``item.iter_markers()`` after the collection hooks, so a mark a
        hook gave the test's class or module counts too."""
        if self.node is None:
            return {m.name for m in self.marks}
        return {m.name for m in self.node.iter_markers()}

    def setup_node(self) -> None:
        """The end of the set-up phase, after the fixtures: nothing for a test function (a conftest.py's item
        sets up its collectors and itself there, as pytest's ``SetupState`` does: pycollect.py)."""

    def teardown_node(self) -> None:
        """The end of the teardown phase, after the function's fixtures: nothing for a test function; a
        unittest test's second error, as pytest's unittest plugin reports it in this phase."""
        error, self.unittest_teardown_error = self.unittest_teardown_error, None
        if error is not None:
            raise error


def inner_id(scope: str, cls: Any, name: str) -> str:
    """A test's node id after its file: its collectors' ``scope``, its class's path, its name."""
    return "::".join([*([scope] if scope else []), *([class_path(cls)] if cls is not None else []), name])


def location_of(function: Any) -> Location | None:
    code = getattr(inspect.unwrap(function), "__code__", None)
    if code is None:
        return None
    return Location(code.co_filename, code.co_firstlineno, 1)
