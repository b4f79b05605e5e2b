"""``session._fixturemanager`` and ``request._fixturemanager``: pytest's fixture manager, as plugins that build
on its internals use it.

pytest-bdd finds its step definitions among every fixture name (``_arg2node2fixturedefs``), asks which are
visible from the test (``getfixturedefs(name, node)``), registers the matching ones for the test's node under
a name of its own for the length of one step and asks for that name's value; a step's ``target_fixture`` is a
fixture it registers at run time (``_register_fixture(name=, func=, node=)``), whose value it then forces
through ``request._get_active_fixturedef(name).cached_result``. pytest-factoryboy reads ``getfixturedefs``
for the dependencies of a model fixture. rt keeps its fixtures in its own registry
(:class:`rt_testrunner.fixtures.Registry`); this module shows that registry in pytest's shapes and brings what
plugins register or inject at run time into it (:class:`RuntimeDefs`), visible from the node they name.
"""

from __future__ import annotations

import os
import types
from collections.abc import Iterable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

import attrs

from rt_testrunner.fixtures import FixtureDef, argnames

if TYPE_CHECKING:
    from rt_testrunner.fixtures import Registry
    from rt_testrunner.pysession import PytestSession

#: pytest's names for the xunit set-ups (``setup_module`` ...) its own collectors register: rt's collection
#: runs those itself (pycollect_module.py), so a suite's collector built on pytest's registers nothing twice
_XUNIT_PREFIX = "_xunit_setup_"


def node_prefix(node: Any, root: str) -> str:
    """Where a fixture registered for ``node`` is visible, as rt's registry writes it (a definition's
    ``baseid``): a folder ``/abs/dir/``, a module ``/abs/file.py::``, a collector inside it
    ``/abs/file.py::Class::``, a test's own key ``/abs/file.py::test_x[1]`` (that test alone); the session
    (no path) ``""``, everywhere."""
    item = getattr(node, "_item", None)
    if item is not None and getattr(node, "kind", None) is None and getattr(item, "node", None) is node:
        return str(item.key)
    path = getattr(node, "path", None)
    if path is None:
        return ""
    return nodeid_prefix(str(getattr(node, "nodeid", "")), root, str(path))


def nodeid_prefix(nodeid: str, root: str, path: str | None = None) -> str:
    """:func:`node_prefix` for a node id (pytest's deprecated ``nodeid=`` registrations), relative to
    ``root``; ``path`` is the node's own when known."""
    file, _, inner = nodeid.partition("::")
    if path is None:
        path = os.path.join(root, file) if file else root
    if inner:
        return f"{path}::{inner}::"
    if os.path.isdir(path):
        return f"{path.rstrip(os.sep)}{os.sep}"
    return f"{path}::"


def _sees(prefix: str, key: str) -> bool:
    """Whether a definition visible from ``prefix`` is visible to the test or node ``key``: a folder's,
    module's or collector's for everything under it, a test's for that test alone."""
    if not prefix or prefix == key:
        return True
    return prefix.endswith((os.sep, "::")) and key.startswith(prefix)


