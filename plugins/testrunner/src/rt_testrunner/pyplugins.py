"""Installed pytest plugins (entry points ``pytest11``) in an rt run, and calling hooks in pluggy's order.

pytest loads every installed plugin at start-up, unless ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set or
``-p no:NAME`` (in ``addopts`` or on the command line) blocks one, and calls their hooks as it calls a root
conftest.py's. Suites depend on that without saying so: pytest-env sets environment variables from the ini
file before conftest.py loads, pytest-benchmark and syrupy set up the objects their fixtures read in
``pytest_configure``/``pytest_sessionstart``, pytest-dependency skips a test from ``pytest_runtest_setup``
with what its ``pytest_runtest_makereport`` wrapper saw. rt therefore registers each plugin like a root
conftest.py (:class:`~rt_testrunner.pysession.PytestSession`) and calls its hooks with :func:`call`, which
follows pluggy's rules: wrappers (``hookwrapper=True``, ``wrapper=True``) run up to their ``yield`` first
and resume last, in reverse; ``tryfirst`` before and ``trylast`` after the others, else the last registered
first; a ``firstresult`` hook stops at its first answer that is not None.

A plugin's hook that raises is named in the error (:class:`PluginHookError`): the user learns which plugin
broke, never only a traceback from deep inside it.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

Hook = Callable[..., Any]

#: pytest's switch that turns off the loading of installed plugins
AUTOLOAD_OFF = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"

#: pytest's hooks that stop at their first answer (``firstresult=True`` in ``_pytest/hookspec.py``)
PYTEST_FIRSTRESULT = frozenset(
    {
        "pytest_cmdline_main",
        "pytest_cmdline_parse",
        "pytest_collect_directory",
        "pytest_collection",
        "pytest_fixture_setup",
        "pytest_ignore_collect",
        "pytest_make_collect_report",
        "pytest_make_parametrize_id",
        "pytest_pycollect_makeitem",
        "pytest_pycollect_makemodule",
        "pytest_pyfunc_call",
        "pytest_report_from_serializable",
        "pytest_report_teststatus",
        "pytest_report_to_serializable",
        "pytest_runtest_makereport",
        "pytest_runtest_protocol",
        "pytest_runtestloop",
    }
)

#: top-level module name -> the plugin (its entry point's distribution) that owns it, for error messages
_OWNERS: dict[str, str] = {}
#: the entry point names and modules of the installed plugins :func:`load_installed` loaded
_ENTRY_NAMES: set[str] = set()


@attrs.frozen
class Plugin:
    """One installed plugin: its entry point's name (what ``-p no:NAME`` blocks) and what it loaded."""

    name: str
    distribution: str
    module: Any


class PluginHookError(Exception):
    """A hook of an installed plugin raised: the message names the plugin, the hook and the error."""

    #: the entry point's name of the plugin whose hook raised
    plugin: str | None = None


def options(hook: Hook) -> dict[str, Any]:
    """The options pytest's ``@pytest.hookimpl(...)`` recorded on ``hook`` (none for a plain function)."""
    found = getattr(hook, "pytest_impl", None)
    return found if isinstance(found, dict) else {}


def is_wrapper(hook: Hook) -> bool:
    found = options(hook)
    return bool(found.get("hookwrapper") or found.get("wrapper"))


def ordered(hooks: Sequence[Hook]) -> list[Hook]:
    """pluggy's call order of ``hooks`` (given in registration order): wrappers before the others, and in
    each group ``tryfirst`` ones first, then the last registered first, ``trylast`` ones last."""
    return [hook for hook, _, _ in call_plan(hooks)]


#: a hook list's call plan by the ids of its hooks: the same stored hooks are called for every test's phases
#: (pytest_runtest_makereport, _logreport, _setup ...), and their order and kinds never change. Each entry
#: keeps its hooks, so their ids stay theirs while it is cached.
_PLANS: dict[tuple[int, ...], tuple[tuple[Hook, ...], list[tuple[Hook, bool, bool]]]] = {}


