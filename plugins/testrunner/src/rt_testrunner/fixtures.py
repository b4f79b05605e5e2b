"""pytest fixtures, run by rt: definitions read from what ``@pytest.fixture`` records, visibility and
overriding by name across conftest.py levels, scopes with their caches and finalizers, and ``request``.

Set-up is written as coroutines that only suspend for an async fixture, so one implementation serves sync
tests (driven on the main thread, where they never suspend) and async ones (awaited in the run's loop).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FunctionType
from typing import TYPE_CHECKING, Any

import attrs

from rt_testrunner.execute import (
    ANYIO_OWNER,
    LOOP,
    POLICY_OPTION,
    BackendKey,
    LoopKey,
    backend_key,
    in_home_loop,
    in_run,
    main_loops,
    use_backend,
)

if TYPE_CHECKING:
    from rt_testrunner.pyfixturemanager import RuntimeDefs

SCOPES = ("session", "package", "module", "class", "function")
NOTSET: Any = object()


class FixtureLookupError(LookupError):
    """A requested fixture that no visible definition provides (pytest's "fixture 'x' not found")."""


#: rt's FixtureLookupError joined with pytest's, made once per pytest module (see :func:`lookup_error`)
_JOINED: dict[int, type[FixtureLookupError]] = {}


def lookup_error(message: str, argname: str | None = None) -> FixtureLookupError:
    """The error for a fixture that cannot be given, of pytest's own ``FixtureLookupError`` class too when the
    suite imported pytest: a test asserting ``pytest.raises(pytest.FixtureLookupError)`` around
    ``request.getfixturevalue("missing")`` then sees the class it names. rt's own code catches rt's class,
    which the joined one derives from, and rt never imports pytest for it."""
    module = sys.modules.get("_pytest.fixtures")
    theirs = getattr(module, "FixtureLookupError", None)
    if not (isinstance(theirs, type) and issubclass(theirs, BaseException)):
        return FixtureLookupError(message)
    joined = _JOINED.get(id(theirs))
    if joined is None:

        class Joined(FixtureLookupError, theirs):  # type: ignore[misc,valid-type]
            def __init__(self, message: str, argname: str | None = None) -> None:
                LookupError.__init__(self, message)
                # the attributes pytest's carries, which a suite may read from ``excinfo.value``
                self.argname = argname
                self.request = None
                self.fixturestack: list[Any] = []
                self.msg = message

            def __str__(self) -> str:
                return self.msg

        Joined.__name__ = Joined.__qualname__ = "FixtureLookupError"
        joined = _JOINED[id(theirs)] = Joined
    error = joined(message, argname)
    return error


@attrs.define(eq=False)
class FixtureDef:
    name: str
    func: Callable[..., Any]
    scope: str = "function"
    params: tuple[Any, ...] | None = None
    ids: Any = None
    autouse: bool = False
    #: where the definition is visible: "" everywhere, "<dir>/" a conftest's folder and below, "<file>::" one
    #: module, "<file>::<Class>::" one class
    baseid: str = ""
    argnames: tuple[str, ...] = ()
    #: defined in a class body: called bound to the test's instance
    method: bool = False
    #: a method's: the test class whose collection found it (a subclass's for an inherited one); a wider than
    #: function-scoped one is bound to the one instance of it, as pytest binds it to its ``Class`` node's
    holder: type | None = None

    @property
    def is_async(self) -> bool:
        return _is_async_function(self.func)

    @property
    def argname(self) -> str:
        """pytest's name for it (``pytest_fixture_setup(fixturedef)`` hooks read it)."""
        return self.name


def _is_async_function(func: Any) -> bool:
    """An ``async def`` fixture (coroutine or async generator function, bound or not): the ones pytest's
    plugins set up in a loop."""
    return inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)


def fixture_marker(obj: Any) -> tuple[Callable[..., Any], Any] | None:
    """``(function, marker)`` when ``obj`` is a pytest fixture: pytest >= 8.4 wraps the function in a
    ``FixtureFunctionDefinition``; older versions set ``_pytestfixturefunction`` on the function itself.

    The marker must be pytest's own ``FixtureFunctionMarker``: a module's objects that answer every attribute
    (glom's ``T``, a ``MagicMock``, proxies) would otherwise pass for fixtures, and reading their made-up
    ``params`` can iterate forever. With pytest not imported, nothing is a fixture."""
    fixtures_module = sys.modules.get("_pytest.fixtures")
    marker_type = getattr(fixtures_module, "FixtureFunctionMarker", None)
    if not isinstance(marker_type, type):
        return None
    try:
        marker = getattr(obj, "_fixture_function_marker", None)
        if isinstance(marker, marker_type):
            return obj._fixture_function, marker
        marker = getattr(obj, "_pytestfixturefunction", None)
    except Exception:  # noqa: BLE001 - an object with a hostile __getattr__ is not a fixture
        return None
    if isinstance(marker, marker_type) and callable(obj):
        return obj, marker
    return None


def argnames(func: Callable[..., Any], method: bool = False) -> tuple[str, ...]:
    """The names a function asks for: parameters without defaults, ``self``/``cls`` of a method excluded,
    and those ``unittest.mock.patch`` decorators fill in. A ``classmethod`` (``@pytest.fixture`` over
    ``@classmethod`` in a test class, flask-caching 2.5.1's class-scoped ``requirements(cls, redis_server)``)
    is read through its function: ``inspect.signature`` refuses it before Python 3.13, and rt called the
    fixture without its arguments."""
    if isinstance(func, classmethod):
        func = func.__func__
    names = _plain_function_argnames(func)
    if names is None:
        try:
            signature = inspect.signature(func)
        except (TypeError, ValueError):
            return ()
        names = [
            p.name
            for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty
        ]
    if method and names and not isinstance(inspect.unwrap(func), staticmethod):
        names = names[1:]
    patchings = getattr(func, "patchings", None)
    if patchings:
        # the patch decorator passes its mocks positionally, before the fixtures given by name: the first
        # parameters (after ``self``) are the mocks, as pytest's getfuncargnames drops them
        names = names[sum(1 for p in patchings if not p.attribute_name and p.new is _mock_default()) :]
    return tuple(names)


#: what makes ``inspect.signature`` of a function other than its code's: a decorator's ``__wrapped__`` (followed),
#: an explicit ``__signature__``, ``functools.partialmethod``'s marker
_SIGNATURE_ATTRIBUTES = ("__wrapped__", "__signature__", "_partialmethod")


def _plain_function_argnames(func: Any) -> list[str] | None:
    """The parameters ``inspect.signature`` would give, without defaults, read from a plain function's code
    (``def`` in a module or class, not wrapped): the same names at a tenth of the cost, once per collected test
    function and fixture. None for anything else, which goes through ``inspect.signature``."""
    if type(func) is not FunctionType:
        return None
    attributes = func.__dict__
    if any(name in attributes for name in _SIGNATURE_ATTRIBUTES):
        return None
    code = func.__code__
    positional = code.co_argcount
    keyword_only = code.co_kwonlyargcount
    variables = code.co_varnames
    defaults = func.__defaults__
    # positional-only parameters are left out, as the kinds kept below leave them out
    required = variables[code.co_posonlyargcount : positional - (len(defaults) if defaults else 0)]
    keyword_defaults = func.__kwdefaults__ or {}
    return [
        *required,
        *(name for name in variables[positional : positional + keyword_only] if name not in keyword_defaults),
    ]