class RuntimeDefs:
    """The definitions plugins register or inject while the run goes on, by name and by the node (or node id)
    they are visible from, in pytest's shape: for one node, the closest definition first."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.by_node: dict[str, dict[Any, list[Any]]] = {}
        self.by_nodeid: dict[str, dict[str, list[Any]]] = {}
        #: (definition, name, prefix) -> rt's definition made of it, kept while the run lasts: rt's caches
        #: know a definition by its identity
        self._converted: dict[tuple[int, str, str], tuple[Any, FixtureDef]] = {}

    def has(self, name: str) -> bool:
        return bool(self.by_node.get(name) or self.by_nodeid.get(name))

    def visible(self, name: str, key: str) -> list[FixtureDef]:
        """The run-time definitions of ``name`` visible to ``key``, the least specific first."""
        groups: list[tuple[str, list[Any]]] = []
        for node, defs in list(self.by_node.get(name, {}).items()):
            groups.append((node_prefix(node, self.root), defs))
        for nodeid, defs in list(self.by_nodeid.get(name, {}).items()):
            groups.append((nodeid_prefix(nodeid, self.root), defs))
        found: list[FixtureDef] = []
        for prefix, defs in sorted(groups, key=lambda group: len(group[0])):
            if _sees(prefix, key):
                found.extend(self.convert(d, name, prefix) for d in reversed(defs))
        return found

    def convert(self, definition: Any, name: str, prefix: str) -> FixtureDef:
        """rt's definition for a plugin's (pytest's ``FixtureDef``, or one of rt's it got from
        ``getfixturedefs``) registered as ``name`` for ``prefix``."""
        if isinstance(definition, FixtureDef) and definition.name == name and definition.baseid == prefix:
            return definition
        key = (id(definition), name, prefix)
        known = self._converted.get(key)
        if known is not None:
            return known[1]
        if isinstance(definition, FixtureDef):
            converted = attrs.evolve(definition, name=name, baseid=prefix, autouse=False)
        else:
            scope = getattr(definition, "scope", "function")
            params = getattr(definition, "params", None)
            converted = FixtureDef(
                name,
                definition.func,
                str(getattr(scope, "value", scope)),
                tuple(params) if params is not None else None,
                getattr(definition, "ids", None),
                False,
                prefix,
                tuple(getattr(definition, "argnames", None) or argnames(definition.func)),
            )
        self._converted[key] = (definition, converted)
        return converted


class _ByName(MutableMapping[str, Any]):
    """``_arg2node2fixturedefs`` (or ``_arg2nodeid2fixturedefs``): every fixture name rt knows, and for each
    the definitions plugins put in it by node. What a plugin stores under a node (pytest-bdd's step
    definitions, for the length of a step) is seen by the next lookup of that name from the node."""

    def __init__(self, registry: Registry, store: dict[str, dict[Any, list[Any]]], listed: bool) -> None:
        self._registry = registry
        self._store = store
        #: whether the registry's own names are listed too (they are pytest's ``_arg2node2fixturedefs``)
        self._listed = listed

    def __getitem__(self, name: str) -> Any:
        if name in self._store:
            return self._store[name]
        if self._listed and name in self._registry.defs:
            return self._store.setdefault(name, {})
        raise KeyError(name)

    def __setitem__(self, name: str, value: Any) -> None:
        self._store[name] = value

    def __delitem__(self, name: str) -> None:
        if self._store.pop(name, None) is None and not (self._listed and name in self._registry.defs):
            raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self._store or (self._listed and name in self._registry.defs)

    def __iter__(self) -> Iterator[str]:
        names = dict.fromkeys(self._registry.defs) if self._listed else {}
        names.update(dict.fromkeys(self._store))
        return iter(list(names))

    def __len__(self) -> int:
        return len(list(iter(self)))


class FixtureManager:
    """``session._fixturemanager``: rt's registry in the shapes of pytest's fixture manager.

    An item that requests fixtures itself (sybil's ``SybilItem``, one per documentation example) does what
    pytest's ``Function`` does when made: ``getfixtureclosure(parentnode=self, initialnames=names,
    ignore_args=set())`` for every fixture its names need; rt answers the closure from its own definitions
    (those visible from the item's file). Plugins that register fixtures at run time reach rt's registry
    through :class:`RuntimeDefs`."""

    def __init__(self, session: PytestSession) -> None:
        self._session = session
        registry = session.registry
        if registry.runtime is None:
            registry.runtime = RuntimeDefs(str(session.root))
        runtime = registry.runtime
        self._arg2node2fixturedefs = _ByName(registry, runtime.by_node, listed=True)
        self._arg2nodeid2fixturedefs = _ByName(registry, runtime.by_nodeid, listed=False)

    @property
    def _runtime(self) -> RuntimeDefs:
        runtime = self._session.registry.runtime
        assert runtime is not None  # made with this manager
        return runtime

    @property
    def _arg2fixturedefs(self) -> dict[str, list[Any]]:
        """pytest < 9.2's registry, name -> every definition (a copy: rt's registry is what counts)."""
        return {name: list(defs) for name, defs in self._session.registry.defs.items()}

    def parsefactories(self, *args: Any, **kwargs: Any) -> None:
        """pytest's ``Module.collect()`` and ``Class.collect()`` register the fixtures of a collector's
        object here (a suite's Module subclass, pyforeign.py): rt's registry has them already."""
        return None

    def _register_fixture(
        self,
        *,
        name: str,
        func: Any,
        nodeid: Any = None,
        scope: Any = "function",
        params: Any = None,
        ids: Any = None,
        autouse: bool = False,
        node: Any = None,
    ) -> None:
        """A fixture a plugin registers (pytest-bdd's ``target_fixture``, the value a step returned), visible
        from ``node`` (or ``nodeid``; neither: everywhere), closer than those registered there before."""
        if name.startswith(_XUNIT_PREFIX):
            return
        if callable(scope):
            scope = scope(fixture_name=name, config=self._session.config)
        if node is not None:
            prefix = node_prefix(node, str(self._session.root))
        elif isinstance(nodeid, str):
            prefix = nodeid_prefix(nodeid, str(self._session.root))
        else:
            prefix = ""
        definition = FixtureDef(
            name,
            func,
            str(getattr(scope, "value", scope)),
            tuple(params) if params is not None else None,
            ids,
            bool(autouse),
            prefix,
            argnames(func),
        )
        if autouse or (node is None and not isinstance(nodeid, str)):
            self._session.registry.add(definition)
        elif node is not None:
            self._runtime.by_node.setdefault(name, {}).setdefault(node, []).insert(0, definition)
        else:
            self._runtime.by_nodeid.setdefault(name, {}).setdefault(nodeid, []).insert(0, definition)

    def getfixturedefs(self, argname: str, node: Any) -> list[Any] | None:
        """The definitions of ``argname`` visible from ``node`` (one of pytest's nodes, a test's node or a
        test function's definition: its ``path`` and node id), the closest last; None when no definition
        of that name exists anywhere, as pytest's."""
        registry = self._session.registry
        if argname not in registry.defs and not self._runtime.has(argname):
            return None
        return registry.visible(argname, node_prefix(node, str(self._session.root)))

    def getfixtureclosure(
        self, parentnode: Any, initialnames: Iterable[str], ignore_args: Iterable[str] = ()
    ) -> tuple[list[str], dict[str, list[Any]]]:
        registry = self._session.registry
        key = node_prefix(parentnode, str(self._session.root))
        names = registry.names_closure(list(initialnames), key, set(ignore_args))
        found = {name: registry.visible(name, key) for name in names}
        return names, {name: defs for name, defs in found.items() if defs}

    def pytest_generate_tests(self, metafunc: Any) -> None:
        """pytest's own parametrization by fixture params: each of ``metafunc.fixturenames`` whose closest
        definition (or one it overrides and requests) has params, unless the test's own ``parametrize``
        mark names it. rt parametrizes its tests itself; pytest-lazy-fixtures calls this for the fixtures a
        lazy value needs (``lf("redis_broker")``, which requests the parametrized ``serializer``), once rt's
        call specs are in ``metafunc._calls``."""
        from rt_testrunner.pymarks import argnames_of

        marked = {
            name
            for mark in metafunc.definition.iter_markers("parametrize")
            for name in argnames_of(mark.args[0] if mark.args else mark.kwargs.get("argnames", ()))
        }
        for name in metafunc.fixturenames:
            if name in marked:
                continue
            for fixture in reversed(metafunc._arg2fixturedefs.get(name) or ()):  # noqa: SLF001 - pytest's
                if fixture.params is not None:
                    metafunc.parametrize(
                        name, list(fixture.params), indirect=True, scope=fixture.scope, ids=fixture.ids
                    )
                    break
                if name not in fixture.argnames:
                    break

    def getfixtureinfo(self, node: Any = None, func: Any = None, cls: Any = None) -> Any:
        """What Hypothesis's ``pytest_runtest_call`` reads (its function-scoped fixture health check):
        ``name2fixturedefs``, the test's closure."""
        item = getattr(node, "_item", None)
        closure = getattr(item, "closure", None) or []
        defs = {fixture.name: [fixture] for fixture in closure}
        return types.SimpleNamespace(
            name2fixturedefs=defs,
            argnames=tuple(getattr(item, "requested", ())),
            names_closure=list(getattr(item, "fixturenames", ())),
        )
