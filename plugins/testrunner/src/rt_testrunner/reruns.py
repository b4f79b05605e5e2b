"""pytest-rerunfailures' reruns (``@pytest.mark.flaky(reruns=N)``, its ``reruns`` ini value and options),
as rt's retries of a test.

The plugin reruns a failed test from its ``pytest_runtest_protocol`` hook, which drives pytest's own
``runtestprotocol`` on pytest's item and session internals (the set-up state's stack, fixture caches): no
stand-in for those objects could run it. rt runs each test's set-up, call and teardown itself and already
retries a failed test (``rt test --retry``), so it asks the plugin, when it is loaded, how many reruns a test
gets (its own ``get_reruns_count`` and ``get_reruns_condition``, which read the mark, the options and the ini
value as under pytest) and retries the test that many times, unless the plugin's ``--only-rerun`` or
``--rerun-except`` refuse the attempt's errors (:func:`rerun_refused`, the plugin's rule written again, as
its own reads the state its protocol keeps on pytest's item). The plugin's other hooks run as any plugin's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

#: the plugin's entry-point name (``-p no:rerunfailures`` blocks it)
PLUGIN = "rerunfailures"


def rerun_count(pluginmanager: Any, node: Any) -> int | None:
    """How many times a failed ``node`` runs again, None when the plugin is not loaded or gives none."""
    plugin = pluginmanager.getplugin(PLUGIN)
    count = getattr(plugin, "get_reruns_count", None)
    if count is None:
        return None
    try:
        reruns = count(node)
        condition = getattr(plugin, "get_reruns_condition", None)
        if reruns and condition is not None and not condition(node):
            return None
    except Exception:  # noqa: BLE001 - an API rt does not know: the test runs once, as without the plugin
        return None
    return int(reruns) if isinstance(reruns, int) and reruns > 0 else None


def rerun_refused(config: Any, node: Any, errors: Sequence[BaseException | None]) -> bool:
    """Whether the plugin's ``--only-rerun``/``--rerun-except`` (or the ``flaky`` mark's ``only_rerun``,
    ``rerun_except``, or their ini values) refuse a rerun for the failed phases' ``errors`` of one attempt (None
    for a phase that failed with no exception, a strict xpass): as the plugin, any one refused error keeps
    the whole attempt from being rerun, its set-up's, call's and teardown's alike. A call that failed only
    by its failed subtests (rt's :class:`~rt_testrunner.subtests.SubtestsFailed`) refuses nothing: its pytest
    report passed when the plugin checked it (pytest marks it failed later, when it counts it), and the plugin
    reruns it for its failed subtests without a filter."""
    from rt_testrunner.subtests import SubtestsFailed

    if config.pluginmanager.getplugin(PLUGIN) is None:
        return False
    errors = [error for error in errors if not isinstance(error, SubtestsFailed)]
    only = _filters(config, node, "only_rerun")
    excepted = _filters(config, node, "rerun_except")
    if not only and not excepted:
        return False
    return any(
        (bool(only) and not _matches(only, error, follow_context=True))
        or (bool(excepted) and _matches(excepted, error, follow_context=False))
        for error in errors
    )


def _filters(config: Any, node: Any, name: str) -> list[Any]:
    """The patterns (or exception classes, a mark's) of one of the plugin's filters: the ``flaky`` mark's
    keyword first, else the option (given several times, several patterns), else the ini lines."""
    mark = node.get_closest_marker("flaky")
    if mark is not None and name in mark.kwargs:
        value = mark.kwargs[name]
        if isinstance(value, str) or (isinstance(value, type) and issubclass(value, BaseException)):
            return [value]
        return list(value or ())
    value = config.getoption(name, None)
    if value is None:
        try:
            value = config.getini(name)
        except (ValueError, KeyError):
            value = None
    return list(value or ())


def _matches(filters: list[Any], error: BaseException | None, *, follow_context: bool) -> bool:
    """Whether ``error`` or an exception it was raised from (its context too when ``follow_context``, as
    ``--only-rerun`` follows it and ``--rerun-except`` does not) is one of the exception classes or matches one
    of the patterns, searched in the ``Type: message`` text the plugin builds."""
    seen: set[int] = set()
    exc = error
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text = f"{type(exc).__name__}: {exc}"
        for wanted in filters:
            if isinstance(wanted, type) and issubclass(wanted, BaseException):
                if isinstance(exc, wanted):
                    return True
            elif re.search(wanted, text):
                return True
        if exc.__cause__ is not None:
            exc = exc.__cause__
        elif follow_context and not exc.__suppress_context__:
            exc = exc.__context__
        else:
            exc = None
    return False