def call_plan(hooks: Sequence[Hook]) -> list[tuple[Hook, bool, bool]]:
    """``hooks`` in pluggy's call order, each with whether it is a wrapper and whether a new-style one."""
    key = tuple(map(id, hooks))
    found = _PLANS.get(key)
    if found is not None:
        return found[1]

    def group(members: list[Hook]) -> list[Hook]:
        members = list(reversed(members))
        first = [h for h in members if options(h).get("tryfirst")]
        last = [h for h in members if options(h).get("trylast") and h not in first]
        return [*first, *(h for h in members if h not in first and h not in last), *last]

    order = [*group([h for h in hooks if is_wrapper(h)]), *group([h for h in hooks if not is_wrapper(h)])]
    plan = [(hook, is_wrapper(hook), bool(options(hook).get("wrapper"))) for hook in order]
    if len(_PLANS) < 10_000:  # bounded: a caller that builds new hook objects each time is not cached forever
        _PLANS[key] = (tuple(hooks), plan)
    return plan


def owner(hook: Hook) -> str | None:
    """The installed plugin ``hook`` belongs to (a function of its modules or a method of an object it
    registered), None for a conftest.py's."""
    function = getattr(hook, "__func__", hook)
    module = getattr(function, "__module__", None) or ""
    return _OWNERS.get(module.split(".")[0])


def owner_of(plugin: Any) -> str | None:
    """The installed plugin a registered module or object belongs to."""
    name = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
    return _OWNERS.get(name.split(".")[0])


def describe_error(hook: Hook, name: str, error: BaseException) -> str:
    plugin = owner(hook) or "?"
    text = str(error).strip().splitlines()
    detail = f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
    return f"pytest plugin {plugin!r}: {name} raised {detail}"


def named_error(hook: Hook, name: str, error: BaseException) -> BaseException:
    """``error`` as the caller sees it: a plugin's ordinary exception named after its plugin; pytest's
    outcomes (skip, fail, exit), KeyboardInterrupt and a conftest.py's errors unchanged."""
    from rt_testrunner.outcomes import Kind, classify

    if not isinstance(error, Exception) or classify(error) is not Kind.OTHER or owner(hook) is None:
        return error
    if isinstance(error, PluginHookError):
        return error
    named = PluginHookError(describe_error(hook, name, error))
    named.plugin = owner(hook)
    named.__cause__ = error
    return named


#: each hook's parameter names: inspect.signature is the cost of a hook call (with the installed plugins of
#: rt's own environment, 7,000 signatures, a third of toolz's run, for 193 tests, each reporting 3 phases)
_ARGNAMES: dict[Any, tuple[str, ...]] = {}


def arguments(hook: Hook, available: Mapping[str, Any]) -> dict[str, Any]:
    """The ``available`` arguments ``hook`` declares. Cached by the function itself (a method of a plugin
    object is a new bound method at each look-up, and its object may not be hashable)."""
    key = (getattr(hook, "__func__", hook), hasattr(hook, "__self__"))
    try:
        names = _ARGNAMES[key]
    except KeyError:
        from rt_testrunner.fixtures import argnames

        names = _ARGNAMES[key] = argnames(hook)
    except TypeError:  # a callable object that is not hashable
        from rt_testrunner.fixtures import argnames

        names = argnames(hook)
    return {name: available[name] for name in names if name in available}


def call(name: str, hooks: Sequence[Hook], available: Mapping[str, Any], firstresult: bool = False) -> Any:
    """Call ``hooks`` (in registration order) as pluggy calls hook ``name``: the list of their answers that
    are not None, or with ``firstresult`` the first such answer (None when none answered)."""
    import pluggy

    wrappers: list[tuple[Hook, Any, bool]] = []
    answers: list[Any] = []
    error: BaseException | None = None
    for hook, wrapper, new_style in call_plan(hooks):
        try:
            if wrapper:
                generator = hook(**arguments(hook, available))
                next(generator)
                wrappers.append((hook, generator, new_style))
                continue
            answer = hook(**arguments(hook, available))
        except BaseException as exc:  # noqa: BLE001 - handed to the wrappers, raised after them
            error = named_error(hook, name, exc)
            break
        if answer is not None:
            answers.append(answer)
            if firstresult:
                break
    result: Any = (answers[0] if answers else None) if firstresult else answers
    for hook, generator, new_style in reversed(wrappers):
        outcome = pluggy.Result(result, error)
        try:
            if new_style:
                result = generator.throw(error) if error is not None else generator.send(result)
            else:
                generator.send(outcome)
        except StopIteration as done:
            if new_style:
                result, error = done.value, None
            else:  # what the wrapper made of the outcome (``force_result``, ``force_exception``)
                result, error = outcome._result, outcome.exception  # noqa: SLF001 - no getter that does not raise
        except BaseException as exc:  # noqa: BLE001 - what the wrapper raised replaces the outcome
            error = named_error(hook, name, exc)
        else:
            generator.close()
            if new_style:
                error = RuntimeError(f"{name}: a wrapper of {owner(hook) or 'a conftest.py'} yielded twice")
    if error is not None:
        raise error
    return result


