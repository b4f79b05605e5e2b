"""Test classes a ``pytest_collection_modifyitems`` hook collects itself and puts in ``items``.

SQLAlchemy's testing plugin replaces the items of each ``__backend__`` class by those of a subclass per
database backend: it sets ``type(name, (cls,), {...})`` on the module, builds a ``pytest.Class`` of it under
the module's node (``Class.from_parent(name=..., parent=module)``), collects it with pytest's own
``Class.collect()`` and looks each new item up by the name of the item it replaces
(``rebuilt[cls]["test_ddl[construct]"]``). pytest's ``Class.collect()`` gives one item per parametrized case,
named with its id, so the hook finds them all. rt's answer to ``pytest_pycollect_makeitem`` inside such a
class (pyforeign.py) is one item per case too, named as rt names its tests: rt collects the class as a test
class of the file at the first function the hook's ``collect()`` asks for (:class:`HookClasses`), and each
placeholder item carries its test, which runs in its place once the hook returns (:func:`adopt_made_items`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rt_testrunner.model import Suite, TestCase
from rt_testrunner.pymarks import marks_of

if TYPE_CHECKING:
    from rt_testrunner.pycollect_module import ModuleCollection


class HookClasses:
    """The test classes rt collected for the collection hooks, by their ``pytest.Class`` node, while the hooks
    run (the files' roots are known then)."""

    def __init__(self, session: ModuleCollection, roots: list[Suite]) -> None:
        self._session = session
        #: the root suite of each collected file, by file
        self._roots: dict[str, Suite] = {}
        for root in roots:
            first = next((case for case in root.tests() if case.item is not None), None)
            if first is not None:
                self._roots[first.item.file] = root
        #: the class node (kept alive: its id is the key) and the tests of each function, by function name
        self._classes: dict[int, tuple[Any, dict[str, list[TestCase]] | None]] = {}

    def cases_of(self, class_node: Any, name: str) -> list[TestCase] | None:
        """The tests of function ``name`` of ``class_node``, a ``pytest.Class`` a hook built under the module
        node of one of rt's tests, in the order rt runs them; None when rt does not collect it so (the node
        is elsewhere, or no hook is running)."""
        known = self._classes.get(id(class_node))
        if known is None:
            known = (class_node, self._collect(class_node))
            self._classes[id(class_node)] = known
        by_name = known[1]
        return None if by_name is None else by_name.get(name)

    def _collect(self, class_node: Any) -> dict[str, list[TestCase]] | None:
        file = str(getattr(getattr(class_node, "parent", None), "path", ""))
        root = self._roots.get(file)
        if root is None:
            return None
        cases = collect_class(self._session, class_node, root, file)
        if cases is None:
            return None
        by_name: dict[str, list[TestCase]] = {}
        for case in cases:
            if case.item.cls is class_node.obj:
                by_name.setdefault(case.item.originalname, []).append(case)
        return by_name


def collect_class(
    session: ModuleCollection, class_node: Any, root: Suite, file: str
) -> list[TestCase] | None:
    """rt collects the class of ``class_node`` (a ``pytest.Class`` under the node of module ``file``, whose
    root suite is ``root``) as a test class of the file, with the node's own ``collect()`` (which says which
    of its names are tests), the module's marks and ``pytest_generate_tests`` applying; its tests, None when
    the node is not such a class."""
    import pytest

    from rt_testrunner.pycollect_module import InModule, is_testcase

    module = getattr(class_node.parent, "obj", None)
    cls = class_node.obj
    if (
        not isinstance(class_node, pytest.Class)
        or not isinstance(cls, type)
        or not hasattr(module, "__dict__")
    ):
        return None
    hook = module.__dict__.get("pytest_generate_tests")
    where = InModule(module, file, [(f"{file}::", hook)] if callable(hook) else [], ())
    before = len(root.children)
    session._collect_class(  # noqa: SLF001 - the session's own collection
        where, cls, class_node.name, root, marks_of(module), is_testcase(cls), class_node
    )
    return [
        case
        for suite in root.children[before:]
        for case in (suite.tests() if isinstance(suite, Suite) else ())
        if case.item is not None
    ]


def adopt_made_items(session: ModuleCollection, roots: list[Suite], nodes: list[Any]) -> None:
    """Put rt's tests in ``nodes`` (the ``items`` a ``pytest_collection_modifyitems`` hook left) in place of
    the placeholders of the test functions of the classes it collected itself (pyforeign.py). A placeholder
    carries its test when rt collected the class as the hook asked (:class:`HookClasses`); otherwise (a class
    under another node than a module's) rt collects the class now, and each placeholder stands for every test
    of its function."""
    from rt_testrunner import pyforeign

    known = {id(case.item.node) for root in roots for case in root.tests() if case.item is not None}
    made = [node for node in nodes if id(node) not in known and pyforeign.is_function(node)]
    if not made:
        return
    late = [node for node in made if node.rt_case is None]
    adopted = _collect_late(session, roots, late) if late else {}
    replaced: list[Any] = []
    for node in nodes:
        if id(node) in known or not pyforeign.is_function(node):
            replaced.append(node)
        elif node.rt_case is not None:
            replaced.append(node.rt_case.item.node)
        else:
            cases = adopted.get(id(node.parent), [])
            replaced.extend(c.item.node for c in cases if c.item.originalname == node.name)
    nodes[:] = replaced


def _collect_late(
    session: ModuleCollection, roots: list[Suite], made: list[Any]
) -> dict[int, list[TestCase]]:
    """The tests of the classes of ``made`` (placeholders without a test), collected now as test classes of
    their files, by the id of the class node."""
    files = {case.item.file: root for root in roots for case in root.tests()[:1] if case.item is not None}
    adopted: dict[int, list[TestCase]] = {}
    for class_node in dict.fromkeys(node.parent for node in made):
        file = str(getattr(class_node.parent, "path", ""))
        root = files.get(file)
        cases = None if root is None else collect_class(session, class_node, root, file)
        if cases:
            adopted[id(class_node)] = cases
    return adopted