def _mock_default() -> Any:
    import sys

    mock = sys.modules.get("unittest.mock")
    return getattr(mock, "DEFAULT", NOTSET)


def _warn_instance_method(fixture: FixtureDef) -> None:
    """pytest 9.2's ``PytestRemovedIn10Warning`` for a class-scoped (or broader) fixture written as an instance
    method, each time it is set up: what it sets on ``self`` is not seen by the tests, each of which has an
    instance of its own. Under ``filterwarnings = error`` the tests asking for it are set-up errors
    (python-docx 1.2.0: 9 errors under pytest, none under rt before)."""
    from _pytest.deprecated import CLASS_FIXTURE_INSTANCE_METHOD

    warning = CLASS_FIXTURE_INSTANCE_METHOD.format(scope=fixture.scope.capitalize(), fixturename=fixture.name)
    warnings.warn(warning, stacklevel=3)


def make_def(name: str, obj: Any, baseid: str, method: bool = False, config: Any = None) -> FixtureDef | None:
    found = fixture_marker(obj)
    if found is None:
        return None
    func, marker = found
    if isinstance(func, staticmethod):  # ``@pytest.fixture`` over ``@staticmethod`` in a test class
        func, method = func.__func__, False
    scope = marker.scope if isinstance(marker.scope, str) else "function"
    if callable(marker.scope) and config is not None:
        scope = dynamic_scope(marker.scope, marker.name or name, config)
    params = tuple(marker.params) if marker.params is not None else None
    return FixtureDef(
        marker.name or name,
        func,
        scope,
        params,
        marker.ids,
        bool(marker.autouse),
        baseid,
        argnames(func, method),
        method,
    )


def dynamic_scope(choose: Callable[..., Any], name: str, config: Any) -> str:
    """A fixture's ``scope=callable``, chosen as pytest chooses it when the fixture is registered:
    ``choose(fixture_name=, config=)``; what is not a scope's name is pytest's error, in one line."""
    scope = choose(fixture_name=name, config=config)
    if not isinstance(scope, str) or scope not in SCOPES:
        raise TypeError(
            f"Fixture '{name}' from the callable {getattr(choose, '__name__', choose)!r} returned {scope!r},"
            f" which is not one of the scopes {', '.join(map(repr, SCOPES))}"
        )
    return scope


def _decorated_member(
    name: str, member: staticmethod[..., Any] | classmethod[Any, ..., Any]
) -> tuple[Any, bool]:
    """A test class's ``@staticmethod`` or ``@classmethod`` over ``@pytest.fixture``, as pytest 9.2 reads it:
    the static one is the fixture (a plain function, called without ``self``; cloup's test classes have such
    fixtures), the class one is no fixture at all. Either way with pytest's ``PytestWarning`` telling to put
    ``@pytest.fixture`` on top, at the function's line. Returns what to register and whether it is a method."""
    if fixture_marker(member.__func__) is None:
        return member, True
    function = getattr(member.__func__, "_fixture_function", member.__func__)
    if isinstance(member, staticmethod):
        message = f"fixture {name!r} is wrapped by @staticmethod above @pytest.fixture; place @pytest.fixture above @staticmethod"
        found: Any = member.__func__
    else:
        message = f"cannot discover fixture {name!r} because it is wrapped by @classmethod; place @pytest.fixture above @classmethod"
        found = None
    code = getattr(function, "__code__", None)
    if code is not None:
        category = getattr(sys.modules.get("pytest"), "PytestWarning", UserWarning)
        # with the function's module and its warning registry, as pytest's warn_explicit_for: the same
        # warning of the same definition is shown once (pytest-factoryboy's register() in a test class and in
        # a class inside it makes the same fixtures, at the one line of its fixture factory)
        namespace = getattr(function, "__globals__", None)
        registry = namespace.setdefault("__warningregistry__", {}) if isinstance(namespace, dict) else None
        warnings.warn_explicit(
            message,
            category,
            code.co_filename,
            code.co_firstlineno,
            module=getattr(function, "__module__", None),
            registry=registry,
        )
    return found, False


class Registry:
    """Every fixture definition of the run, by name, from the least to the most specific."""

    def __init__(self, fallback: Callable[[Registry], None] | None = None) -> None:
        self.defs: dict[str, list[FixtureDef]] = {}
        self.autouse: list[FixtureDef] = []
        #: called once, on the first name no definition provides: loads the fixtures of installed pytest
        #: plugins (pytest-mock's ``mocker`` ...), which are not imported at all while nothing needs them
        self._fallback = fallback
        #: what plugins register or inject while the run goes on (pyfixturemanager.py), made with the
        #: session's fixture manager
        self.runtime: RuntimeDefs | None = None
        #: pytest's config, given to a fixture's ``scope=callable`` (set by the session)
        self.config: Any = None

    def add(self, fixture: FixtureDef) -> None:
        found = self.defs.setdefault(fixture.name, [])
        found.append(fixture)
        found.sort(key=lambda d: len(d.baseid))  # stable: a later definition at the same level wins
        if fixture.autouse:
            self.autouse.append(fixture)

    def add_namespace(self, namespace: dict[str, Any], baseid: str, holder: type | None = None) -> None:
        """The fixtures defined in a module's namespace, or (``holder``: the test class) in a class's."""
        for name, value in list(namespace.items()):
            as_method = holder is not None
            if as_method and type(value) in (staticmethod, classmethod):
                value, as_method = _decorated_member(name, value)
            fixture = make_def(name, value, baseid, as_method, self.config)
            if fixture is not None:
                fixture.holder = holder
                self.add(fixture)

    def visible(self, name: str, key: str) -> list[FixtureDef]:
        found = [d for d in self.defs.get(name, ()) if key.startswith(d.baseid)]
        if self.runtime is not None and self.runtime.has(name):
            # closer than the collected ones at the same level: registered later, as under pytest
            found = sorted([*found, *self.runtime.visible(name, key)], key=lambda d: len(d.baseid))
        return found

    def load_installed_plugins(self) -> None:
        """Run the fallback now, if it has not run (once per registry)."""
        if self._fallback is not None:
            fallback, self._fallback = self._fallback, None
            fallback(self)

    def resolve(self, name: str, key: str, requester: FixtureDef | None = None) -> FixtureDef:
        """The closest definition of ``name`` for a test with node key ``key``; a fixture asking for its own
        name gets the next definition out (overriding by name)."""
        candidates = self.visible(name, key)
        if not candidates and self._fallback is not None:
            self.load_installed_plugins()
            candidates = self.visible(name, key)
        if requester is not None and requester.name == name and requester in candidates:
            candidates = candidates[: candidates.index(requester)]
        if not candidates:
            available = sorted(
                n for n, defs in self.defs.items() if any(key.startswith(d.baseid) for d in defs)
            )
            raise lookup_error(
                f"fixture {name!r} not found\n  available fixtures: {', '.join(available)}", name
            )
        return candidates[-1]

    def autouse_for(self, key: str) -> list[str]:
        names: list[str] = []
        for fixture in sorted(self.autouse, key=lambda d: (SCOPES.index(d.scope), len(d.baseid))):
            if key.startswith(fixture.baseid) and fixture.name not in names:
                names.append(fixture.name)
        return names

    def closure(self, initial: list[str], key: str, direct: set[str]) -> list[FixtureDef]:
        """All definitions a test needs (depth first, each once), except the names parametrized directly."""
        seen: dict[int, FixtureDef] = {}
        order: list[FixtureDef] = []

        def visit(name: str, requester: FixtureDef | None) -> None:
            if name in direct or name == "request":
                return
            try:
                fixture = self.resolve(name, key, requester)
            except FixtureLookupError:
                return  # reported when the test is set up
            if id(fixture) in seen:
                return
            seen[id(fixture)] = fixture
            for arg in fixture.argnames:
                visit(arg, fixture)
            order.append(fixture)

        for name in initial:
            visit(name, None)
        return order

    def names_closure(self, initial: list[str], key: str, direct: set[str]) -> list[str]:
        """pytest's ``fixturenames``, the order a test's fixtures are set up in: every name the test needs,
        depth first from ``initial`` with each name before the names it requests, then the widest scope first
        (a stable sort by the scope of each name's closest definition; a name without one, or parametrized
        directly, is function-scoped). So a class-scoped fixture of ``usefixtures`` is set up before a
        function-scoped autouse one, and skips the test before it runs (cachelib's ``memcached_server``)."""
        names: dict[str, None] = {}
        seen: set[int] = set()

        def visit(name: str, requester: FixtureDef | None) -> None:
            names.setdefault(name)
            if name in direct or name == "request":
                return
            try:
                fixture = self.resolve(name, key, requester)
            except FixtureLookupError:
                return
            if id(fixture) in seen:
                return
            seen.add(id(fixture))
            for arg in fixture.argnames:
                visit(arg, fixture)

        for name in initial:
            visit(name, None)

        def scope(name: str) -> int:
            if name in direct or name == "request":
                return SCOPES.index("function")
            candidates = self.visible(name, key)
            return SCOPES.index(candidates[-1].scope) if candidates else SCOPES.index("function")

        return sorted(names, key=scope)