def p_values(words: Iterable[str]) -> Iterator[str]:
    """The values of ``-p`` among ``words``: ``-p NAME``, ``-pNAME`` and ``-p=NAME``, stripped of spaces as
    pytest strips them (trio's TOML addopts list has the one item ``"-p trio._tests.pytest_plugin"``)."""
    pending = False
    for word in words:
        if pending:
            pending = False
            yield word.strip()
        elif word == "-p":
            pending = True
        elif word.startswith("-p"):
            yield word[2:].strip().lstrip("=")


def blocked_names(words: Iterable[str]) -> set[str]:
    """The plugins ``-p no:NAME`` blocks among ``words`` (``addopts`` and the command line), each under its
    name and ``pytest_NAME``, as pytest blocks them."""
    blocked: set[str] = set()
    for value in p_values(words):
        if value.startswith("no:"):
            name = value[3:]
            blocked.update({name, f"pytest_{name}"})
    return blocked


def named_plugins(words: Iterable[str]) -> list[str]:
    """The plugins ``-p NAME`` (not ``no:``) loads among ``words``, in order."""
    named: list[str] = []
    for value in p_values(words):
        if value and not value.startswith("no:") and value not in named:
            named.append(value)
    return named


#: pytest's environment variable of plugin modules to load, comma-separated (``PYTEST_PLUGINS=pkg.plugin``)
ENV_PLUGINS = "PYTEST_PLUGINS"


def environment_plugins() -> list[str]:
    """The modules ``PYTEST_PLUGINS`` names, in order: pytest loads them after the installed plugins and the
    ``-p`` ones, as plugins of the whole session."""
    return [name.strip() for name in os.environ.get(ENV_PLUGINS, "").split(",") if name.strip()]


def is_installed_name(name: str) -> bool:
    """``name`` is an installed plugin's entry point name or module (``-p anyio``), loaded with the installed
    ones."""
    return name in _ENTRY_NAMES


#: the plugins blocked in a run whose installed plugins were loaded, with pytest imported, before any of the
#: suite's files (a test file, a conftest.py) was imported; None otherwise. Then a warm server imports pytest and these plugins for the
#: next runs (rt_testrunner.warm_server), since they come first in every run there
LOADED_BEFORE_SUITE: frozenset[str] | None = None

#: the ``pytest11`` entry points by the ``sys.path`` they were read from (:func:`pytest11`)
_ENTRY_POINTS: dict[tuple[tuple[str, ...], bool], list[Any]] = {}


def pytest11(path: Sequence[str] | None = None, every_distribution: bool = False) -> list[Any]:
    """The ``pytest11`` entry points of the distributions on ``path`` (default ``sys.path``), in path order,
    read once per path: discovery reads them for the plugins' ``pytest_collect_file`` hooks on the path the
    run will have (plugin_sources.py), and loading the plugins finds them there. ``every_distribution``: a
    distribution's again where it is found again further on the path (a plugin's sdist ``*.egg-info``
    folder after its installed metadata), as pytest reads ``importlib.metadata.distributions()``."""
    key = (tuple(sys.path if path is None else path), every_distribution)
    found = _ENTRY_POINTS.get(key)
    if found is None:
        from rt._entrypoints import entry_points

        found = _ENTRY_POINTS[key] = entry_points(
            "pytest11", key[0], by_name=False, every_distribution=every_distribution
        )
    return found


