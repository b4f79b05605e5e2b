"""Explanations of a failed comparison in an ``assert``, as detailed as pytest's.

``assert left == right`` gets: for strings a character diff (one line) or a line diff, after skipping a long
identical prefix; for sequences the first differing index (``At index N diff``), the items one side has more,
and a full diff; for sets the extra items of each side; for dicts the differing and the extra keys; for two
dataclass or attrs instances of one class the matching and differing attributes, drilling into the first
that differs. In the diffs ``-`` marks the right side (usually the expected value), ``+`` the left.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

_MAX_REPR = 120


def _repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


# difflib and pprint are imported by the functions that use them: only a failed comparison needs them, and
# `rt test`'s start-up is a measured target (bench/realsuites.py).


def _diff_lines(left_lines: list[str], right_lines: list[str]) -> list[str]:
    import difflib

    return [line.rstrip("\n") for line in difflib.ndiff(right_lines, left_lines)]


def _text(left: str, right: str) -> list[str]:
    explanation: list[str] = []
    skipped = 0
    limit = min(len(left), len(right))
    while skipped < limit and left[skipped] == right[skipped]:
        skipped += 1
    if skipped > 42:
        keep = skipped - 10
        explanation.append(f"Skipping {keep} identical leading characters in diff, use -v to show")
        left, right = left[keep:], right[keep:]
    trailing = 0
    limit = min(len(left), len(right))
    while trailing < limit and left[-1 - trailing] == right[-1 - trailing]:
        trailing += 1
    if trailing > 42:
        keep = trailing - 10
        explanation.append(f"Skipping {keep} identical trailing characters in diff, use -v to show")
        left, right = left[:-keep], right[:-keep]
    if "\n" in left or "\n" in right:
        explanation.extend(_diff_lines(left.splitlines(keepends=True), right.splitlines(keepends=True)))
    else:
        import difflib

        explanation.extend(line.rstrip("\n") for line in difflib.ndiff([right], [left]))
    return explanation


def _full_diff(left: Any, right: Any) -> list[str]:
    """What pytest adds after the explanation of two containers: at its default verbosity, off CI, a hint
    (``Use -v to get more diff``: a suite may look for that line in a failure's text, as pytest-mock's does);
    on CI (``CI`` or ``BUILD_NUMBER`` set, pytest's test) the whole diff of the two pretty-printed values."""
    if not any(os.environ.get(name) for name in ("CI", "BUILD_NUMBER")):
        return ["Use -v to get more diff"]
    import difflib
    import pprint

    left_lines = pprint.pformat(left, width=80).splitlines()
    right_lines = pprint.pformat(right, width=80).splitlines()
    return [
        "",
        "Full diff: (-: missing in left side, +: extra in left side)",
        *(line.rstrip() for line in difflib.ndiff(right_lines, left_lines)),
    ]


def _sequence(left: Sequence[Any], right: Sequence[Any]) -> list[str]:
    explanation: list[str] = []
    for index in range(min(len(left), len(right))):
        if left[index] != right[index]:
            if isinstance(left, bytes) and isinstance(right, bytes):
                # a byte as bytes, as pytest shows it (b'c' != b'd', not 99 != 100)
                explanation.append(
                    f"At index {index} diff: {left[index : index + 1]!r} != {right[index : index + 1]!r}"
                )
            else:
                explanation.append(f"At index {index} diff: {_repr(left[index])} != {_repr(right[index])}")
            break
    extra = len(left) - len(right)
    if extra and not (isinstance(left, bytes) and isinstance(right, bytes)):  # pytest says nothing of bytes'
        side, longer, shorter = ("Left", left, right) if extra > 0 else ("Right", right, left)
        first = _repr(longer[len(shorter)])
        if abs(extra) == 1:
            explanation.append(f"{side} contains one more item: {first}")
        else:
            explanation.append(f"{side} contains {abs(extra)} more items, first extra item: {first}")
    return [*explanation, *_full_diff(left, right)]


def _set(left: AbstractSet[Any], right: AbstractSet[Any]) -> list[str]:
    explanation: list[str] = []
    for title, extra in (("left", left - right), ("right", right - left)):
        if extra:
            explanation.append(f"Extra items in the {title} set:")
            explanation.extend(_repr(item) for item in _sorted(extra))
    return [*explanation, *_full_diff(left, right)]


def _sorted(items: Any) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:
        return list(items)


def _dict(left: Mapping[Any, Any], right: Mapping[Any, Any]) -> list[str]:
    explanation: list[str] = []
    common = [key for key in left if key in right]
    same = [key for key in common if left[key] == right[key]]
    if same:
        explanation.append(f"Omitting {len(same)} identical items, use -vv to show")
    differing = [key for key in common if left[key] != right[key]]
    if differing:
        explanation.append("Differing items:")
        explanation.extend(
            f"{{{key!r}: {_repr(left[key])}}} != {{{key!r}: {_repr(right[key])}}}" for key in differing
        )
    for title, own, other in (("Left", left, right), ("Right", right, left)):
        extra = [key for key in own if key not in other]
        if extra:
            explanation.append(f"{title} contains {len(extra)} more item{'s' if len(extra) > 1 else ''}:")
            explanation.append(_repr({key: own[key] for key in extra}))
    return [*explanation, *_full_diff(left, right)]


def _fields(value: Any) -> list[str] | None:
    dataclasses = sys.modules.get("dataclasses")  # no dataclass exists before that module is imported
    if dataclasses is not None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [f.name for f in dataclasses.fields(value) if f.compare]
    attributes = getattr(type(value), "__attrs_attrs__", None)
    if attributes is not None:
        return [a.name for a in attributes if getattr(a, "eq", True)]
    return None


def _record(left: Any, right: Any) -> list[str]:
    names = _fields(left) or []
    same = [n for n in names if getattr(left, n) == getattr(right, n)]
    differing = [n for n in names if getattr(left, n) != getattr(right, n)]
    explanation: list[str] = []
    if same:
        explanation += ["Matching attributes:", repr(same)]
    if differing:
        explanation += ["Differing attributes:", repr(differing)]
        first = differing[0]
        explanation += ["", f"Drill down into differing attribute {first}:"]
        inner = compare("==", getattr(left, first), getattr(right, first))
        head = f"{first}: {_repr(getattr(left, first))} != {_repr(getattr(right, first))}"
        explanation += [f"  {line}" for line in [head, *inner]]
    return explanation


def _approx(left: Any, right: Any) -> list[str] | None:
    """``x == pytest.approx(y)``: the approx object's own explanation (the mismatched elements, with the
    differences), as pytest's ``pytest_assertrepr_compare`` asks it for. Found by its class's module, so
    pytest is never imported here."""
    for expected, obtained in ((right, left), (left, right)):
        kind = type(expected)
        if kind.__module__.startswith("_pytest.") and hasattr(kind, "_repr_compare"):
            return [str(line) for line in expected._repr_compare(obtained)]
    return None


def compare(op: str | None, left: Any, right: Any) -> list[str]:
    """Lines explaining why ``left <op> right`` is false; empty when there is nothing to add."""
    try:
        if op == "==":
            approx = _approx(left, right)
            if approx is not None:
                return approx
            if isinstance(left, str) and isinstance(right, str):
                return _text(left, right)
            if isinstance(left, bytes) and isinstance(right, bytes):
                return _sequence(left, right)
            if type(left) is type(right) and _fields(left) is not None:
                return _record(left, right)
            if isinstance(left, Mapping) and isinstance(right, Mapping):
                return _dict(left, right)
            if isinstance(left, AbstractSet) and isinstance(right, AbstractSet):
                return _set(left, right)
            if (
                isinstance(left, Sequence)
                and isinstance(right, Sequence)
                and not isinstance(left, str | bytes)
                and not isinstance(right, str | bytes)
            ):
                return _sequence(left, right)
        if op == "not in" and isinstance(left, str) and isinstance(right, str) and left in right:
            index = right.index(left)
            return [
                f"{_repr(left)} is contained here:",
                f"  {right[max(0, index - 20) : index + len(left) + 20]}",
            ]
        if op == "!=" and left == right:
            return [f"Both sides are equal: {_repr(left)}"]
    except Exception:  # noqa: BLE001 - an explanation must never hide the assertion itself
        return []
    return []