# eq=False: never compared, so no __eq__/__hash__ to compile (0.7 M instructions less at import)
@attrs.define(eq=False)
class _Cached:
    param_key: Any
    value: Any = None
    error: BaseException | None = None
    #: the error's traceback when the fixture failed: each test that asks again gets the error with it, as
    #: pytest re-raises it, so re-raising does not add to one traceback, test after test
    traceback: Any = None
    finalizers: list[Callable[[], Any]] = attrs.Factory(list)


class ScopeState:
    """Values of fixtures above function scope, kept until their scope ends, and the finalizers to run then."""

    def __init__(self) -> None:
        self.cache: dict[tuple[int, Any], _Cached] = {}
        self.by_scope: dict[Any, list[tuple[int, Any]]] = {}

    def finish(self, *scope_keys: Any) -> Any:
        """Tear down everything cached for each of ``scope_keys`` in turn, last set up first. Returns a
        coroutine when an async finalizer is among them (the caller awaits it in the loop), else ``None``;
        the first error is raised after every finalizer ran."""
        finalizers: list[Callable[[], Any]] = []
        loops = main_loops(create=False)
        for scope_key in scope_keys:
            keys = self.by_scope.pop(scope_key, [])
            for key in reversed(keys):
                cached = self.cache.pop(key, None)
                if cached is not None:
                    finalizers.extend(reversed(cached.finalizers))
            if loops is not None:
                # pytest-asyncio closes the loop of a scope when the scope ends, after the scope's fixtures
                finalizers.append(functools.partial(loops.close_owned, scope_key))
        return run_finalizers(finalizers)


def run_finalizers(finalizers: list[Callable[[], Any]]) -> Any:
    """Call each finalizer (already in teardown order); a coroutine when one of them is async."""
    if any(getattr(f, "is_async", False) for f in finalizers):
        return _run_finalizers_async(finalizers)
    error: BaseException | None = None
    for finalizer in finalizers:
        try:
            finalizer()
        except BaseException as exc:  # noqa: BLE001 - every finalizer runs; the first error is raised
            error = error or exc
    if error is not None:
        raise error
    return None


async def _run_finalizers_async(finalizers: list[Callable[[], Any]]) -> None:
    error: BaseException | None = None
    for finalizer in finalizers:
        try:
            result = finalizer()
            if inspect.isawaitable(result):
                await result
        except BaseException as exc:  # noqa: BLE001 - every finalizer runs; the first error is raised
            error = error or exc
    if error is not None:
        raise error


class _GeneratorFinalizer:
    """Resumes a ``yield`` fixture after its scope: it must stop there (a second ``yield`` is an error)."""

    def __init__(self, generator: Any, name: str, main_loop: LoopKey | None = None) -> None:
        self.generator = generator
        self.name = name
        #: the main-thread loop (main_loops.py) the fixture was set up in: its teardown runs there, now
        self.main_loop = main_loop
        self.is_async = inspect.isasyncgen(generator) and main_loop is None
        #: the event loop the fixture was set up in, where it must finish (its objects belong to that loop)
        self.home = LOOP.get() if self.is_async else None

    def __call__(self) -> Any:
        if self.main_loop is not None:
            return main_loops().run(self.main_loop, self._finish)
        if self.is_async:
            return self._async()
        try:
            next(self.generator)
        except StopIteration:
            return None
        raise RuntimeError(f"fixture {self.name!r} yielded more than once")

    async def _async(self) -> None:
        await in_home_loop(self.home, self._finish)

    async def _finish(self) -> None:
        try:
            await self.generator.__anext__()
        except StopAsyncIteration:
            return
        raise RuntimeError(f"fixture {self.name!r} yielded more than once")


class _Dependent:
    """A finalizer of a cached fixture value that tears down a fixture made from it, as pytest's fixtures
    register their ``finish`` with each fixture they request: a session fixture built from a parametrized one is
    made again for the next parameter instead of keeping the first parameter's value."""

    def __init__(self, scopes: ScopeState, key: tuple[int, Any], entry: _Cached) -> None:
        self.scopes = scopes
        self.key = key
        self.entry = entry

    @property
    def is_async(self) -> bool:
        return any(getattr(f, "is_async", False) for f in self.entry.finalizers)

    def __call__(self) -> Any:
        if self.scopes.cache.get(self.key) is not self.entry:  # already torn down, or made again since
            return None
        del self.scopes.cache[self.key]
        finalizers, self.entry.finalizers = list(reversed(self.entry.finalizers)), []
        return run_finalizers(finalizers)


