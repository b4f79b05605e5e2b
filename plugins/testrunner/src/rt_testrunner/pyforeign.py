"""A suite's or plugin's own ``pytest.Module`` (and ``pytest.Class``) subclasses, collected by rt.

``pytest_collect_file`` and ``pytest_pycollect_makemodule`` hooks return subclasses of pytest's ``Module``
that change which names are tests: pytest-relaxed's ``SpecModule`` takes every public function and class of
any ``.py`` file of ``tests/`` (its ``istestfunction``/``istestclass``), and its ``SpecClass`` every public
method and nested class, copying the outer class's helpers into the nested one (its ``_getobj``). pytest's
``PyCollector.collect()`` asks ``pytest_pycollect_makeitem`` for each name, whose built-in answer asks the
collector's ``istestclass``/``istestfunction``. rt runs the collector's own ``collect()`` (and its classes'),
so every override takes effect, with a hook relay (:class:`CollectHooks`) whose built-in answer makes
pytest's ``Class`` nodes for classes and a :func:`placeholder` item for each test function: rt then collects
each function the nodes name, with its fixtures, marks and parametrization, as any test of a module
(:meth:`rt_testrunner.pycollect_module.ModuleCollection.collect_nodes`). pytest's fixture manager, which
``Module.collect()`` and ``Class.collect()`` register xunit set-ups and fixtures with, is rt's registry: the
calls are answered by :class:`rt_testrunner.pyfixturemanager.FixtureManager`.
"""

from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rt_testrunner import pyplugins

if TYPE_CHECKING:
    from rt_testrunner.pysession import PytestSession

MAKEITEM = "pytest_pycollect_makeitem"


@functools.cache
def placeholder() -> Any:
    """The item rt's built-in ``pytest_pycollect_makeitem`` answers for a test function: it stands for the
    function (``obj``) until rt collects it."""
    import pytest

    class RtFunction(pytest.Item):
        """A test function a collector took, collected by rt (never run as this node)."""

        obj: Any = None
        #: the function's name (``name`` has the parameter id of the test it stands for, if any)
        originalname = ""
        #: the test rt collected of the function, when it stands for one (hook_classes.py)
        rt_case: Any = None

        def runtest(self) -> None:  # pragma: no cover - rt runs the function it stands for
            raise NotImplementedError

    return RtFunction


def is_function(node: Any) -> bool:
    return isinstance(node, placeholder())


def builtin_makeitem(collector: Any, name: str, obj: Any) -> Any:
    """pytest's own answer (``python.py`` and ``unittest.py``): a ``unittest.TestCase`` subclass or a class the
    collector's ``istestclass`` takes is a ``Class`` node (pytest's ``UnitTestCase`` for the first), a function
    its ``istestfunction`` takes is a :func:`placeholder`; anything else (a non-function the collector's rules
    take: pytest only warns) is nothing."""
    import pytest

    if inspect.isclass(obj):
        from rt_testrunner.pycollect_module import is_testcase

        if is_testcase(obj) and not inspect.isabstract(obj):
            from _pytest.unittest import UnitTestCase

            return UnitTestCase.from_parent(collector, name=name, obj=obj)
        if collector.istestclass(obj, name):
            return pytest.Class.from_parent(collector, name=name, obj=obj)
        return None
    if not collector.istestfunction(obj, name):
        return None
    function = getattr(obj, "__func__", obj)
    if not inspect.isfunction(inspect.unwrap(function)) or not getattr(function, "__test__", True):
        return None
    cases = None if id(collector) in _BY_RT else _cases_for_hook(collector, name)
    if cases is None:
        return _placeholder(collector, name, function)
    return [_placeholder(collector, name, function, case) for case in cases]


def _placeholder(collector: Any, name: str, function: Any, case: Any = None) -> Any:
    item = placeholder().from_parent(collector, name=name if case is None else case.name)
    item.obj = function
    item.originalname = name
    item.rt_case = case
    return item


def _cases_for_hook(collector: Any, name: str) -> Any:
    """The tests rt collected of function ``name`` of ``collector``, a ``pytest.Class`` a collection hook
    collects itself (hook_classes.py): pytest gives one item per parametrized case, named with its id, which
    the hook may look up by name. None: rt collects the function when it collects the node."""
    import pytest

    if not isinstance(collector, pytest.Class):
        return None
    hook_classes = getattr(collector.session, "hook_classes", None)
    return None if hook_classes is None else hook_classes.cases_of(collector, name)


