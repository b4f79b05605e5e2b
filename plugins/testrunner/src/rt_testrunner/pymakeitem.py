"""``pytest_pycollect_makeitem(collector, name, obj)`` of a suite's conftest.py files: what each name of a test
module (or of a test class) becomes.

pytest asks this firstresult hook for every name in a test module's namespace, and in a test class's, and its
own implementation, called last, makes the ``Function`` and ``Class`` nodes. A conftest.py answers first to make
items of its own from names pytest would not collect (pyyaml's legacy tests: functions carrying a ``unittest``
attribute, one ``pytest.Item`` per data file), or wraps the call (``hookwrapper=True``, ``wrapper=True``) and
replaces the answer: None drops the name, a ``pytest.Item`` or ``pytest.Collector`` (or a list of them) stands
in for it. rt calls the hooks of the conftest.py files above the file and of the plugins (but the async
plugins', which mark the async tests rt runs itself: pysession.py) with pytest's own ``Module``/``Class`` nodes as
``collector``, so ``Item.from_parent(collector, ...)`` builds real pytest nodes with pytest's node ids. rt's own
collection stands last, as pytest's does: it answers :data:`DEFAULT` (an empty list) for a name rt collects and
None for one it does not. A hook that leaves :data:`DEFAULT` in place gets rt's collection of the name; pytest's
``Function``/``Class`` nodes a hook returns for the name are that too.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rt_testrunner import pyforeign, pyplugins

if TYPE_CHECKING:
    from rt_testrunner.model import Suite
    from rt_testrunner.pysession import PytestSession

HOOK = "pytest_pycollect_makeitem"

#: the names of a module's namespace pytest never asks about (``__builtins__``, ``__file__``, ``__name__`` ...)
IGNORED = frozenset(dir(types.ModuleType("empty_module")))


class _RtCollects(list[Any]):
    """rt's answer for a name it collects: an empty list, so a wrapper that iterates the answer (pytest's is a
    list of ``Function`` nodes) runs, and a wrapper that replaces it is seen."""


#: rt's own answer for a name it collects itself
DEFAULT = _RtCollects()


class ItemMaker:
    """The ``pytest_pycollect_makeitem`` hooks for one test module, and the pytest nodes they are given."""

    def __init__(
        self, session: PytestSession, module: types.ModuleType, file: str, hooks: list[Callable[..., Any]]
    ) -> None:
        self.session = session
        self.module = module
        self.path = Path(file)
        self.hooks = hooks
        self._module_node: Any = None
        self._class_nodes: dict[int, Any] = {}

    @classmethod
    def for_file(cls, session: PytestSession, module: types.ModuleType, file: str) -> ItemMaker | None:
        """The hooks above ``file``, or None when no conftest.py or plugin implements it (rt collects as always)."""
        hooks = session.hooks_for(HOOK, file)
        return cls(session, module, file, hooks) if hooks else None

    def module_node(self) -> Any:
        """pytest's ``Module`` of the file, under pytest's folder node, holding the module rt imported."""
        if self._module_node is None:
            import pytest

            from rt_testrunner.pycollect import directory_node

            node = pytest.Module.from_parent(directory_node(self.path.parent, self.session), path=self.path)
            pyforeign.hold_module(node, self.module)
            self._module_node = node
        return self._module_node

    def class_node(self, cls: type, name: str) -> Any:
        """pytest's ``Class`` node of test class ``cls`` of the module."""
        node = self._class_nodes.get(id(cls))
        if node is None:
            import pytest

            node = self._class_nodes[id(cls)] = pytest.Class.from_parent(
                self.module_node(), name=name, obj=cls
            )
        return node

    def made(self, collector: Callable[[], Any], name: str, obj: Any, collects: bool) -> list[Any] | None:
        """What the hooks make of ``name``: None when rt's own collection of it stands (or rt does not collect
        it and no hook answered), else the pytest nodes that replace it (none: the name is dropped).
        ``collector`` makes the module's or class's node; ``collects``: rt's collection takes the name."""
        if name in IGNORED:
            return None

        def rt_collection() -> Any:
            return DEFAULT if collects else None

        rt_collection.pytest_impl = {"trylast": True}  # type: ignore[attr-defined]
        available = {"collector": collector(), "name": name, "obj": obj}
        answer = pyplugins.call(HOOK, [rt_collection, *self.hooks], available, firstresult=True)
        if answer is DEFAULT:
            return None
        if answer is None:
            return [] if collects else None
        nodes = answer if isinstance(answer, list) else [answer]
        if collects:
            if any(_marked_class(node) for node in nodes):
                return nodes  # a Class the hook marked: collected with its node, whose marks its tests have
            if nodes and all(_pytests_own(node, name) for node in nodes):
                return None
            return [node for node in nodes if not _pytests_own(node, name)]
        # pytest's own node of a name rt's name filters leave out (SQLAlchemy's plugin answers with a ``Class``
        # for each ``*Test`` class): the caller collects it as rt collects a test (:func:`collected_by_rt`)
        return nodes

    def add(self, nodes: list[Any], into: Suite, selectors: tuple[str, ...]) -> None:
        """Add the items and collectors a hook made to ``into``, as the ones of ``pytest_collect_file``."""
        from rt_testrunner.pycollect import add_nodes

        add_nodes(nodes, self.path, into, self.session, selectors)


def collected_by_rt(node: Any, name: str) -> str | None:
    """What rt's own collection makes of a node a hook answered with for ``name``: ``"class"`` for pytest's own
    ``Class`` of a class under any name (SQLAlchemy's plugin makes one per database backend, of a subclass it
    sets on the module), ``"function"`` for pytest's own ``Function`` of ``name``; None for another node (a
    suite's own item or collector, run as pytest runs it)."""
    kind = type(node)
    if kind.__module__ != "_pytest.python":
        return None
    if kind.__name__ == "Class":
        try:
            return "class" if isinstance(node.obj, type) else None
        except Exception:  # noqa: BLE001 - a name the module lacks: pytest's own collection error, as a node's
            return None
    return "function" if _pytests_own(node, name) else None


def _marked_class(node: Any) -> bool:
    """``node`` is pytest's own ``Class`` to which the hook gave marks of its own (``add_marker``)."""
    from rt_testrunner.pyforeign import added_marks

    kind = type(node)
    return (kind.__module__, kind.__name__) == ("_pytest.python", "Class") and bool(added_marks(node))


def _pytests_own(node: Any, name: str) -> bool:
    """``node`` is pytest's own ``Function`` or ``Class`` of ``name``: what rt's collection of it makes."""
    kind = type(node)
    return (
        kind.__module__ == "_pytest.python"
        and kind.__name__ in ("Function", "Class")
        and getattr(node, "originalname", node.name) == name
    )
