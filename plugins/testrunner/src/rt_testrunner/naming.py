"""Names of ``test.each`` / ``describe.each`` cases: ``%d %i %f %s %o %j %p %# %%`` and ``$key``.

Written by hand: these are the jest/bun placeholders, which neither ``%``-formatting nor ``str.format`` speak.
"""

from __future__ import annotations

import re
from typing import Any

_PLACEHOLDER = re.compile(r"%[difsojp#%]")
_KEY = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)")


def _json(value: Any) -> str:
    import json  # only for a %j placeholder: not worth importing for every run

    try:
        return json.dumps(value, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _one(spec: str, value: Any) -> str:
    if spec == "%i":
        try:
            return str(int(value))
        except (TypeError, ValueError):
            return "NaN"
    if spec in ("%d", "%f"):
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else "NaN"
    if spec == "%s":
        return str(value)
    if spec in ("%o", "%j"):
        return _json(value)
    import pprint  # only for a %p placeholder

    return pprint.pformat(value, width=1_000)  # %p


def _lookup(row: Any, dotted: str) -> Any:
    value = row
    for part in dotted.split("."):
        value = value[part] if isinstance(value, dict) else getattr(value, part)
    return value


def format_case_name(template: str, row: Any, index: int) -> str:
    """Fill ``template`` with one row of an ``each`` table (a tuple/list row fills placeholders in order)."""
    values = list(row) if isinstance(row, tuple | list) else [row]
    position = 0

    def fill(match: re.Match[str]) -> str:
        nonlocal position
        spec = match.group(0)
        if spec == "%%":
            return "%"
        if spec == "%#":
            return str(index)
        if position >= len(values):
            return spec
        value = values[position]
        position += 1
        return _one(spec, value)

    name = _PLACEHOLDER.sub(fill, template)
    if isinstance(row, dict):

        def key(match: re.Match[str]) -> str:
            try:
                return _one("%p" if not isinstance(v := _lookup(row, match.group(1)), str) else "%s", v)
            except (KeyError, AttributeError, TypeError):
                return match.group(0)

        name = _KEY.sub(key, name)
    return name


def case_args(row: Any) -> tuple[Any, ...]:
    """The arguments a case's function receives: a tuple/list row is spread, anything else is one argument."""
    return tuple(row) if isinstance(row, tuple | list) else (row,)
