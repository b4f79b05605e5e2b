"""Calling the hooks of a suite's conftest.py files and plugins around rt's own work on a test the way pluggy
calls them, with rt's work as pytest's built-in implementation: ``pytest_runtest_protocol`` around the
test's three phases, ``pytest_runtest_setup``/``pytest_runtest_teardown`` around the set-up and teardown of
its fixtures, ``pytest_runtest_call`` and ``pytest_pyfunc_call`` around the call.

Older async suites run their coroutine tests through ``pytest_pyfunc_call(pyfuncitem)``: the hook starts an
event loop of its own (``loop.run_until_complete(pyfuncitem.obj(**testargs))``) and returns True, which
tells pytest the call is done. Other suites wrap the call (``hookwrapper=True`` or ``wrapper=True``) to time
it or to set a context around it. pluggy's rules, followed here: the nearest conftest.py first, ``tryfirst``
before and ``trylast`` after the others; wrappers run up to their ``yield`` before the plain hooks and resume
after them, in reverse order; a ``firstresult`` hook (``pytest_pyfunc_call``) stops at the first answer that
is not None, and when no hook answers, rt calls the test itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any

from rt_testrunner.makereport import _options
from rt_testrunner.pyplugins import call_plan

Hook = Callable[..., Any]


def _arguments(hook: Hook, available: dict[str, Any]) -> dict[str, Any]:
    from rt_testrunner.pyplugins import arguments

    return arguments(hook, available)


def is_wrapper(hook: Hook) -> bool:
    options = _options(hook)
    return bool(options.get("hookwrapper") or options.get("wrapper"))


async def call(
    hooks: list[Hook],
    available: dict[str, Any],
    default: Callable[[], Awaitable[Any]],
    firstresult: bool,
    name: str = "",
    plain_default: bool = False,
) -> Any:
    """Run ``hooks`` (given in registration order) with the ``available`` arguments each declares, and
    ``default`` (rt's own implementation, pytest's built-in one) last: skipped when a ``firstresult`` hook
    answered. ``plain_default``: pytest's own implementation is a plain one (``pytest_runtest_setup``,
    ``_call``, ``_teardown`` of its runner plugin, registered before any suite's), so pluggy calls it after
    the suite's plain hooks and before their ``trylast`` ones, which see the fixtures set up (or torn down).
    What a hook or the call raises reaches the wrappers, then the caller; a plugin's hook that raises is named
    in the error (hook ``name``), as :func:`rt_testrunner.pyplugins.call` names it."""
    import pluggy

    from rt_testrunner.pyplugins import named_error

    wrappers: list[tuple[Hook, Generator[Any, Any, Any], bool]] = []
    result: Any = None
    error: BaseException | None = None
    plan = call_plan(hooks)
    cut = len(plan)
    if plain_default:
        cut = next(
            (i for i, (h, wrapper, _) in enumerate(plan) if not wrapper and _options(h).get("trylast")), cut
        )
    # pytest's own implementation (None) where pluggy calls it among the plain hooks
    steps: list[tuple[Hook, bool, bool] | None] = [*plan[:cut], None, *plan[cut:]]
    for step in steps:
        if step is None:
            try:
                result = await default()
            except BaseException as exc:  # noqa: BLE001 - handed to the wrappers, raised again after them
                error = exc
                break
            continue
        hook, wrapper, new_style = step
        try:
            if wrapper:
                generator = hook(**_arguments(hook, available))
                next(generator)
                wrappers.append((hook, generator, new_style))
                continue
            answer = hook(**_arguments(hook, available))
        except BaseException as exc:  # noqa: BLE001 - handed to the wrappers, raised again after them
            error = named_error(hook, name, exc)
            break
        if answer is not None and firstresult:
            result = answer  # a firstresult hook answered: pytest's own implementation is not called
            break
    for hook, generator, new_style in reversed(wrappers):
        try:
            if new_style:
                if error is not None:
                    generator.throw(error)
                else:
                    generator.send(result)
            else:
                outcome = pluggy.Result(result, error)
                generator.send(outcome)
                result, error = outcome._result, outcome.exception  # noqa: SLF001 - no public getter that does not raise
        except StopIteration as done:
            if new_style:
                result, error = done.value, None
        except BaseException as exc:  # noqa: BLE001 - what the wrapper raised replaces the outcome
            error = exc if exc is error else named_error(hook, name, exc)
        else:
            generator.close()
    if error is not None:
        raise error
    return result