def _class_holder(item: Any, cls: type) -> Any:
    """The one instance of test class ``cls`` that the class-scoped (or wider) fixtures written as instance
    methods its collection found are bound to, as pytest's ``Class`` node makes one while it collects the
    class's fixtures: the outer class's for a test of a class nested in it, not the test's own."""
    holders: dict[type, Any] = item.session.fixture_holders
    if cls not in holders:
        unittest = sys.modules.get("unittest")
        is_case = unittest is not None and issubclass(cls, unittest.TestCase)
        holders[cls] = cls("runTest") if is_case else cls()
    return holders[cls]


def enclosing_classes(qualname: str | None) -> list[str]:
    """The qualified names of the classes a class of ``qualname`` is nested in, the outermost first (none
    for a class defined in a function, whose ``<locals>`` end the chain)."""
    if not qualname or "." not in qualname:
        return []
    parts = qualname.rpartition("<locals>.")[2].split(".")
    prefix = qualname[: len(qualname) - len(".".join(parts))]
    return [prefix + ".".join(parts[:depth]) for depth in range(1, len(parts))]


def scope_key(scope: str, item: Any, baseid: str = "") -> Any:
    if scope == "function":
        return ("function", id(item))
    if scope == "class":
        return ("class", item.file, item.cls.__qualname__ if item.cls is not None else None)
    if scope == "module":
        return ("module", item.file)
    if scope == "package":
        return ("package", _defining_package(baseid, item))
    return ("session",)


def _defining_package(baseid: str, item: Any) -> str | None:
    """The package a package-scoped fixture lives in, as pytest 8+ scopes it: the package whose conftest.py
    defines it, its sub-packages included (one value for ``pkg/`` and ``pkg/sub/``); a fixture defined outside
    any package (a root conftest.py, a plugin) lives for the session. A test module's own one: the module's
    package, where its tests are."""
    if baseid.endswith("/"):
        folder = baseid[:-1]
        return folder if os.path.exists(os.path.join(folder, "__init__.py")) else None
    if not baseid:
        return None
    return str(item.package) if item.package is not None else None


def param_key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return ("value", value)


class FixtureRequest:
    """pytest's ``request``: what a fixture or test knows about the test being set up."""

    def __init__(
        self,
        item: Any,
        setup: Setup,
        fixture: FixtureDef | None = None,
        param: Any = NOTSET,
        chain: tuple[FixtureDef, ...] | None = None,
    ) -> None:
        self._item = item
        self._setup = setup
        self._fixture = fixture
        #: the fixtures being set up when this request was made, the test's first, this one's last: whose
        #: requests ``_parent_request`` walks up
        self._chain = chain if chain is not None else setup.chain_to(fixture)
        if param is not NOTSET:
            self.param = param
            self.param_index = item.param_indices.get(fixture.name if fixture else "", 0)

    @property
    def fixturename(self) -> str | None:
        return self._fixture.name if self._fixture is not None else None

    @property
    def scope(self) -> str:
        return self._fixture.scope if self._fixture is not None else "function"

    @property
    def node(self) -> Any:
        """The node of the request's scope, as pytest's: for a class- or module-scoped fixture the test's
        class (or module) node, for a package-scoped one its package's, for a session-scoped one the
        session's, else the test's own node."""
        node = self._item.node
        scope = self.scope
        if scope in ("package", "session") and self._fixture is not None:
            from rt_testrunner import scope_nodes

            if scope == "session":
                return scope_nodes.session_node(self._item.session)
            package = _defining_package(self._fixture.baseid, self._item)
            return scope_nodes.package_node(self._item.session, package)
        if scope not in ("class", "module") or node is None:
            return node
        from rt_testrunner.pynodes import scope_node

        return scope_node(node, scope)

    @property
    def config(self) -> Any:
        return self._item.session.config

    @property
    def function(self) -> Any:
        return self._item.function

    @property
    def cls(self) -> Any:
        return self._item.cls

    @property
    def instance(self) -> Any:
        """The test's class instance; None for a fixture wider than a function, as pytest's."""
        return self._item.instance if self.scope == "function" else None

    @property
    def module(self) -> Any:
        return self._item.module

    @property
    def path(self) -> Path:
        return Path(self._item.file)

    @property
    def fspath(self) -> Any:
        return self._item.node.fspath

    @property
    def keywords(self) -> Any:
        return self._item.node.keywords

    @property
    def fixturenames(self) -> list[str]:
        """The test's fixture names, then those asked for with ``getfixturevalue`` since, as pytest's."""
        names = list(self._item.fixturenames)
        known = set(names)
        names += [name for name in self._setup.values if name not in known]
        return names

    @property
    def _fixturemanager(self) -> Any:
        """pytest's fixture manager (pyfixturemanager.py), as plugins read it: Hypothesis's health check,
        pytest-bdd's step lookup and run-time fixtures, pytest-factoryboy's dependencies."""
        from rt_testrunner.session_view import session_view

        return session_view(self._item.session)._fixturemanager

    @property
    def _pyfuncitem(self) -> Any:
        """pytest's name for the test's node."""
        return self._item.node

    @property
    def _fixture_defs(self) -> dict[str, Any]:
        """pytest's definitions of the fixtures this test has set up, by name (what plugins put there stays
        for the test)."""
        return self._setup.fixture_defs

    @property
    def _parent_request(self) -> Any:
        """pytest's ``SubRequest._parent_request``: the request of the fixture that asked for this one, the
        test's own request at the top, which has none (pytest's ``TopRequest``), so that ``hasattr`` ends a
        walk up the chain (pytest-factoryboy's cycle check reads each one's ``fixturename``)."""
        if self._fixture is None:
            raise AttributeError("_parent_request")
        chain = self._chain[:-1]
        if not chain:
            return self._setup.request
        parent = chain[-1]
        return FixtureRequest(
            self._item, self._setup, parent, self._item.params.get(parent.name, NOTSET), chain
        )

    @property
    def _fixturedef(self) -> Any:
        """The definition of the fixture this request is for (pytest's ``SubRequest._fixturedef``)."""
        if self._fixture is None:
            raise AttributeError("_fixturedef")
        return ActiveFixture(self._setup, self._fixture.name, self._fixture, top=False)

    def _get_active_fixturedef(self, name: str) -> Any:
        """The definition of ``name`` as this request sees it, set up first when it is not yet, as pytest's:
        its ``scope`` (what Hypothesis reads), and its ``cached_result``, which a plugin may set to force the
        value the test and the fixtures set up after it get (pytest-bdd's ``target_fixture``)."""
        self.getfixturevalue(name)
        fixture: FixtureDef | None = None
        if name != "request" and not (name in self._item.direct_params and self._fixture is None):
            fixture = self._setup.registry.resolve(name, self._item.key, self._fixture)
        return ActiveFixture(self._setup, name, fixture, top=self._fixture is None)

    @property
    def session(self) -> Any:
        from rt_testrunner.scope_nodes import session_node

        return session_node(self._item.session)

    def addfinalizer(self, finalizer: Callable[[], Any]) -> None:
        if self._fixture is None or self._fixture.scope == "function":
            self._setup.finalizers.append(finalizer)
        else:
            self._setup.scoped_finalizer(self._fixture, finalizer)

    def applymarker(self, marker: Any) -> None:
        self._item.node.add_marker(marker)

    def getfixturevalue(self, name: str) -> Any:
        # a definition a plugin put in ``request._fixture_defs`` with its value is what pytest answers from
        # (pytest-factoryboy's model fixture asks for its own name while it is set up)
        stored = self._setup.fixture_defs.get(name)
        result = getattr(stored, "cached_result", None) if stored is not None else None
        if isinstance(result, tuple) and len(result) == 3 and result[2] is None:
            return result[0]
        self._check_param(name, sys._getframe(1))
        coroutine = self._setup.get(name, self._fixture)
        try:
            coroutine.send(None)
        except StopIteration as stop:
            return stop.value
        coroutine.close()
        raise RuntimeError(f"getfixturevalue({name!r}): an async fixture cannot be set up from sync code")

    def _check_param(self, name: str, caller: Any) -> None:
        """pytest's failure for a parametrized fixture asked for by a test it does not parametrize (asked for
        with ``getfixturevalue``, so unknown when the tests were made): where it is defined, where asked."""
        item = self._item
        if name == "request" or name in item.all_params or name in self._setup.values:
            return
        try:
            fixture = self._setup.registry.resolve(name, item.key, self._fixture)
        except FixtureLookupError:
            return  # the lookup error is given by the set-up
        if fixture.params is None:
            return
        root = Path(item.session.root)
        code = getattr(inspect.unwrap(fixture.func), "__code__", None)
        defined = f"{_shown(code.co_filename, root)}:{code.co_firstlineno}" if code is not None else "?"
        asked = f"{_shown(caller.f_code.co_filename, root)}:{caller.f_lineno}"
        from rt_testrunner.async_plugins import fail

        fail(
            "The requested fixture has no parameter defined for test:\n"
            f"    {item.node.nodeid}\n\n"
            f"Requested fixture '{fixture.name}' defined in:\n{defined}\n\n"
            f"Requested here:\n{asked}"
        )

    def raiseerror(self, msg: str | None) -> None:
        raise lookup_error(msg or "fixture error")

    def __repr__(self) -> str:
        return f"<FixtureRequest for {self._item.node.nodeid!r}>"