def load_installed(
    blocked: set[str], environ: Mapping[str, str] = os.environ
) -> tuple[list[Plugin], list[str]]:
    """The installed plugins not blocked, loaded (each once, in ``sys.path`` order), and a line for each that
    failed to import. Nothing at all when ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set. Each plugin's top-level
    package is marked for assert rewriting first, as pytest marks the packages of every distribution with a
    ``pytest11`` entry point."""
    if environ.get(AUTOLOAD_OFF):
        return [], []
    from rt_testrunner.importing import mark_rewrite, show_marked_as_rewritten

    plugins: list[Plugin] = []
    problems: list[str] = []
    seen: set[str] = set()
    for entry in pytest11(every_distribution=True):
        if entry.name in blocked:
            continue
        top = entry.value.split(".")[0].split(":")[0].strip()
        # every distribution with the entry point is marked, as pytest marks them, the one loaded or not (a
        # plugin's sdist run from its root has its own egg-info folder on the path next to the installed one)
        for name in {top, *distribution_modules(entry.info_dir)}:
            mark_rewrite(name)
        if entry.name in seen:
            continue
        seen.add(entry.name)
        _ENTRY_NAMES.update({entry.name, entry.value.split(":")[0]})
        distribution = entry.distribution or entry.name
        _OWNERS.setdefault(top, distribution)
        try:
            loaded = entry.load()
        except Exception as exc:  # noqa: BLE001 - reported by name, the run goes on without it
            problems.append(f"pytest plugin {distribution!r} ({entry.value}) failed to import: {exc!r}")
            continue
        if isinstance(loaded, types.ModuleType):
            _OWNERS.setdefault(loaded.__name__.split(".")[0], distribution)
        plugins.append(Plugin(entry.name, distribution, loaded))
    show_marked_as_rewritten()
    return plugins, problems


def distribution_modules(info_dir: str | None) -> list[str]:
    """The top-level modules and packages of an installed distribution, as pytest marks them for rewriting
    (``_iter_rewritable_modules`` over the files ``importlib.metadata`` lists: a ``*.dist-info`` folder's
    RECORD, an ``*.egg-info`` folder's installed-files.txt or SOURCES.txt; not ``setup.py`` nor setuptools'
    editable finders; with no such name, the files again without their first folder, a ``src`` layout).
    Hypothesis's distribution has ``hypothesis`` and ``_hypothesis_globals``, imported by its plugin: pytest
    imports both through its rewriting hook. The ``*.egg-info`` folder an sdist ships, found first when its
    project's root is on the path (a plugin's own suite run from its sdist), lists every file of the sdist:
    pytest-asyncio 1.5.0's has ``tests/__init__.py``, so pytest marks ``tests``, the suite's own package."""
    if info_dir is None:
        return []
    files = _listed_files(info_dir)
    names = _rewritable(files)
    if not names:
        names = _rewritable(["/".join(file.split("/")[1:]) for file in files if "/" in file])
    return names


def _listed_files(info_dir: str) -> list[str]:
    """The files a distribution's metadata lists, relative to the folder holding it."""
    for listing, parent_relative in (
        ("RECORD", False),
        ("installed-files.txt", True),
        ("SOURCES.txt", False),
    ):
        try:
            with open(os.path.join(info_dir, listing), encoding="utf-8", errors="replace") as record:
                lines = [line.split(",", 1)[0].strip() for line in record]
        except OSError:
            continue
        if parent_relative:  # relative to the egg-info folder itself: ../package/__init__.py
            lines = [line.removeprefix("../") for line in lines]
        return [line for line in lines if line]
    return []


def _rewritable(files: list[str]) -> list[str]:
    names: list[str] = []
    for file in files:
        if "/" not in file and file.endswith(".py"):
            name = file[:-3]
            if name != "setup" and not name.startswith("__editable__"):
                names.append(name)
        elif file.count("/") == 1 and file.endswith("/__init__.py"):
            names.append(file.split("/", 1)[0])
    return names


def own(module_name: str, plugin: str) -> None:
    """Record that objects of module ``module_name`` belong to ``plugin`` (an object a plugin registers)."""
    _OWNERS.setdefault(module_name.split(".")[0], plugin)
