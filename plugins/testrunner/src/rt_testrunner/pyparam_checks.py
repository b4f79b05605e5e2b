"""The ``parametrize`` calls pytest refuses while collecting a test, with pytest's messages: ids that do not
match the parameter sets in number, a row whose values do not match the names, an argument name the test
does not use (or takes with a default value), ``request`` as a name, ``indirect`` naming an unknown argument,
a name parametrized twice, and an empty parameter set under ``empty_parameter_set_mark = fail_at_collect``.

Each refusal is a :class:`ParametrizeError`, raised at collection: pytest's collection error of the collector
holding the test (its module, or its class). A suite that passes under pytest has none of them, so these
checks only run on what rt already reads; a mistake rt let through used to run the test with made-up ids.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from rt_testrunner.outcomes import CollectError


class ParametrizeError(CollectError):
    """A parametrization pytest refuses (a collection error, with pytest's message)."""


def check_call(
    names: Sequence[str],
    ids: Any,
    indirect: Any,
    rows: int,
    function: Any,
    fixturenames: Sequence[str],
    nodeid: str,
) -> None:
    """The checks of pytest's ``Metafunc.parametrize`` after it has read the rows, in its order: the reserved
    ``request``, the names the test must use, the number of ids, ``indirect``'s names."""
    if "request" in names:
        raise ParametrizeError(
            f"{nodeid}: 'request' is a reserved name and cannot be used in @pytest.mark.parametrize"
        )
    for name in names:
        if name in fixturenames:
            continue
        if name in _defaulted(function):
            raise ParametrizeError(
                f"In {nodeid}: function already takes an argument '{name}' with a default value"
            )
        through = (
            name in indirect if isinstance(indirect, Sequence) and not isinstance(indirect, str) else indirect
        )
        raise ParametrizeError(
            f"In {nodeid}: function uses no {'fixture' if through else 'argument'} '{name}'"
        )
    if ids is not None and not callable(ids):
        try:
            given = len(ids)
        except TypeError:
            given = rows  # an iterable without a length: pytest takes as many ids as there are rows
        if given not in (rows, 0):
            raise ParametrizeError(
                f"In {nodeid}: {rows} parameter sets specified, with different number of ids: {given}"
            )
    if isinstance(indirect, bool):
        return
    if not isinstance(indirect, Sequence):
        raise ParametrizeError(
            f"In {nodeid}: expected Sequence or boolean for indirect, got {type(indirect).__name__}"
        )
    for name in indirect:
        if name not in names:
            raise ParametrizeError(f"In {nodeid}: indirect fixture '{name}' doesn't exist")


def check_row(names: Sequence[str], values: Any, nodeid: str) -> tuple[Any, ...]:
    """A row of values for several names as a tuple, refused when it is not a sequence or its length is not
    the number of names (pytest's ``ParameterSet._for_parametrize``)."""
    try:
        count = len(values)
    except TypeError:
        raise ParametrizeError(
            f'{nodeid}: in "parametrize" expected a sequence of values, for a single value use a one-element '
            f"tuple like ('value',), got {type(values).__name__}:\n  {values}"
        ) from None
    if count != len(names):
        raise ParametrizeError(
            f'{nodeid}: in "parametrize" the number of names ({len(names)}):\n  {names}\n'
            f"must be equal to the number of values ({count}):\n  {values}"
        )
    return tuple(values)


def check_unique(names: Sequence[str], seen: set[str], nodeid: str) -> None:
    """A name parametrized twice for one test (in one call or two) is refused; ``seen`` gains ``names``."""
    for name in names:
        if name in seen:
            raise ParametrizeError(f"{nodeid}: duplicate parametrization of {name!r}")
        seen.add(name)


def empty_set_refused(function: Any) -> ParametrizeError:
    """``empty_parameter_set_mark = fail_at_collect``: an empty parameter set is a collection error, at the
    test's first line (its first decorator's, as pytest counts it)."""
    code = getattr(inspect.unwrap(function), "__code__", None)
    line = code.co_firstlineno if code is not None else 0
    return ParametrizeError(
        f"Empty parameter set in '{getattr(function, '__name__', function)}' at line {line}"
    )


def _defaulted(function: Any) -> set[str]:
    """The names of the function's parameters that have a default value."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return set()
    return {p.name for p in parameters if p.default is not p.empty}