class CollectHooks:
    """``node.ihook`` of the nodes rt makes for a suite's collectors: ``pytest_pycollect_makeitem`` is the
    conftest.py files' above ``path`` (the nearest first), with :func:`builtin_makeitem` last, as pytest's;
    any other hook is the session's relay."""

    def __init__(self, session: PytestSession, path: Path) -> None:
        self._session = session
        self._path = path

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session.config.hook, name)

    def pytest_pycollect_makeitem(self, **available: Any) -> Any:
        hooks = [_builtin_hook, *self._session.hooks_for(MAKEITEM, str(self._path))]
        return pyplugins.call(MAKEITEM, hooks, available, firstresult=True)

    def pytest_collect_file(self, **available: Any) -> Any:
        """The conftest.py files' and plugins' collectors of a file, then pytest's own (a ``Module`` for a test
        module): what a folder collector of the suite's own (pydirectory.py) gets for the files it picks."""
        name = "pytest_collect_file"
        hooks = [_python_collect_file, *self._session.hooks_for(name, str(self._path) + os.sep)]
        return pyplugins.call(name, hooks, available)

    def pytest_collect_directory(self, **available: Any) -> Any:
        """The hooks' collector of a folder, else pytest's own: a ``Package`` with an ``__init__.py``, a ``Dir``."""
        name = "pytest_collect_directory"
        hooks = [_default_directory, *self._session.hooks_for(name, str(self._path) + os.sep)]
        return pyplugins.call(name, hooks, available, firstresult=True)

    def pytest_ignore_collect(self, collection_path: Path, **_: Any) -> bool | None:
        return self._session.is_ignored(Path(collection_path)) or None


def _python_collect_file(file_path: Path, parent: Any) -> Any:
    """pytest's ``python.py`` answer: a ``Module`` for a ``.py`` file the configuration's ``python_files`` (or
    rt's patterns) take, or one named on the command line."""
    from rt_testrunner.pydirectory import walked

    path = Path(file_path)
    if path.suffix != ".py" or not (walked(path, parent.session) or parent.session.isinitpath(path)):
        return None
    import pytest

    return pytest.Module.from_parent(parent, path=path)


def _default_directory(path: Path, parent: Any) -> Any:
    import pytest

    kind = pytest.Package if (Path(path) / "__init__.py").is_file() else pytest.Dir
    return kind.from_parent(parent, path=Path(path))


_python_collect_file.pytest_impl = {"trylast": True}  # type: ignore[attr-defined]
_default_directory.pytest_impl = {"trylast": True}  # type: ignore[attr-defined]


def _builtin_hook(collector: Any, name: str, obj: Any) -> Any:
    return builtin_makeitem(collector, name, obj)


_builtin_hook.pytest_impl = {"trylast": True}  # type: ignore[attr-defined]


#: the nodes whose ``collect()`` rt itself calls now (:func:`children`): rt collects their functions then
_BY_RT: set[int] = set()


def children(node: Any) -> list[Any]:
    """What ``node`` (a pytest ``Module`` or ``Class`` subclass) collects, by its own ``collect()``."""
    _BY_RT.add(id(node))
    try:
        return list(node.collect() or ())
    finally:
        _BY_RT.discard(id(node))


def hold_module(node: Any, module: Any) -> None:
    """Give pytest's ``Module`` node ``node`` the module rt imported, as pytest's ``obj`` property does when it
    imports it: the node caches it (no second import), and takes the module's ``pytestmark`` marks and its
    names as its own markers and keywords. A collector under the node reads them there: pytest-describe's
    block of a module marked ``anyio`` (graphql-core 3.3.2) takes that mark by ``iter_markers()``."""
    from _pytest.mark.structures import get_unpacked_marks

    node._obj = module  # noqa: SLF001 - pytest's own cache of the imported module
    node.own_markers.extend(get_unpacked_marks(module))
    node.keywords.update(module.__dict__)


def added_marks(node: Any) -> list[Any]:
    """The marks a hook gave ``node`` (a pytest ``Class``) with ``add_marker``, without those of its class's
    ``pytestmark`` (rt reads them from the class): SQLAlchemy's testing plugin marks each class it builds per
    backend ``backend`` before collecting it, and pytest's ``-m backend`` selects its tests by that mark."""
    from _pytest.mark.structures import get_unpacked_marks

    obj = node.obj  # pytest adds the object's marks to own_markers the first time it is read
    own = (
        {id(mark) for mark in get_unpacked_marks(obj, consider_mro=True)} if isinstance(obj, type) else set()
    )
    return [mark for mark in node.own_markers if id(mark) not in own]