class ActiveFixture:
    """What ``request._get_active_fixturedef(name)`` and ``request._fixturedef`` give: the definition (its
    ``scope``, ``argnames``, ``func`` ...) with pytest's ``cached_result``, read and set for this test."""

    def __init__(self, setup: Setup, name: str, fixture: FixtureDef | None, top: bool) -> None:
        self._setup = setup
        self._name = name
        self._fixture = fixture
        self._top = top

    @property
    def argname(self) -> str:
        return self._name

    @property
    def scope(self) -> str:
        return self._fixture.scope if self._fixture is not None else "function"

    @property
    def cached_result(self) -> tuple[Any, Any, Any] | None:
        return self._setup.cached(self._name, self._fixture)

    @cached_result.setter
    def cached_result(self, result: tuple[Any, Any, Any] | None) -> None:
        if result is not None and result[2] is None:
            self._setup.force(self._name, self._fixture, result[0], self._top)

    def __getattr__(self, name: str) -> Any:
        if self._fixture is None:
            raise AttributeError(name)
        return getattr(self._fixture, name)

    def __repr__(self) -> str:
        return f"<FixtureDef argname={self._name!r} scope={self.scope!r}>"


class Setup:
    """Setting up one test: fixture values by name, its function-scope finalizers, the shared scope state."""

    def __init__(self, item: Any, registry: Registry, scopes: ScopeState) -> None:
        self.item = item
        self.registry = registry
        self.scopes = scopes
        self.values: dict[str, Any] = {}
        self.finalizers: list[Callable[[], Any]] = []
        #: the fixtures being set up, each asked for by the one before it (the first by the test)
        self._setting_up: list[FixtureDef] = []
        self.request = FixtureRequest(item, self)
        self._active: dict[tuple[int, Any], _Cached] = {}
        self._function_values: dict[int, Any] = {}
        #: anyio's loops this test holds (main_loops.py), dropped after its teardown
        self.loop_leases: list[LoopKey] = []
        #: ``request._fixture_defs``, what plugins store there (pytest-factoryboy)
        self.fixture_defs: dict[str, Any] = {}
        #: the set-up raised and a ``pytest_runtest_makereport`` hook made its report passed: the call runs
        #: with the values set up, and a fixture that is not is pytest's ``KeyError`` of its name, not asked
        #: for again
        self.incomplete = False

    def chain_to(self, fixture: FixtureDef | None) -> tuple[FixtureDef, ...]:
        """The fixtures being set up down to ``fixture``, when it is the one being set up now (a request made
        while it is: its ``request`` argument, ``getfixturevalue("request")``), else ``fixture`` alone."""
        if fixture is None:
            return ()
        if self._setting_up and self._setting_up[-1] is fixture:
            return tuple(self._setting_up)
        return (fixture,)

    def cached(self, name: str, fixture: FixtureDef | None) -> tuple[Any, Any, Any] | None:
        """pytest's ``FixtureDef.cached_result`` of ``fixture`` for this test: ``(value, key, None)``, ``(None,
        key, (error, traceback))`` after it failed, None while it is not set up."""
        if fixture is None:
            if name in self.values:
                return (self.values[name], 0, None)
            if name in self.item.direct_params:
                return (self.item.direct_params[name], self.item.param_indices.get(name, 0), None)
            return None
        index = self.item.param_indices.get(fixture.name, 0) if fixture.params is not None else 0
        if fixture.scope == "function":
            if id(fixture) in self._function_values:
                return (self._function_values[id(fixture)], index, None)
            return None
        key = self.entry_key(fixture)
        entry = self._active.get(key) or self.scopes.cache.get(key)
        if entry is None:
            return None
        if entry.error is not None:
            return (None, index, (entry.error, entry.traceback))
        return (entry.value, index, None)

    def force(self, name: str, fixture: FixtureDef | None, value: Any, top: bool) -> None:
        """A plugin set ``cached_result``: ``value`` is the fixture's from now on, for the test (when the
        test sees this definition under ``name``) and for the fixtures set up after."""
        if fixture is not None and fixture.scope == "function":
            self._function_values[id(fixture)] = value
        elif fixture is not None:
            key = self.entry_key(fixture)
            entry = self._active.get(key) or self.scopes.cache.get(key)
            if entry is not None:
                entry.value = value
        if top or name in self.values:
            self.values[name] = value

    def entry_key(self, fixture: FixtureDef) -> tuple[int, Any]:
        """Where the value of a fixture wider than a function is kept for this test. A module-scoped one of a
        test inside module-like collectors (pytest-describe's blocks, ``item.scope``) lives, as under pytest,
        as long as the innermost of them where it was first set up: a value made in an outer block (or for
        the file) while it lasts, else a new one, torn down when this test's innermost block ends."""
        scope = scope_key(fixture.scope, self.item, fixture.baseid)
        key = (id(fixture), scope)
        if fixture.scope == "class" and key not in self.scopes.cache and key not in self._active:
            # a test of a class nested in another gets the value the enclosing class set up, while that class
            # lasts, as pytest's FixtureDef keeps its one value until the scope it was made for ends
            for enclosing in enclosing_classes(scope[2]):
                found = (id(fixture), ("class", scope[1], enclosing))
                if found in self.scopes.cache or found in self._active:
                    return found
            return key
        blocks = getattr(self.item, "scope", "") if fixture.scope == "module" else ""
        if not blocks or key in self.scopes.cache or key in self._active:
            return key
        parts = blocks.split("::")
        for depth in range(1, len(parts)):
            outer = (id(fixture), (*scope, "::".join(parts[:depth])))
            if outer in self.scopes.cache or outer in self._active:
                return outer
        return (id(fixture), (*scope, blocks))

    def scoped_finalizer(self, fixture: FixtureDef, finalizer: Callable[[], Any]) -> None:
        key = self.entry_key(fixture)
        cached = self._active.get(key) or self.scopes.cache.get(key)
        if cached is None:
            self.finalizers.append(finalizer)
        else:
            cached.finalizers.append(finalizer)

    async def get(self, name: str, requester: FixtureDef | None = None) -> Any:
        if name == "request":
            return (
                self.request
                if requester is None
                else FixtureRequest(self.item, self, requester, self.item.params.get(requester.name, NOTSET))
            )
        if requester is None and name in self.values:
            return self.values[name]
        # a directly parametrized name is the item's value for every requester, fixtures included (pytest
        # makes it a function-scoped pseudo-fixture): a conftest's pytest_generate_tests may parametrize a
        # name only a fixture asks for
        if name in self.item.direct_params and (requester is None or requester.name != name):
            # the value pytest_fixture_setup hooks gave it (pyruntest.py), else the parameter itself
            return self.values.get(name, self.item.direct_params[name])
        fixture = self.registry.resolve(name, self.item.key, requester)
        value = await self.value_of(fixture)
        if requester is None:
            self.values[name] = value
        return value

    async def value_of(self, fixture: FixtureDef) -> Any:
        self._setting_up.append(fixture)
        try:
            return await self._value_of(fixture)
        finally:
            self._setting_up.pop()

    async def _value_of(self, fixture: FixtureDef) -> Any:
        param = self.item.params.get(fixture.name, NOTSET)
        if fixture.scope == "function":
            if id(fixture) not in self._function_values:
                self.post_finalizer(fixture, param, self.finalizers)
                self._function_values[id(fixture)] = await self._create(fixture, param, self.finalizers)
            return self._function_values[id(fixture)]
        # as pytest: its own fixtures first, so that one whose parameter changed since tears this one down
        # (below) before its cached value is read
        kwargs, dependencies = await self._arguments(fixture)
        key = self.entry_key(fixture)
        cached = self.scopes.cache.get(key)
        pkey = (param_key(param), self._upstream_params(fixture))
        if cached is not None and cached.param_key == pkey:
            if cached.error is not None:
                raise cached.error.with_traceback(cached.traceback)
            return cached.value
        if cached is not None:  # another parameter of the same fixture: the old value goes first
            self.scopes.cache.pop(key)
            result = run_finalizers(list(reversed(cached.finalizers)))
            if inspect.isawaitable(result):
                await result
        entry = _Cached(pkey)
        self._active[key] = entry
        self.scopes.cache[key] = entry
        self.scopes.by_scope.setdefault(key[1], []).append(key)
        for dependency in dependencies:  # torn down (another parameter, its scope's end): this one goes first
            dependency.finalizers.append(_Dependent(self.scopes, key, entry))
        self.post_finalizer(fixture, param, entry.finalizers)
        try:
            entry.value = await self._create(fixture, param, entry.finalizers, kwargs)
        except BaseException as exc:
            entry.error, entry.traceback = exc, exc.__traceback__
            raise
        finally:
            self._active.pop(key, None)
        return entry.value

    def post_finalizer(self, fixture: FixtureDef, param: Any, finalizers: list[Callable[[], Any]]) -> None:
        """pytest calls ``pytest_fixture_post_finalizer(fixturedef, request)`` after each fixture's teardown:
        added to ``finalizers`` before the fixture's own (they run last first), for the suites with such a
        hook."""
        named = self.item.session.named_hooks.get("pytest_fixture_post_finalizer")
        if not named:
            return
        hooks = [hook for base, hook in named if self.item.file.startswith(base)]
        if not hooks:
            return
        from rt_testrunner import pyplugins

        request = FixtureRequest(self.item, self, fixture, param)
        available = {"fixturedef": fixture, "request": request}
        finalizers.append(lambda: pyplugins.call("pytest_fixture_post_finalizer", hooks, available))

    def _upstream_params(self, fixture: FixtureDef) -> tuple[tuple[str, Any], ...]:
        """The parameters of the fixtures ``fixture`` depends on, by value: a wider-scoped fixture is made
        again when one of them changes, as under pytest (a module-scoped server over ``anyio_backend`` is
        one server per backend). By value, not by index, as pytest compares a parameter with the cached
        one: two ``parametrize`` calls of a name (icalendar's conftest.py gives ``tzp_name`` ``["pytz",
        "zoneinfo"]`` or ``["pytz"]`` by test) have different values at one index."""
        indices = self.item.param_indices
        if not indices:
            return ()
        found: set[str] = set()
        seen: set[int] = {id(fixture)}
        pending = [(name, fixture) for name in fixture.argnames]
        if fixture.is_async and "anyio_backend" in indices and self._anyio_claims():
            # anyio's plugin adds ``anyio_backend`` to the arguments of the async fixtures it sets up: one of a
            # wider scope is made again for each backend, in that backend's loop
            pending.append(("anyio_backend", fixture))
        while pending:
            name, requester = pending.pop()
            if name in indices:
                found.add(name)
            if name == "request" or name in self.item.direct_params:
                continue
            try:
                upstream = self.registry.resolve(name, self.item.key, requester)
            except FixtureLookupError:
                continue
            if id(upstream) not in seen:
                seen.add(id(upstream))
                pending.extend((arg, upstream) for arg in upstream.argnames)
        values = self.item.all_params
        return tuple(sorted((name, param_key(values.get(name, indices[name]))) for name in found))

    def _anyio_claims(self) -> bool:
        from rt_testrunner import async_plugins

        return bool(self.item.claim == async_plugins.ANYIO)

    async def enter_loop(self, fixture: FixtureDef | None = None) -> LoopKey | None:
        """Before an async step (an async fixture, the test itself): the event loop of the backend of the
        plugin that claims it (async_plugins.py): the ``anyio_backend`` fixture's value and options for
        anyio's, asyncio for pytest-asyncio's, trio for pytest-trio's; pytest's failure where no plugin claims
        it. A plugin's step runs in a main-thread loop (main_loops.py), whose key is returned; rt's own async
        code (no plugin claims it in an rt test file) moves into the run's loop thread (None)."""
        from rt_testrunner import async_plugins

        claim = self.item.claim
        if fixture is not None:
            # anyio's hook sets up every async fixture of a test whose fixtures (asked for with getfixturevalue
            # too) include ``anyio_backend``, a sync test's as well
            anyio_asked = "anyio_backend" in self.item.fixturenames or "anyio_backend" in self.values
            claim = self.item.session.async_modes.fixture_claim(
                claim, fixture.func, self.item.native_async, anyio_asked
            )
            if claim == async_plugins.UNCLAIMED:
                async_plugins.fail(
                    async_plugins.unclaimed_fixture_message(self.item.name, fixture.name, fixture.autouse)
                )
        elif claim == async_plugins.UNCLAIMED:
            async_plugins.fail(async_plugins.ASYNC_TEST_FAILURE)
        if LOOP.get() is not None:
            return None
        owner: Any = None
        if claim == async_plugins.ANYIO:
            claim = await self.anyio_backend()
            owner = ANYIO_OWNER
        elif claim == backend_key("asyncio"):
            if self.item.session.loop_factory_hooks:
                claim = self.item.session.asyncio_backend(self.item)
            claim = await self._asyncio_settings(claim)
            loop_scope = self._asyncio_loop_scope(fixture)
            if fixture is not None and SCOPES.index(loop_scope) > SCOPES.index(fixture.scope):
                # pytest-asyncio's loop is a fixture of that scope: a wider fixture cannot request it
                async_plugins.fail(
                    f"ScopeMismatch: You tried to access the {loop_scope} scoped fixture"
                    f" _{loop_scope}_scoped_runner with a {fixture.scope} scoped request object."
                )
            owner = scope_key(loop_scope, self.item)
        elif claim is not None:  # pytest-trio: a trio.run per test, its fixtures inside
            claim = self._trio_run_options(claim)
            owner = scope_key("function", self.item)
        if owner is not None and in_run():
            return (claim, owner)
        await use_backend(claim)
        return None

    def _trio_run_options(self, claim: BackendKey) -> BackendKey:
        """pytest-trio's ``trio.run`` takes its clock and instruments from the test's arguments: a fixture
        whose value is a ``trio.abc.Clock`` (its ``autojump_clock``, a ``MockClock`` whose time jumps ahead
        when every task waits) or ``trio.abc.Instrument``s. Without that clock, tricycle's tests of timeouts
        waited in real time, for minutes. The arguments set up when the run starts count (a sync fixture the
        test asks for after an async one is set up once the run has begun, too late for it)."""
        trio_abc = sys.modules.get("trio.abc")
        if trio_abc is None or claim is None:
            return claim
        values = [self.values[name] for name in self.item.requested if name in self.values]
        options = dict(claim[1])
        clocks = [value for value in values if isinstance(value, trio_abc.Clock)]
        if clocks:
            options["clock"] = clocks[0]
        instruments = tuple(value for value in values if isinstance(value, trio_abc.Instrument))
        if instruments:
            options["instruments"] = instruments
        return backend_key(claim[0], options) if options != dict(claim[1]) else claim

    async def _asyncio_settings(self, claim: BackendKey) -> BackendKey:
        """pytest-asyncio's loop settings in the loop's key: ``asyncio_debug`` (ini, or ``--asyncio-debug``
        through ``-o asyncio_debug=true``) makes a loop in debug mode, and a suite's own ``event_loop_policy``
        fixture (pytest-asyncio 1.x's, which returns the current policy, changes nothing) is the policy the
        loop is made with (main_loops.py)."""
        if claim is None:
            return claim
        options = dict(claim[1])
        if _is_true(_ini(self.item.session.config, "asyncio_debug")):
            options["debug"] = True
        try:
            definition = self.registry.resolve("event_loop_policy", self.item.key)
        except FixtureLookupError:
            definition = None
        if definition is not None and getattr(definition.func, "__module__", None) != "pytest_asyncio.plugin":
            if "loop_factory" not in options:
                options[POLICY_OPTION] = await self.get("event_loop_policy")
        return backend_key(claim[0], options) if options != dict(claim[1]) else claim

    def _asyncio_loop_scope(self, fixture: FixtureDef | None) -> str:
        """pytest-asyncio's loop scope: a fixture's ``loop_scope`` (``@pytest_asyncio.fixture(loop_scope=)``),
        else ``asyncio_default_fixture_loop_scope``, else the fixture's own scope; a test's from its
        ``asyncio`` mark (``loop_scope``, or the older ``scope``), else ``asyncio_default_test_loop_scope``
        (``function``)."""
        config = self.item.session.config
        if fixture is not None:
            scope = getattr(fixture.func, "_loop_scope", None) or _ini(
                config, "asyncio_default_fixture_loop_scope"
            )
            return scope if scope in SCOPES else fixture.scope
        node = self.item.node
        mark = node.get_closest_marker("asyncio") if node is not None else None
        kwargs = getattr(mark, "kwargs", None) or {}
        scope = (
            kwargs.get("loop_scope") or kwargs.get("scope") or _ini(config, "asyncio_default_test_loop_scope")
        )
        return scope if scope in SCOPES else "function"

    async def anyio_backend(self) -> BackendKey:
        value = await self.get("anyio_backend")
        if isinstance(value, str):
            return backend_key(value)
        if (
            isinstance(value, tuple)
            and len(value) == 2
            and isinstance(value[0], str)
            and isinstance(value[1], dict)
        ):
            return backend_key(value[0], value[1])
        raise TypeError("anyio_backend must be either a string or tuple of (string, dict)")

    async def _arguments(self, fixture: FixtureDef) -> tuple[dict[str, Any], list[_Cached]]:
        """The values of the fixture's arguments, and the cache entries of those that outlive a test."""
        kwargs: dict[str, Any] = {}
        dependencies: list[_Cached] = []
        for arg in fixture.argnames:
            kwargs[arg] = await self.get(arg, fixture)
            if arg == "request" or arg in self.item.direct_params:
                continue
            dependency = self.registry.resolve(arg, self.item.key, fixture)
            if dependency.scope != "function":
                cached = self.scopes.cache.get(self.entry_key(dependency))
                if cached is not None:
                    dependencies.append(cached)
        return kwargs, dependencies

    async def _create(
        self,
        fixture: FixtureDef,
        param: Any,
        finalizers: list[Callable[[], Any]],
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        if kwargs is None:
            kwargs = {}
            for arg in fixture.argnames:
                kwargs[arg] = await self.get(arg, fixture)
        func = fixture.func
        if fixture.method:
            instance = self.item.instance
            if instance is None:
                raise FixtureLookupError(
                    f"fixture {fixture.name!r} is a method and needs a test class instance"
                )
            if fixture.scope != "function" and not isinstance(func, classmethod | staticmethod):
                _warn_instance_method(fixture)
                # bound to the class's own instance, not the test's, as pytest binds it to the one its
                # collection of the class made: what it sets on ``self`` is not the tests' to see
                instance = _class_holder(self.item, fixture.holder or self.item.cls)
            func = func.__get__(instance, type(instance))
        if not self.item.native_async:
            refusal = self.item.session.async_modes.trio_fixture_refusal(
                fixture.func, fixture.scope, "trio" in self.item.mark_names()
            )
            if refusal is not None:
                raise refusal
        if param is not NOTSET:
            answered, value = self._param_through_hooks(fixture, param, kwargs)
            if answered:
                return value
        nurseries = self.nurseries(kwargs)
        if nurseries:
            from rt_testrunner import trio_nursery

            result = trio_nursery.fixture(func, kwargs, nurseries)
        else:
            result = func(**kwargs)
        # a ``yield`` fixture is a generator function, as pytest tells it: a fixture that returns a generator
        # (frozendict 2.5.1's ``return (x for x in seq2)``) has that generator for its value
        if inspect.isgenerator(result) and inspect.isgeneratorfunction(func):
            value = next(result)
            finalizers.append(_GeneratorFinalizer(result, fixture.name))
            return value
        if not (nurseries or self.item.native_async or _is_async_function(func)):
            # pytest awaits the fixtures whose function is async, not a sync one's coroutine or async
            # generator, which is its value (google-auth 2.63.0's ``return inner_fixture()``)
            return result
        if inspect.isasyncgen(result) or inspect.iscoroutine(result):
            try:
                main_loop = await self.enter_loop(fixture)
            except BaseException:
                if inspect.iscoroutine(result):
                    result.close()
                raise
            if main_loop is not None:
                return self._create_in_main_loop(main_loop, fixture, result, finalizers)
        if inspect.isasyncgen(result):
            value = await result.__anext__()
            finalizers.append(_GeneratorFinalizer(result, fixture.name))
            return value
        if inspect.iscoroutine(result):
            return await result
        return result

    def _param_through_hooks(
        self, fixture: FixtureDef, param: Any, kwargs: dict[str, Any]
    ) -> tuple[bool, Any]:
        """pytest sets up a parametrized fixture through the plugins' ``pytest_fixture_setup(fixturedef,
        request)``, as it does every fixture: a hook may answer the value (True, it), or replace
        ``request.param``, which the fixture's own ``request`` then holds (pytest-lazy-fixtures turns
        ``lf("name")`` in a fixture's ``params`` into that fixture's value: apscheduler 4.0.0a6's
        ``datastore`` got the ``LazyFixtureWrapper``)."""
        from rt_testrunner.pysession import of_async_plugin

        hooks = [
            h
            for base, h in self.item.session.fixture_setup_hooks
            if self.item.file.startswith(base) and not of_async_plugin(h)
        ]
        if not hooks:
            return False, None
        from rt_testrunner import pyplugins

        request = kwargs.get("request")
        if not isinstance(request, FixtureRequest):
            request = FixtureRequest(self.item, self, fixture, param)
        answer = pyplugins.call(
            "pytest_fixture_setup", hooks, {"fixturedef": fixture, "request": request}, firstresult=True
        )
        return answer is not None, answer

    def nurseries(self, kwargs: dict[str, Any]) -> list[str]:
        """The arguments that take pytest-trio's ``nursery`` (trio_nursery.py), for a test it runs."""
        if self.item.claim != backend_key("trio") or "nursery" not in self.item.fixturenames:
            return []
        from rt_testrunner import trio_nursery

        return trio_nursery.placeholders(kwargs)

    def _create_in_main_loop(
        self, key: LoopKey, fixture: FixtureDef, result: Any, finalizers: list[Callable[[], Any]]
    ) -> Any:
        """An async fixture's value, set up in a main-thread loop (main_loops.py); a generator's teardown
        goes back to the same loop. Under anyio's plugin the fixture holds its loop until its teardown."""
        loops = main_loops()
        if key[1] == ANYIO_OWNER:
            loops.lease(key)
            finalizers.append(_releaser(loops, key))
        if inspect.isasyncgen(result):
            value = loops.run(key, result.__anext__)
            finalizers.append(_GeneratorFinalizer(result, fixture.name, key))
            return value
        return loops.run(key, lambda: result)

    async def run_test(self, awaitable: Any) -> None:
        """Await the test's own coroutine where its plugin runs it: a main-thread loop (main_loops.py) or,
        inside the run's loop already (rt's own concurrent groups), right there."""
        try:
            main_loop = await self.enter_loop()
        except BaseException:
            if inspect.iscoroutine(awaitable):
                awaitable.close()
            raise
        if main_loop is None:
            await awaitable
            return
        loops = main_loops()
        if main_loop[1] == ANYIO_OWNER and main_loop not in self.loop_leases:
            loops.lease(main_loop)
            self.loop_leases.append(main_loop)
        loops.run(main_loop, lambda: awaitable)

    def teardown(self) -> Any:
        """The test's function-scope finalizers, last first (a coroutine when one is async); then the loops
        of the test's own scope close and its leases on anyio's loop are dropped."""
        finalizers, self.finalizers = list(reversed(self.finalizers)), []
        loops = main_loops(create=False)
        if loops is not None:
            owner = scope_key("function", self.item)
            leases, self.loop_leases = self.loop_leases, []
            finalizers.append(lambda: loops.close_owned(owner))
            finalizers.extend(_releaser(loops, key) for key in leases)
        return run_finalizers(finalizers)

    def release(self) -> None:
        """Drop the test's own fixture values once its teardown is done, as pytest's ``runtestprotocol`` drops
        them (``item.funcargs = None``, each ``FixtureDef.cached_result`` reset as it finishes). This set-up
        and its request refer to each other, so what they hold would otherwise wait for a garbage collection
        that runs, and calls the values' finalizers, inside some later test: python-pptx 1.0.2's unclosed
        ``ZipFile`` over a ``BytesIO``, freed after its ``BytesIO`` then, warned that it wrote to a closed
        file, a failure of the next test under ``filterwarnings = error``."""
        self.values.clear()
        self._function_values.clear()
        self.fixture_defs.clear()


def _shown(filename: str, root: Path) -> str:
    """A file as pytest's messages show it: relative to the rootdir when under it."""
    try:
        return Path(filename).relative_to(root).as_posix()
    except ValueError:
        return filename


def _releaser(loops: Any, key: LoopKey) -> Callable[[], None]:
    """A finalizer dropping a lease on anyio's loop (main_loops.py) that a test or an async fixture held."""
    return lambda: loops.release(key)


def _is_true(value: Any) -> bool:
    """An ini value of type bool as pytest reads one (``true``/``1``/``yes``/``on``, or a TOML bool)."""
    if isinstance(value, bool):
        return value
    return isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on", "y", "t")


def _ini(config: Any, name: str) -> Any:
    """An ini value a plugin declares, or None where it cannot be read."""
    try:
        return config.getini(name)
    except (ValueError, KeyError, AttributeError):
        return None


def iter_names(values: Iterator[str]) -> list[str]:
    seen: list[str] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen
