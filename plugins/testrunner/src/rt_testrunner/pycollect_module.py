"""pytest's collection of an imported test module: its ``test*`` functions, ``Test*`` classes (no
``__init__``) and ``unittest.TestCase`` classes, their xunit set-up functions (``setup_module``,
``setup_class``, ``setup_method`` ...), marks and parametrization, each test becoming a :class:`PyItem` in an
rt :class:`~rt_testrunner.model.TestCase`; then the ``pytest_collection_modifyitems`` and
``pytest_collection_finish`` hooks over the items.

This is pytest's ``python.py`` collection; a conftest.py's own collectors (``pytest_collect_file``) are
:mod:`rt_testrunner.pycollect`'s. :class:`ModuleCollection` is the collecting half of
:class:`~rt_testrunner.pysession.PytestSession`, which holds the state (fixture registry, hooks, config) it
reads; the session's other half loads conftest.py files and plugins and keeps their hooks.
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import sys
import types
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import attrs

from rt_testrunner import pyplugins
from rt_testrunner.async_plugins import AsyncModes, is_native
from rt_testrunner.execute import ScopeTeardown
from rt_testrunner.fixtures import SCOPES, FixtureDef, Registry, ScopeState, argnames, fixture_marker
from rt_testrunner.model import Suite, TestCase
from rt_testrunner.outcomes import CollectError
from rt_testrunner.pymarks import CallSpec, Metafunc, argnames_of, direct_names, expand, marks_of
from rt_testrunner.pynodes import Node, PyItem, inner_id, location_of, marks_taken
from rt_testrunner.pyruntest import make_runner
from rt_testrunner.reorder import reorder_file

if TYPE_CHECKING:
    from rt_testrunner import pymakeitem
    from rt_testrunner.hook_classes import HookClasses
    from rt_testrunner.pyconfig import PytestConfig
    from rt_testrunner.pyconfig_objects import Config
    from rt_testrunner.pyids import IdRules
    from rt_testrunner.pysession import PytestSession

#: one test member of a class, in :meth:`ModuleCollection._class_members`'s order: its kind ("function": a
#: method; "class" or "unittest": a nested test class; "made": an item a hook made), its name, the nested
#: class and the pytest node (a nested class's, when a collector of the suite's own made it; a made item)
_Member = tuple[str, str, type | None, Any]


@attrs.frozen
class InModule:
    """What every class and function of one test module (or of one module-like collector inside it) is
    collected with; one object, so the collecting methods take it instead of the same six arguments each."""

    module: Any
    file: str
    #: the module's ``pytest_generate_tests`` hook as ``(node id base, hook)``, if it has one
    hooks: list[tuple[str, Callable[..., Any]]]
    selectors: tuple[str, ...]
    #: a module-like collector inside the file (pytest-describe's block), as :meth:`ModuleCollection.collect_nodes`
    scope: str = ""
    makeitem: pymakeitem.ItemMaker | None = None


class ModuleCollection:
    """Collecting test modules into rt suites, for :class:`~rt_testrunner.pysession.PytestSession` (the
    attributes below are the session's, set in its constructor)."""

    pyconfig: PytestConfig
    config: Config
    registry: Registry
    scopes: ScopeState
    async_modes: AsyncModes
    ini_usefixtures: list[str]
    ini_timeout_ms: int | None
    timeout_func_only: bool
    warn: Callable[[str], None]
    generate_hooks: list[tuple[str, Callable[..., Any]]]
    modify_hooks: list[tuple[str, Callable[..., Any]]]
    named_hooks: dict[str, list[tuple[str, Callable[..., Any]]]]
    items: list[Any]
    deferred: list[tuple[Suite, bool]] | None
    hook_classes: HookClasses | None
    #: what each folder's own collector collected (pydirectory.py), None for a folder collected as always
    folder_collectors: dict[Path, Any]

    if TYPE_CHECKING:

        def _drop_plugin(self, plugin: str | None) -> None: ...

        def reruns(self, item: PyItem) -> int | None: ...

        def relative(self, file: str) -> str: ...

        @property
        def node(self) -> Any: ...

        def load_listed_plugins(self, module: types.ModuleType) -> None: ...

    def _enter_module(
        self, module: types.ModuleType, root: Suite, file: str, scope: str = ""
    ) -> tuple[list[Any], list[tuple[str, Callable[..., Any]]]]:
        """What every way of collecting a test module does first: its ``pytest_plugins``, fixtures, xunit
        set-up and module-scope teardown; returns its marks and its ``pytest_generate_tests`` hook (if any).
        ``scope``: a module-like collector inside the file (pytest-describe's block), whose fixtures are
        visible to its own tests only."""
        if "pytest_plugins" in module.__dict__:
            self.load_listed_plugins(module)
        module_base = f"{file}::{scope}::" if scope else f"{file}::"
        self.registry.add_namespace(module.__dict__, module_base)
        hook = module.__dict__.get("pytest_generate_tests")
        module_hooks = [(module_base, hook)] if callable(hook) else []
        self._xunit_module(module, module_base)
        # the file's module scope ends with the file; a module-like collector's (a block's) with the block,
        # which tears down the module-scoped fixtures first set up in it (``Setup.entry_key``)
        ends = ("module", file, scope) if scope else ("module", file)
        root.hooks["after_all"].append(ScopeTeardown(lambda: self.scopes.finish(ends)))
        return marks_of(module), module_hooks

    def collect(
        self,
        module: types.ModuleType,
        root: Suite,
        file: str,
        selectors: tuple[str, ...],
        registered: set[int],
    ) -> None:
        """Add the module's pytest-style tests to ``root`` (its rt declarations are already there)."""
        module_marks, module_hooks = self._enter_module(module, root, file)
        makeitem = None
        if self.named_hooks.get("pytest_pycollect_makeitem"):
            from rt_testrunner.pymakeitem import ItemMaker

            makeitem = ItemMaker.for_file(cast("PytestSession", self), module, file)
        own_only = "collect_imported_tests" in self.pyconfig.values and not self.pyconfig.flag(
            "collect_imported_tests"
        )
        where = InModule(module, file, module_hooks, selectors, makeitem=makeitem)
        for name, value in list(module.__dict__.items()):
            if own_only and _imported(value, module):
                continue
            if not _has_class(value) and not _matches(name, self.pyconfig.python_functions):
                continue  # pytest's name filters leave it; one named as a test fails as under pytest
            kind = self._member_kind(name, value, registered, file)
            if makeitem is not None:
                made = makeitem.made(makeitem.module_node, name, value, kind is not None)
                if made is not None:  # a conftest.py's pytest_pycollect_makeitem answered for the name
                    from rt_testrunner.pymakeitem import collected_by_rt

                    for node in made:
                        collected = collected_by_rt(node, name)
                        if collected == "class":
                            # the hook's node: the marks it gave it are its tests' (-m selects them)
                            self._collect_class(
                                where, node.obj, node.name, root, module_marks, is_testcase(node.obj), node
                            )
                        elif collected == "function":
                            self._collect_function(where, value, name, None, root, module_marks, module_hooks)
                        else:
                            makeitem.add([node], root, selectors)
                    continue
            if kind == "function":
                self._collect_function(where, value, name, None, root, module_marks, module_hooks)
            elif kind is not None:
                self._collect_class(where, value, name, root, module_marks, kind == "unittest")
        self._modify_items(root, file, reorder=True)

    def collect_nodes(
        self,
        collector: Any,
        module: types.ModuleType,
        root: Suite,
        file: str,
        selectors: tuple[str, ...],
        scope: str = "",
    ) -> None:
        """Add the tests of ``collector`` (a suite's or plugin's ``pytest.Module`` subclass holding ``module``)
        to ``root``: the functions and classes its own ``collect()`` takes (:mod:`rt_testrunner.pyforeign`),
        each collected as rt collects a test module's, other items and collectors as a conftest.py's.
        ``scope``: the collector stands inside the file (pytest-describe's block for a ``describe_*``
        function): its node id's part after the file, before its tests' names; its marks (and the file's)
        apply to its tests."""
        from rt_testrunner import pyforeign

        module_marks, module_hooks = self._enter_module(module, root, file, scope)
        if scope:
            module_marks = list(collector.iter_markers())
        where = InModule(module, file, module_hooks, selectors, scope)
        others: list[Any] = []
        for node in pyforeign.children(collector):
            if others and (pyforeign.is_function(node) or _is_class_node(node)):
                # the collectors and items before this test, in the collector's order (pytest-describe's
                # nested block between two tests of its block runs between them)
                self._add_other_nodes(others, file, root, selectors)
                others = []
            if pyforeign.is_function(node):
                self._collect_function(
                    where,
                    node.obj,
                    node.name,
                    None,
                    root,
                    module_marks,
                    module_hooks,
                    parent_node=node.parent,
                )
            elif _is_class_node(node):
                self._collect_class(
                    where, node.obj, node.name, root, module_marks, is_testcase(node.obj), node
                )
            else:
                others.append(node)
        if others:
            self._add_other_nodes(others, file, root, selectors)
        if not scope:  # a collector inside the file: its tests are the file's, modified with them
            self._modify_items(root, file, reorder=True)

    def _add_other_nodes(self, nodes: list[Any], file: str, root: Suite, selectors: tuple[str, ...]) -> None:
        """The items and collectors (not test functions or classes) a collector's ``collect()`` gave, each as
        a conftest.py's (pycollect.py)."""
        from rt_testrunner.pycollect import add_nodes

        add_nodes(nodes, Path(file), root, cast("PytestSession", self), selectors)

    def _member_kind(self, name: str, value: Any, registered: set[int], file: str) -> str | None:
        """What rt's collection makes of a test module's ``name``: ``"function"``, ``"class"``,
        ``"unittest"`` (a ``unittest.TestCase``) or None (not a test)."""
        if isinstance(value, type):
            is_unittest = is_testcase(value)
            if not getattr(value, "__test__", True):
                return None
            if is_unittest:
                return "unittest"
            if not (_matches(name, self.pyconfig.python_classes) or _nose_test(value)):
                return None
            # an abstract class is a base for tests, not one; one with a constructor warns when collected
            return None if inspect.isabstract(value) else "class"
        if id(value) in registered or not self._collects(name, value, file):
            return None
        return "function"

    def _collects(self, name: str, value: Any, file: str) -> bool:
        """Whether a module's or class's ``name`` is a test function, as pytest's ``istestfunction`` and
        ``pytest_pycollect_makeitem`` decide: a callable named by ``python_functions`` (or marked
        ``__test__ = True``, nose's ``istest``) that is no fixture, a function or a ``functools.partial`` of
        one; another callable so named gets pytest's "cannot collect 'x' because it is not a function"
        warning."""
        raw = value.__func__ if isinstance(value, staticmethod | classmethod) else value
        if not callable(raw) or not (_matches(name, self.pyconfig.python_functions) or _nose_test(raw)):
            return False
        if _fixture_like(value):
            return False
        if not (inspect.isfunction(raw) or inspect.isfunction(_real_function(raw))):
            if type(raw).__module__.partition(".")[0] not in ("rt", "rt_testrunner"):  # rt's own ``test``
                _not_a_function(name, raw, file)
            return False
        return bool(getattr(raw, "__test__", True))

    def _modify_items(self, root: Suite, file: str, reorder: bool = False) -> None:
        """``pytest_collection_modifyitems(session, config, items)``: it may add marks, reorder or drop items.
        While the run's files are collected before the first test (:meth:`start_collection`), the call waits
        for :meth:`finish_collection`, which makes it once with every item, as pytest does; a file loaded
        later (a name that is no identifier, ``--rerun-each``) gets the hooks of the conftests above it with
        its own items. Then (``reorder``) its items go in pytest's order of parametrized fixtures."""
        if self.deferred is not None:
            known = next((i for i, (pending, _) in enumerate(self.deferred) if pending is root), None)
            if known is None:
                self.deferred.append((root, reorder))
            elif reorder:  # a conftest.py's pytest.Module collector collected into the file's root
                self.deferred[known] = (root, True)
            return
        hooks = [hook for base, hook in self.modify_hooks if file.startswith(base)]
        if hooks:
            nodes: list[Any] = []

            def arguments() -> dict[str, Any]:
                nodes[:] = [case.item.node for case in root.tests() if case.item is not None]
                return {"session": self.node, "config": self.config, "items": nodes}

            self._collection_hook("pytest_collection_modifyitems", hooks, arguments)
            _keep(root, {id(node): position for position, node in enumerate(nodes)})
            self._claim_marked_again([root])
        if reorder:
            reorder_file(root)

    @functools.cached_property
    def id_rules(self) -> IdRules:
        """The configuration's ini values about parametrize ids (read once per session)."""
        from rt_testrunner.pyids import IdRules  # only for parametrized tests

        return IdRules.from_values(self.pyconfig.flag, self.pyconfig.values)

    def _make_id(self, value: Any, argname: str) -> str | None:
        """``pytest_make_parametrize_id(config, val, argname)`` of the conftest.py files: the first answer
        that is not None (a firstresult hook, the nearest conftest.py first)."""
        hooks = [hook for _, hook in self.named_hooks.get("pytest_make_parametrize_id", ())]
        if not hooks:
            return None
        available = {"config": self.config, "val": value, "argname": argname}
        answer = self._collection_hook(
            "pytest_make_parametrize_id", hooks, lambda: available, firstresult=True
        )
        return None if answer is None else str(answer)

    def start_collection(self) -> None:
        """The run's files are about to be collected before any test runs (see :meth:`_modify_items`)."""
        self.deferred = []

    def finish_collection(self, not_found: bool = False) -> None:
        """Every file is collected: ``pytest_collection_modifyitems`` of every conftest.py loaded, once, with
        all the items in collection order (a hook that deselects or reorders across files, or counts the
        items, sees what it sees under pytest; rt runs files one after the other, so the order it sets
        applies inside each file), then ``pytest_collection_finish(session)`` with ``session.items``.
        ``not_found``: a node id of the command line names nothing collected, and pytest stops before it
        gathers the items: no ``pytest_itemcollected`` or ``pytest_collection_modifyitems`` call, but
        ``pytest_collection_finish`` still, with no items, before its usage error."""
        pending, self.deferred = self.deferred or [], None
        if not_found:
            self.items = []
            self._collection_finished()
            return
        nodes = [case.item.node for root, _ in pending for case in root.tests() if case.item is not None]
        in_collectors_order = False
        if any(collection is not None for collection in self.folder_collectors.values()):
            from rt_testrunner.pydirectory import in_collectors_order as sort_by_collectors

            in_collectors_order = sort_by_collectors(nodes, cast("PytestSession", self))
        for node in nodes if self.named_hooks.get("pytest_itemcollected") else ():
            # read again for each item: a plugin whose hook failed is left out of the next calls
            collected_hooks = [hook for _, hook in self.named_hooks.get("pytest_itemcollected", ())]
            self._collection_hook("pytest_itemcollected", collected_hooks, functools.partial(dict, item=node))
        hooks = [hook for _, hook in self.modify_hooks]
        if hooks:
            collected = list(nodes)

            def arguments() -> dict[str, Any]:
                nodes[:] = collected
                return {"session": self.node, "config": self.config, "items": nodes}

            from rt_testrunner.hook_classes import HookClasses, adopt_made_items

            roots = [root for root, _ in pending]
            self.hook_classes = HookClasses(
                self, roots
            )  # the classes a hook collects itself: rt's test classes
            try:
                self._collection_hook("pytest_collection_modifyitems", hooks, arguments)
            finally:
                self.hook_classes = None
            adopt_made_items(self, roots, nodes)
            kept = {id(node): position for position, node in enumerate(nodes)}
            for root, _ in pending:
                _keep(root, kept)
            self._claim_marked_again([root for root, _ in pending])
        for root, reorder in pending:
            if reorder:
                reorder_file(root)
        self.items_reordered = bool(hooks) or in_collectors_order
        if any(reorder for _, reorder in pending):
            self.items_reordered |= _by_parameters([root for root, _ in pending], nodes)
        self.items = nodes
        self._collection_finished()

    def _collection_finished(self) -> None:
        """``pytest_collection_finish(session)``, once ``session.items`` is set."""
        finish_hooks = [hook for _, hook in self.named_hooks.get("pytest_collection_finish", ())]
        if finish_hooks:
            self._collection_hook("pytest_collection_finish", finish_hooks, lambda: {"session": self.node})

    def _claim_marked_again(self, roots: list[Suite]) -> None:
        """An async test a ``pytest_collection_modifyitems`` hook marked runs where that mark says, as one
        marked in its source (async_plugins.py): pytest-trio's trio mode turned on by a conftest.py (``from
        pytest_trio.enable_trio_mode import *``, tricycle's) marks every async test ``trio`` that way."""
        for root in roots:
            for case in root.tests():
                item = case.item
                if item is None or item.is_unittest or item.node is None:
                    continue
                marks = item.node.own_markers
                if len(marks) != len(item.marks):
                    item.claim = self.async_modes.test_claim(
                        item.function, marks, item.fixturenames, item.native_async
                    )

    def _collection_hook(
        self,
        name: str,
        hooks: list[Callable[..., Any]],
        arguments: Callable[[], Mapping[str, Any]],
        firstresult: bool = False,
    ) -> Any:
        """Call collection hook ``name`` with ``arguments()``. An installed plugin's hook that fails on rt's
        collection objects (they are not pytest's) is one line and the plugin is left out, as at start-up,
        and the hooks are called again without it, with fresh ``arguments()`` (what the failed call changed
        is not seen twice): the files are not made collection errors for a plugin. A conftest.py's failure is
        the suite's own: it propagates (a collection error, as pytest's)."""
        while True:
            try:
                return pyplugins.call(name, hooks, arguments(), firstresult=firstresult)
            except pyplugins.PluginHookError as exc:
                if exc.plugin is None:
                    raise
                self.warn(f"rt test: {exc} (the plugin is left out of this run)")
                self._drop_plugin(exc.plugin)
                hooks = [hook for hook in hooks if pyplugins.owner(hook) != exc.plugin]

    def _anyio_claims(self, function: Any, marks: list[Any]) -> bool:
        """anyio's pytest plugin takes a coroutine test marked ``anyio`` (on itself, its class or its module),
        or every one under ``anyio_mode = auto``, by adding ``anyio_backend`` to its fixtures: the test is
        then parametrized by that fixture (the plugin's: every available backend; or the suite's own) and
        runs on its backend (:meth:`Setup.backend`)."""
        inner = getattr(getattr(function, "hypothesis", None), "inner_test", function)
        if not inspect.iscoroutinefunction(inner):
            return False
        return self.async_modes.anyio_auto or any(mark.name == "anyio" for mark in marks)

    def _xunit_module(self, module: types.ModuleType, baseid: str) -> None:
        setup = _first(module, ("setup_module", "setUpModule"))
        teardown = _first(module, ("teardown_module", "tearDownModule"))
        is_unittest = any(
            _has_class(v) and isinstance(v, type) and is_testcase(v) for v in vars(module).values()
        )
        if setup is not None or teardown is not None or is_unittest:

            def module_fixture() -> Iterator[None]:
                if setup is not None:
                    _call_optional(setup, module)
                yield
                try:
                    if teardown is not None:
                        _call_optional(teardown, module)
                finally:
                    if is_unittest:
                        import unittest

                        unittest.case.doModuleCleanups()

            self.registry.add(
                FixtureDef(
                    f"_xunit_setup_module_{module.__name__}",
                    module_fixture,
                    "module",
                    autouse=True,
                    baseid=baseid,
                )
            )
        setup_fn = _first(module, ("setup_function",))
        teardown_fn = _first(module, ("teardown_function",))
        if setup_fn is not None or teardown_fn is not None:

            def function_fixture(request: Any) -> Iterator[None]:
                if request.cls is not None:
                    yield
                    return
                if setup_fn is not None:
                    _call_optional(setup_fn, request.function)
                yield
                if teardown_fn is not None:
                    _call_optional(teardown_fn, request.function)

            self.registry.add(
                FixtureDef(
                    f"_xunit_setup_function_{module.__name__}",
                    function_fixture,
                    "function",
                    autouse=True,
                    baseid=baseid,
                    argnames=("request",),
                )
            )

    def _collect_class(
        self,
        where: InModule,
        cls: type,
        name: str,
        root: Suite,
        outer_marks: list[Any],
        is_unittest: bool,
        node: Any = None,
    ) -> None:
        """``outer_marks``: the marks of the module and of the classes around this one; ``node``: the class's
        pytest node of a suite's own collector (:meth:`collect_nodes`), whose ``collect()`` says which of its
        names are tests.

        A class whose collection fails (a ``parametrize`` pytest refuses on one of its methods, a warning
        under ``filterwarnings = error``) is a collection error of its own, as pytest's ``Class`` collector
        fails alone: the module's other classes and functions are still collected."""
        suite = Suite(name, root)
        try:
            self._fill_class(where, cls, name, suite, outer_marks, is_unittest, node)
        except BaseException as exc:
            node_failed(suite, exc, where.selectors)
            return
        if suite.children:
            suite.hooks["after_all"].append(
                ScopeTeardown(lambda: self.scopes.finish(("class", where.file, cls.__qualname__)))
            )
            root.children.append(suite)
        else:
            suite.record_empty()

    def _fill_class(
        self,
        where: InModule,
        cls: type,
        name: str,
        suite: Suite,
        outer_marks: list[Any],
        is_unittest: bool,
        node: Any,
    ) -> None:
        """The tests of a test class into its ``suite``: its methods, the items a conftest.py's
        ``pytest_pycollect_makeitem`` made of its names, and the test classes defined inside it. A class
        with an ``__init__`` (or ``__new__``) has none: pytest's ``PytestCollectionWarning``, at the class's
        own collection (so ``filterwarnings = error`` makes it the class's collection error)."""
        file = where.file
        constructor = None if is_unittest or node is not None else _constructor(cls)
        if constructor is not None:
            _cannot_collect(cls, constructor, "::".join([self.relative(file), *suite.path[:-1]]), file)
            return
        base = f"{file}::{inner_id(where.scope, cls, '')}"
        #: the class's tests in pytest's order: a method's name, a test class defined inside this one (with
        #: its kind and node, when it has one) or an item a conftest.py's pytest_pycollect_makeitem made
        members: list[_Member] = []
        for owner in reversed(cls.__mro__):
            if owner is not object:
                self.registry.add_namespace(dict(owner.__dict__), base, holder=cls)
        class_marks = marks_of(cls, mro=True)
        if node is not None:
            from rt_testrunner import pyforeign

            # a hook's node of the class: the marks it gave that node so far are its tests' too, and those it
            # gives it later are found above them
            class_marks = [*class_marks, *pyforeign.added_marks(node)]
            marks_taken(node)
        if is_unittest:
            from rt_testrunner import pyunittest

            # pytest makes an instance (``cls("runTest")``) while it collects the class and looks for its
            # fixtures in ``dir()`` of it: an ``__init__`` that raises is the class's collection error (hjson
            # 3.1.0's ``TestAssets`` reads a data file the sdist lacks), before any of its tests is set up, and
            # so is a ``dir()`` that raises (clize 5.0.2's repeated_test fixture classes: "descriptor
            # '__dict__' for 'SignatureFixtures' objects doesn't apply to a 'RepTests' object")
            dir(cls("runTest"))
            pyunittest.add_class_fixture(self.registry, cls, base)
            self._xunit_class(cls, base)  # pytest runs setup_class/setup_method of TestCase classes too
            import unittest

            names = list(unittest.TestLoader().getTestCaseNames(cls))
            if not names and _runs_run_test(cls):
                names = ["runTest"]  # as pytest: a TestCase with no test* methods runs runTest
            members = [("function", name, None, None) for name in names]
        elif node is not None:
            from rt_testrunner import pyforeign

            self._xunit_class(cls, base)
            for child in pyforeign.children(node):
                if pyforeign.is_function(child):
                    members.append(("function", child.name, None, None))
                elif _is_class_node(child):
                    kind = "unittest" if is_testcase(child.obj) else "class"
                    members.append((kind, child.name, child.obj, child))
                else:
                    members.append(("made", "", None, child))
        else:
            self._xunit_class(cls, base)
            members = self._class_members(where, cls, name)
        hook = cls.__dict__.get("pytest_generate_tests")
        hooks = [*where.hooks, *([(base, hook)] if hook is not None else [])]
        marks = [*class_marks, *outer_marks]
        for kind, member_name, inner, member_node in members:
            if kind == "function":
                function = getattr(cls, member_name)
                # a hook's node of the class is its tests' parent, as pytest's items are its children
                self._collect_function(
                    where, function, member_name, cls, suite, marks, hooks, is_unittest, parent_node=node
                )
            elif kind == "made":
                from rt_testrunner.pycollect import add_nodes

                add_nodes([member_node], Path(file), suite, cast("PytestSession", self), where.selectors)
            else:
                assert inner is not None
                self._collect_class(where, inner, member_name, suite, marks, kind == "unittest", member_node)

    def _class_members(self, where: InModule, cls: type, name: str) -> list[_Member]:
        """The tests of a class as pytest's ``PyCollector.collect()`` orders them: each class of its MRO in
        definition order (methods and nested test classes interleaved, as written), the bases' before the
        class's own; a name is the first class's of the MRO that defines it (an override takes the place of
        the subclass's definition)."""
        file, makeitem = where.file, where.makeitem
        seen: set[str] = set()
        by_owner: list[list[_Member]] = []
        for owner in cls.__mro__:
            found: list[_Member] = []
            by_owner.append(found)
            for attr, value in owner.__dict__.items():
                if attr in seen:
                    continue
                seen.add(attr)
                if not _has_class(value) and not _matches(attr, self.pyconfig.python_functions):
                    continue
                if isinstance(value, type) and value.__qualname__ == f"{cls.__qualname__}.{attr}":
                    kind = self._member_kind(attr, value, set(), file)
                    if kind is not None:
                        found.append((kind, attr, value, None))
                    continue
                collects = self._collects(attr, value, file)
                if makeitem is not None:
                    nodes = makeitem.made(lambda: makeitem.class_node(cls, name), attr, value, collects)
                    if nodes is not None:
                        from rt_testrunner.pymakeitem import collected_by_rt

                        for node in nodes:
                            collected = collected_by_rt(node, attr)
                            if collected == "class":
                                kind = "unittest" if is_testcase(node.obj) else "class"
                                found.append((kind, node.name, node.obj, None))
                            elif collected == "function":
                                found.append(("function", attr, None, None))
                            else:
                                found.append(("made", "", None, node))
                        continue
                if collects:
                    found.append(("function", attr, None, None))
        return [member for found in reversed(by_owner) for member in found]

    def _xunit_class(self, cls: type, base: str) -> None:
        setup_class = _first(cls, ("setup_class",))
        teardown_class = _first(cls, ("teardown_class",))
        if setup_class is not None or teardown_class is not None:

            def class_fixture() -> Iterator[None]:
                if setup_class is not None:
                    _call_optional(setup_class, cls) if not inspect.ismethod(setup_class) else setup_class()
                yield
                if teardown_class is not None:
                    _call_optional(teardown_class, cls) if not inspect.ismethod(
                        teardown_class
                    ) else teardown_class()

            self.registry.add(
                FixtureDef(
                    f"_xunit_setup_class_{cls.__qualname__}",
                    class_fixture,
                    "class",
                    autouse=True,
                    baseid=base,
                )
            )
        has_method_setup = any(_first(cls, (n,)) is not None for n in ("setup_method", "teardown_method"))
        if has_method_setup:

            def method_fixture(request: Any) -> Iterator[None]:
                instance = request.instance
                setup = getattr(instance, "setup_method", None)
                if setup is not None:
                    _call_optional(setup, request.function)
                yield
                teardown = getattr(instance, "teardown_method", None)
                if teardown is not None:
                    _call_optional(teardown, request.function)

            self.registry.add(
                FixtureDef(
                    f"_xunit_setup_method_{cls.__qualname__}",
                    method_fixture,
                    "function",
                    autouse=True,
                    baseid=base,
                    argnames=("request",),
                )
            )

    def _parametrized(
        self,
        function: Any,
        key: str,
        nodeid: str,
        initial: list[str],
        calls: list[tuple[Any, ...]],
        is_unittest: bool,
    ) -> tuple[list[FixtureDef], list[str], list[CallSpec]]:
        """A test function's fixture closure, its fixture names and its call specs: the params of its
        fixtures first (the widest scope first, as pytest's ids: ``test[m1-f1-1]``), then ``calls`` (the
        generate hooks' and the marks' ``parametrize``), each checked as pytest checks it."""
        parametrized = {n for names, *_ in calls for n in argnames_of(names)}
        closure = self.registry.closure(initial, key, direct_names(calls))
        callspecs = [CallSpec()]
        for fixture in sorted(closure, key=lambda f: SCOPES.index(f.scope)):
            if fixture.params is not None and fixture.name not in parametrized:
                callspecs = self._expand_indirect(
                    callspecs, fixture.name, list(fixture.params), fixture.ids, True, nodeid=nodeid
                )
        fixturenames = self.registry.names_closure(initial, key, direct_names(calls))
        checked = None if is_unittest else fixturenames  # pytest does not parametrize a TestCase's methods
        parametrized_names: set[str] = set()
        for names, values, ids, indirect, scope in calls:
            if not is_unittest:
                from rt_testrunner.pyparam_checks import check_unique  # only for parametrized tests

                check_unique(argnames_of(names), parametrized_names, nodeid)
            callspecs = expand(
                callspecs,
                names,
                values,
                ids,
                indirect,
                self._make_id,
                self.id_rules,
                nodeid,
                function,
                checked,
                scope,
            )
        return closure, fixturenames, callspecs

    def _expand_indirect(
        self,
        callspecs: list[CallSpec],
        names: Any,
        values: Any,
        ids: Any,
        indirect: Any,
        scope: str | None = None,
        *,
        nodeid: str,
    ) -> list[CallSpec]:
        """``callspecs`` times a fixture's params (or what a plugin's wrapper parametrizes once rt's call
        specs are made: pytest's fixture manager does so for the fixtures a lazy value of
        pytest-lazy-fixtures needs)."""
        return expand(
            callspecs, names, values, ids, indirect, self._make_id, self.id_rules, nodeid, scope=scope
        )

    def _collect_function(
        self,
        where: InModule,
        function: Any,
        name: str,
        cls: Any,
        suite: Suite,
        outer_marks: list[Any],
        hooks: list[Any],
        is_unittest: bool = False,
        parent_node: Any = None,
    ) -> None:
        """``outer_marks``: the marks of the module and of the classes around the function; ``hooks``: the
        ``pytest_generate_tests`` hooks of its module and class; ``parent_node``: the pytest collector above
        the function, when a suite's or plugin's own collector collected it (:meth:`collect_nodes`)."""
        module, file, scope, selectors = where.module, where.file, where.scope, where.selectors
        if not is_unittest and inspect.isgeneratorfunction(function):
            raise CollectError(f"'yield' keyword is allowed in fixtures, but not in tests ({name})")
        own = marks_of(function)
        marks = [*own, *outer_marks]
        key = f"{file}::{inner_id(scope, cls, name)}"
        usefixtures: list[str] = []
        for mark in marks:
            if mark.name == "usefixtures":
                usefixtures.extend(mark.args)
        # a test class's staticmethod takes no instance: its first argument is a fixture or a parameter, as
        # pytest's getfuncargnames reads it (bigtree 1.5.3's parametrized ``@staticmethod`` tests)
        method = cls is not None and not isinstance(vars_of(cls, name), staticmethod)
        requested = () if is_unittest else argnames(function, method=method)
        if not is_unittest and self._anyio_claims(function, marks):
            usefixtures.append("anyio_backend")
        # the ini's usefixtures are pytest's outermost autouse fixtures: set up before conftest.py's
        initial = [*self.ini_usefixtures, *self.registry.autouse_for(key), *usefixtures, *requested]
        calls: list[tuple[Any, ...]] = []
        for mark in marks:
            if mark.name == "parametrize":
                args = list(mark.args)
                kwargs = dict(mark.kwargs)
                names = args[0] if args else kwargs.pop("argnames")
                values = args[1] if len(args) > 1 else kwargs.pop("argvalues")
                calls.append(
                    (names, values, kwargs.get("ids"), kwargs.get("indirect", False), kwargs.get("scope"))
                )
        generate = [hook for base, hook in [*self.generate_hooks, *hooks] if key.startswith(base)]
        nodeid = self.relative(file) + key[len(file) :]  # pytest's words name the test so, in its messages
        if generate:
            # pytest's metafunc.fixturenames is the test's whole fixture closure, with the names its fixtures
            # request that no fixture defines (parso's `works_in_py` fixture asks for `each_version`, which
            # its conftest's hook parametrizes)
            before = self.registry.closure(initial, key, direct_names(calls))
            names = list(
                dict.fromkeys([*initial, *(f.name for f in before), *(a for f in before for a in f.argnames)])
            )

            direct = direct_names(calls)

            def new_metafunc() -> Metafunc:
                from rt_testrunner.session_view import session_view

                made = Metafunc(
                    function,
                    cls,
                    module,
                    list(names),
                    self.config,
                    parent=parent_node,
                    nodeid=self.relative(file) + key[len(file) :],
                    session=session_view(cast("PytestSession", self)),
                    path=Path(file),
                )
                # pytest's name2fixturedefs: the visible definitions of each name (closest last), which
                # plugins read for what their fixtures carry (pytest-factoryboy's related models)
                for name in names:
                    found = [] if name in direct else self.registry.visible(name, key)
                    if found:
                        made._arg2fixturedefs[name] = found
                return made

            metafunc = new_metafunc()
            attempts = 0

            def arguments() -> dict[str, Any]:
                nonlocal metafunc, attempts
                if attempts:  # a plugin failed and is left out: the others start again on a new one
                    metafunc = new_metafunc()
                attempts += 1
                return {"metafunc": metafunc}

            made: list[tuple[list[str], list[Any], list[FixtureDef], list[str]]] = []

            def parametrize_now(metafunc: Metafunc) -> None:
                """rt's own parametrization, as pytest's own hooks make it, innermost: the plugins' wrappers
                find it in ``metafunc._calls`` after their ``yield`` and may rework it."""
                # pytest applies the hooks' parametrization before the marks' (the ids show it first); a
                # name a hook added to metafunc.fixturenames is set up for the test, as under pytest
                # (pytest-describe adds the fixtures a describe block takes as arguments)
                added = [name for name in metafunc.fixturenames if name not in names]
                every = [*metafunc.calls, *calls]
                closure, fixturenames, callspecs = self._parametrized(
                    function, key, nodeid, [*initial, *added], every, is_unittest
                )
                made[:] = [(added, every, closure, fixturenames)]
                metafunc.take_calls(callspecs, functools.partial(self._expand_indirect, nodeid=nodeid))

            parametrize_now.__dict__["pytest_impl"] = {"trylast": True}
            self._collection_hook("pytest_generate_tests", [parametrize_now, *generate], arguments)
            added, calls, closure, fixturenames = made[0]
            initial += added
            callspecs = list(metafunc._calls)  # noqa: SLF001 - pytest's own list, as its wrappers left it
        else:
            closure, fixturenames, callspecs = self._parametrized(
                function, key, nodeid, initial, calls, is_unittest
            )
        param_scopes = {
            f.name: f.scope
            for f in closure
            if f.scope != "function" and f.name in callspecs[0].params and f.name in callspecs[0].indirect
        }
        # a parametrize call's own scope (pytest's pseudo-fixture of that scope for a direct name)
        param_scopes.update((n, s) for n, s in callspecs[0].scopes.items() if s != "function")
        location = location_of(function)
        native = is_native(file, self.pyconfig.python_files)
        for callspec in callspecs:
            item_name = f"{name}[{callspec.id}]" if callspec.ids else name
            item_marks = [*callspec.marks, *marks]
            item = PyItem(
                cast("PytestSession", self),
                file,
                module,
                cls,
                function,
                item_name,
                name,
                item_marks,
                callspec,
                fixturenames,  # one list for the function's tests, as pytest's (Node.fixturenames)
                closure,
                is_unittest,
                requested,
                param_scopes=param_scopes,
                claim=None
                if is_unittest
                else self.async_modes.test_claim(function, item_marks, fixturenames, native),
                native_async=native,
                scope=scope,
                collector=parent_node,
            )
            if selectors and not _selected(item, selectors):
                continue
            item.node = Node(item)
            fn = make_runner(item)
            timeout = _timeout_ms(item.marks, self.ini_timeout_ms)
            if (
                timeout is not None
                and _func_only(item.marks, self.timeout_func_only)
                and not inspect.iscoroutinefunction(function)
            ):
                # the call alone is timed (pyruntest.py); an async test's time-out stays the whole test's
                item.call_timeout_ms, timeout = timeout, None
            suite.children.append(
                TestCase(
                    item_name, fn, suite, frozenset(), (), self.reruns(item), timeout, location, item=item
                )
            )


def node_failed(suite: Suite, exc: BaseException, selectors: tuple[str, ...]) -> None:
    """The collection of a node inside a test file failed (a test class, a conftest.py's collector): pytest's
    collection error of that node alone (:meth:`Suite.record_collect_error`), unless a node id on the command
    line leaves the node out (pytest does not collect it then). An interrupt or ``pytest.exit`` propagates."""
    from rt_testrunner import outcomes

    if isinstance(exc, KeyboardInterrupt | GeneratorExit) or outcomes.classify(exc) is outcomes.Kind.EXIT:
        raise exc
    own = "::".join(suite.path)
    if selectors and not any(
        own.startswith(s + "::") or s.startswith(own + "::") or s == own for s in selectors
    ):
        return
    suite.record_collect_error(exc)


def _matches(name: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if (
            name.startswith(pattern)
            or ("*" in pattern or "?" in pattern or "[" in pattern)
            and fnmatch.fnmatch(name, pattern)
        ):
            return True
    return False


def _constructor(cls: type) -> str | None:
    """``"__init__"`` or ``"__new__"`` when ``cls`` has a constructor of its own: pytest does not collect such
    a test class (it could not make the instances)."""
    if vars_of(cls, "__init__") is not object.__init__:
        return "__init__"
    if vars_of(cls, "__new__") is not object.__new__:
        return "__new__"
    return None


def _cannot_collect(cls: type, constructor: str, module_nodeid: str, file: str) -> None:
    """pytest's ``PytestCollectionWarning`` for a test class it leaves out, at the class's line: kept from
    the output as pytest keeps it for its summary, but an error where the suite made warnings errors
    (``warnings.simplefilter("error")`` at an earlier module's import makes it a collection error, as under
    pytest). Its category is pytest's once the suite imported pytest, else a ``UserWarning`` of that name."""
    try:
        line = inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        line = 0
    message = (
        f"cannot collect test class {cls.__name__!r} because it has a {constructor} constructor"
        f" (from: {module_nodeid})"
    )
    warnings.warn_explicit(message, _collection_warning(), file, line)


def _has_class(value: Any) -> bool:
    """Whether ``value.__class__`` can be read, which ``isinstance`` reads when the type does not match: a lazy
    proxy that fails it (Django's ``settings`` before ``settings.configure()``, imported by daphne 4.2.3's
    test_checks.py) is no test, as pytest's ``safe_isclass`` and name filters leave it, where rt's
    collection of the module failed with the proxy's error (pytest's too when the name is a test
    function's)."""
    try:
        value.__class__  # noqa: B018 - the read is the check
    except Exception:  # noqa: BLE001 - whatever the proxy raises
        return False
    return True


def _imported(value: Any, module: types.ModuleType) -> bool:
    """A function or class the test module imported from another module: not collected under
    ``collect_imported_tests = false``, as pytest's ``Module`` leaves them out."""
    return (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ != module.__name__


def _nose_test(value: Any) -> bool:
    """Marked a test whatever its name (``__test__ = True``, nose's ``istest``), as pytest's ``isnosetest``
    reads it: an attribute that fails to read, or is only truthy, does not count."""
    try:
        return getattr(value, "__test__", False) is True
    except Exception:  # noqa: BLE001 - an object whose attributes fail to read is no test
        return False


def _real_function(value: Any) -> Any:
    """What a ``functools.wraps`` wrapper or a ``functools.partial`` stands for (pytest's ``get_real_func``)."""
    try:
        value = inspect.unwrap(value)
    except ValueError:  # a cycle of __wrapped__
        return value
    return value.func if isinstance(value, functools.partial) else value


def _not_a_function(name: str, value: Any, file: str) -> None:
    """pytest's ``PytestCollectionWarning`` for a callable named as a test that is no function (an instance
    of a class with ``__call__``): it is left out, an error under ``filterwarnings = error``."""
    line = 0
    for source in (value, type(value)):
        try:
            line = inspect.getsourcelines(source)[1]
            break
        except (OSError, TypeError):
            continue
    message = f"cannot collect {name!r} because it is not a function."
    warnings.warn_explicit(message, _collection_warning(), file, line)


def _collection_warning() -> type[Warning]:
    pytest = sys.modules.get("pytest")
    found = getattr(pytest, "PytestCollectionWarning", None)
    if isinstance(found, type) and issubclass(found, Warning):
        return found
    return PytestCollectionWarning


class PytestCollectionWarning(UserWarning):
    """pytest's collection warning, for a suite that never imported pytest (pytest's own is used otherwise)."""


def vars_of(cls: type, name: str) -> Any:
    for owner in cls.__mro__:
        if name in owner.__dict__:
            return owner.__dict__[name]
    return None


def _call_optional(func: Callable[..., Any], arg: Any) -> Any:
    """xunit set-up functions take their argument only if they declare one (as pytest calls them)."""
    try:
        wants = len(inspect.signature(func).parameters) > 0
    except (TypeError, ValueError):
        wants = False
    return func(arg) if wants else func()


def _by_parameters(roots: list[Suite], nodes: list[Any]) -> bool:
    """pytest groups the session's items by the parameters of its fixtures wider than a function, over every
    item, after the hooks (reorder.py): a session-scoped parameter groups the tests of every file, a
    package-scoped one those of its package. ``nodes`` in that order; returns whether it changed."""
    tests = [case for root in roots for case in root.tests() if case.item is not None]
    if not any(case.item.param_scopes for case in tests):
        return False
    from rt_testrunner.reorder import reorder

    cases = {id(case.item.node): case for case in tests}
    ordered = reorder([cases[id(node)] for node in nodes if id(node) in cases])
    grouped = [*(case.item.node for case in ordered), *(node for node in nodes if id(node) not in cases)]
    if all(a is b for a, b in zip(grouped, nodes, strict=True)):
        return False
    nodes[:] = grouped
    return True


def _keep(root: Suite, kept: dict[int, int]) -> None:
    """Drop the items of ``root`` a ``pytest_collection_modifyitems`` hook dropped, and put the rest in the
    order it left them (``kept``: position by item)."""
    for suite in [root, *(child for child in root.children if isinstance(child, Suite))]:
        suite.children = [
            child
            for child in suite.children
            if not isinstance(child, TestCase) or child.item is None or id(child.item.node) in kept
        ]
        suite.children.sort(key=lambda child: _position(child, kept))


def _position(child: Any, kept: dict[int, int]) -> int:
    """Where a hook's reordered ``items`` put ``child``: a test's own place, a class's first test's."""
    if isinstance(child, TestCase):
        return kept.get(id(child.item.node), -1) if child.item is not None else -1
    if isinstance(child, Suite):
        return min((_position(c, kept) for c in child.children), default=-1)
    return -1


def _fixture_like(value: Any) -> bool:
    return fixture_marker(value) is not None


def _first(owner: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        value = getattr(owner, name, None)
        if value is not None and callable(value) and not _fixture_like(value):
            return value
    return None


def _timeout_ms(marks: list[Any], default: int | None = None) -> int | None:
    """pytest-timeout's ``timeout`` mark (0: none), else ``default`` (its ``timeout`` ini value)."""
    for mark in marks:
        if mark.name == "timeout":
            seconds = mark.args[0] if mark.args else mark.kwargs.get("timeout")
            if isinstance(seconds, int | float) and seconds > 0:
                return max(1, round(seconds * 1000))
            return None
    return default


def _func_only(marks: list[Any], default: bool) -> bool:
    """pytest-timeout's ``func_only``: its ``timeout`` mark's ``func_only=`` when given, else ``default`` (its
    ``timeout_func_only`` ini value): the time-out then bounds the test's call, not its fixtures."""
    for mark in marks:
        if mark.name == "timeout":
            given = mark.kwargs.get("func_only")
            return default if given is None else bool(given)
    return default


def _selected(item: PyItem, selectors: tuple[str, ...]) -> bool:
    own = item.inner_id
    for selector in selectors:
        if (
            own == selector
            or own.startswith(selector + "::")
            or ("[" not in selector and own.split("[")[0] == selector)
        ):
            return True
    return False


def is_testcase(cls: type) -> bool:
    """A ``unittest.TestCase`` subclass. rt does not import unittest itself (9 modules a pytest-style suite
    does not need at start-up): a class can only be a TestCase once its module imported unittest."""
    case = sys.modules.get("unittest.case")
    return case is not None and issubclass(cls, case.TestCase)


def _runs_run_test(cls: type) -> bool:
    """pytest's rule for a ``TestCase`` with no ``test*`` methods: it runs its ``runTest``, unless that is
    Twisted trial's own (``twisted.trial.unittest.TestCase.runTest``, when trial is imported), so the trial
    ``TestCase`` a module imports by that name is no test (towncrier 26.9.0: 12 ``TestCase::runTest`` more)."""
    run_test = getattr(cls, "runTest", None)
    if not callable(run_test):
        return False
    trial = sys.modules.get("twisted.trial.unittest")
    return trial is None or run_test != getattr(getattr(trial, "TestCase", None), "runTest", None)


def _is_class_node(node: Any) -> bool:
    """``node`` is pytest's ``Class`` node (or a subclass's: pytest-relaxed's ``SpecClass``)."""
    import pytest

    return isinstance(node, pytest.Class)
