"""Explanations of a failed comparison in an ``assert``, line for line as pytest's own
``pytest_assertrepr_compare`` gives them (pytest 9), so a suite that reads them sees the same text.

The first line is a summary (``left op right``, each side's repr cut to fit an 80-column line), then a blank
line and the details; nothing at all when there are no details to give:

- ``==`` of two strings: a character diff (``ndiff``) after skipping a long identical start and end (not at
  ``-v``), or, with the ``assertion_text_diff_style = block`` ini value, both texts in full;
- ``==`` of sequences: the first differing index (``At index N diff``) and the items one side has more; of
  sets the extra items of each side; of mappings the identical items counted, the differing and the extra
  ones; of two dataclass, attrs or namedtuple instances of one class the differing attributes, each drilled
  into; then, for anything iterable, ``Use -v to get more diff`` (at the default verbosity, off CI) or the full
  diff of both sides pretty-printed;
- ``==`` with ``pytest.approx``: the approx object's own table;
- ``not in`` of two strings: where the text contains the term; set comparisons (``<``, ``<=``, ``!=`` ...):
  the items that make them false.

Truncation (:func:`truncate`) keeps 8 lines or 640 characters (pytest's ``truncation_limit_*`` ini values)
unless at ``-vv`` or on CI (``CI`` or ``BUILD_NUMBER`` set). In a diff ``-`` marks the right side (usually the
expected value), ``+`` the left.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import attrs

from rt_testrunner.assertion_text import saferepr, unlimited_repr

#: pytest's truncation defaults (``truncation_limit_lines`` / ``truncation_limit_chars``)
DEFAULT_MAX_LINES = 8
DEFAULT_MAX_CHARS = 8 * 80
TRUNCATION_MESSAGE = "...Full output truncated, use '-vv' to show"
#: what truncating adds: a blank line and the message (the last kept line also gets "...")
_FOOTER_LINES = 2
_FOOTER_CHARS = len("...") + len(TRUNCATION_MESSAGE)

# difflib and pprint are imported by the functions that use them: only a failed comparison needs them, and
# `rt test`'s start-up is a measured target (bench/realsuites.py).


def running_on_ci() -> bool:
    """pytest's test for a CI machine: ``CI`` or ``BUILD_NUMBER`` set to anything non-empty."""
    return any(os.environ.get(name) for name in ("CI", "BUILD_NUMBER"))


@attrs.frozen
class Settings:
    """What decides an explanation's detail: the assertion verbosity, whether to truncate and where, the text
    diff style."""

    verbose: int = 0
    truncate: bool = True
    max_lines: int = DEFAULT_MAX_LINES
    max_chars: int = DEFAULT_MAX_CHARS
    text_style: str = "ndiff"

    @classmethod
    def current(cls) -> Settings:
        """The running pytest item's configuration (its verbosity and ini values), else the defaults."""
        from rt_testrunner.assertion_text import _running_item, verbosity

        verbose = verbosity()
        max_lines, max_chars, style = DEFAULT_MAX_LINES, DEFAULT_MAX_CHARS, "ndiff"
        item = _running_item()
        if item is not None:
            config = item.session.config
            max_lines = _ini_int(config, "truncation_limit_lines", DEFAULT_MAX_LINES)
            max_chars = _ini_int(config, "truncation_limit_chars", DEFAULT_MAX_CHARS)
            style = _ini_text(config, "assertion_text_diff_style") or "ndiff"
        truncating = verbose < 2 and not running_on_ci() and (max_lines > 0 or max_chars > 0)
        return cls(verbose, truncating, max_lines, max_chars, style)

    def budget(self) -> tuple[int, int]:
        """The lines and characters the comparison helpers need to produce (0: no limit): what truncation
        keeps plus its footer, so a diff is never built in full only to be cut."""
        if not self.truncate:
            return 0, 0
        lines = self.max_lines + _FOOTER_LINES + 1 if self.max_lines > 0 else 0
        chars = self.max_chars + _FOOTER_CHARS if self.max_chars > 0 else 0
        return lines, chars


def _ini_text(config: Any, name: str) -> str:
    try:
        value = config.getini(name)
    except Exception:  # noqa: BLE001 - a configuration that does not know the name: the default
        return ""
    return str(value).strip() if value not in (None, "", []) else ""


def _ini_int(config: Any, name: str, default: int) -> int:
    text = _ini_text(config, name)
    try:
        return int(text) if text else default
    except ValueError:
        return default


def truncate(lines: list[str], settings: Settings) -> list[str]:
    """pytest's truncation of an explanation: past ``max_lines`` lines (with 2 to spare for the footer) or
    ``max_chars`` characters, the lines that fit, ``...`` after the last, a blank line and
    ``...Full output truncated, use '-vv' to show``."""
    if not settings.truncate:
        return lines
    max_lines, max_chars = settings.max_lines, settings.max_chars
    tolerable = max_chars + _FOOTER_CHARS
    if max_lines == 0 or len(lines) <= max_lines + _FOOTER_LINES:
        if max_chars == 0 or sum(len(line) for line in lines) <= tolerable:
            return lines
        kept = list(lines)
    else:
        kept = lines[:max_lines]
    if max_chars > 0 and sum(len(line) for line in kept) > tolerable:
        kept = _cut_to_chars(kept, max_chars)
    kept[-1] += "..."
    return [*kept, "", TRUNCATION_MESSAGE]


def _cut_to_chars(lines: list[str], max_chars: int) -> list[str]:
    total = 0
    index = 0
    for index, line in enumerate(lines):  # noqa: B007 - the index where the budget runs out is the result
        if total + len(line) > max_chars:
            break
        total += len(line)
    last = lines[index]
    return [*lines[:index], last[: max_chars - total] if last else last]


def assertrepr_compare(op: str, left: Any, right: Any, settings: Settings) -> list[str]:
    """The lines explaining why ``left <op> right`` is false: the summary and the details, or none."""
    use_ascii = isinstance(left, str) and isinstance(right, str) and _same_normalized(left, right)
    if settings.verbose > 1:
        left_repr, right_repr = unlimited_repr(left, use_ascii), unlimited_repr(right, use_ascii)
    else:
        width = (80 - 15 - len(op) - 2) // 2  # pytest's: an 80-column line after "E       AssertionError: "
        left_repr, right_repr = saferepr(left, width, use_ascii), saferepr(right, width, use_ascii)
    lines: list[str] = []
    try:
        if op == "==":
            details: Iterable[str] = _equal(left, right, settings)
        elif op == "not in" and isinstance(left, str) and isinstance(right, str):
            details = _not_in_text(left, right, settings)
        elif isinstance(left, AbstractSet) and isinstance(right, AbstractSet) and op in _SET_OPERATORS:
            details = _SET_OPERATORS[op](left, right)
        else:
            details = ()
        for line in details:
            if not lines:
                lines.append(f"{left_repr} {op} {right_repr}")
                if line != "":
                    lines.append("")
            lines.append(line)
    except Exception as error:  # noqa: BLE001 - an explanation must never hide the assertion itself
        if not lines:
            lines += [f"{left_repr} {op} {right_repr}", ""]
        lines += [
            f"(pytest_assertion plugin: representation of details failed: {_crash_text(error)}.",
            " Probably an object has a faulty __repr__.)",
        ]
    return lines


def _crash_text(error: BaseException) -> str:
    """Where an exception was raised and what it says, as pytest's ``reprcrash`` prints: ``path:line: Type:
    message``."""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    location = f"{traceback.tb_frame.f_code.co_filename}:{traceback.tb_lineno}: " if traceback else ""
    message = str(error)
    return f"{location}{type(error).__name__}: {message}" if message else f"{location}{type(error).__name__}"


def _same_normalized(left: str, right: str) -> bool:
    from unicodedata import normalize

    return normalize("NFD", left) == normalize("NFD", right)


def _fields(value: Any) -> Sequence[str] | None:
    """The compared fields of a dataclass, attrs or namedtuple instance; None for anything else."""
    dataclasses = sys.modules.get("dataclasses")  # no dataclass exists before that module is imported
    if dataclasses is not None and dataclasses.is_dataclass(value):
        return [f.name for f in dataclasses.fields(value) if f.compare]
    attributes = getattr(value, "__attrs_attrs__", None)
    if attributes is not None:
        return [a.name for a in attributes if getattr(a, "eq")]  # noqa: B009 - attrs' field, not a typo
    named = getattr(value, "_fields", None) if isinstance(value, tuple) else None
    if named is not None:
        return list(named)
    return None


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except Exception:  # noqa: BLE001
        return False
    return not isinstance(value, str)


def _equal(left: Any, right: Any, settings: Settings) -> Iterator[str]:
    if isinstance(left, str) and isinstance(right, str):
        if settings.text_style == "block":
            yield "Left:"
            yield from (f"  {line}" for line in left.split("\n"))
            yield ""
            yield "Right:"
            yield from (f"  {line}" for line in right.split("\n"))
        else:
            yield from _text(left, right, settings)
        return
    approx = _approx(left, right)
    if approx is not None:
        yield from approx
    elif type(left) is type(right) and _fields(left) is not None:
        yield from _record(left, right, settings)
    elif _sequence_like(left) and _sequence_like(right):
        yield from _sequence(left, right)
    elif isinstance(left, AbstractSet) and isinstance(right, AbstractSet):
        yield from _one_sided("left", left, right)
        yield from _one_sided("right", right, left)
    elif isinstance(left, Mapping) and isinstance(right, Mapping):
        yield from _mapping(left, right, settings)
    if _iterable(left) and _iterable(right):
        yield from _full_diff(left, right, settings)


def _sequence_like(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _capped_lines(text: str, settings: Settings) -> list[str]:
    """A diff's input capped to the truncation budget first (a few huge lines would make ``ndiff``
    quadratic; many lines would be cut anyway)."""
    max_lines, max_chars = settings.budget()
    if max_chars > 0:
        text = text[:max_chars]
    lines = text.splitlines(keepends=True)
    return lines[:max_lines] if max_lines > 0 else lines


def _text(left: str, right: str, settings: Settings) -> Iterator[str]:
    """Skipping a long identical start (and, for texts of one length, end) at the default verbosity, 10
    characters of context kept, then ``ndiff`` of the lines."""
    if settings.verbose < 1:
        index = 0
        for index in range(min(len(left), len(right))):  # noqa: B007 - the index reached is the result
            if left[index] != right[index]:
                break
        if index > 42:
            index -= 10
            yield f"Skipping {index} identical leading characters in diff, use -v to show"
            left, right = left[index:], right[index:]
        if len(left) == len(right):
            for index in range(1, len(left) + 1):  # noqa: B007
                if left[-index] != right[-index]:
                    break
            if index > 42:
                index -= 10
                yield f"Skipping {index} identical trailing characters in diff, use -v to show"
                left, right = left[:-index], right[:-index]
    if left.isspace() or right.isspace():
        left, right = repr(str(left)), repr(str(right))
        yield "Strings contain only whitespace, escaping them using repr()"
    from difflib import ndiff

    diff = ndiff(_capped_lines(right, settings), _capped_lines(left, settings))
    yield from "\n".join(line.strip("\n") for line in diff).splitlines()


def _not_in_text(term: str, text: str, settings: Settings) -> Iterator[str]:
    index = text.find(term)
    without = text[:index] + text[index + len(term) :]
    yield f"{saferepr(term, 42)} is contained here:"
    for line in _text(text, without, settings):
        if line.startswith(("Skipping", "- ")):
            continue
        yield "  " + line[2:] if line.startswith("+ ") else line


def _sequence(left: Sequence[Any], right: Sequence[Any]) -> Iterator[str]:
    both_bytes = isinstance(left, bytes) and isinstance(right, bytes)
    for index in range(min(len(left), len(right))):
        if left[index] != right[index]:
            if both_bytes:  # a byte as bytes (b'c' != b'd', not 99 != 100)
                yield f"At index {index} diff: {left[index : index + 1]!r} != {right[index : index + 1]!r}"
            else:
                yield f"At index {index} diff: {left[index]!r} != {right[index]!r}"
            break
    if both_bytes:
        return
    extra = len(left) - len(right)
    if extra:
        side, item = ("Left", left[len(right)]) if extra > 0 else ("Right", right[len(left)])
        if abs(extra) == 1:
            yield f"{side} contains one more item: {saferepr(item)}"
        else:
            yield f"{side} contains {abs(extra)} more items, first extra item: {saferepr(item)}"


def _one_sided(side: str, own: AbstractSet[Any], other: AbstractSet[Any]) -> Iterator[str]:
    extra = own - other
    if extra:
        yield f"Extra items in the {side} set:"
        yield from (saferepr(item) for item in extra)


def _set_greater_or_equal(left: AbstractSet[Any], right: AbstractSet[Any]) -> Iterator[str]:
    return _one_sided("right", right, left)


def _set_less_or_equal(left: AbstractSet[Any], right: AbstractSet[Any]) -> Iterator[str]:
    return _one_sided("left", left, right)


def _set_greater(left: AbstractSet[Any], right: AbstractSet[Any]) -> Iterator[str]:
    if left == right:
        yield "Both sets are equal"
    else:
        yield from _one_sided("right", right, left)


def _set_less(left: AbstractSet[Any], right: AbstractSet[Any]) -> Iterator[str]:
    if left == right:
        yield "Both sets are equal"
    else:
        yield from _one_sided("left", left, right)


def _sets_equal(left: AbstractSet[Any], right: AbstractSet[Any]) -> Iterator[str]:
    yield "Both sets are equal"


_SET_OPERATORS = {
    "!=": _sets_equal,
    ">=": _set_greater_or_equal,
    "<=": _set_less_or_equal,
    ">": _set_greater,
    "<": _set_less,
}


def _mapping(left: Mapping[Any, Any], right: Mapping[Any, Any], settings: Settings) -> Iterator[str]:
    import pprint

    # key views: a mapping with its own key equivalence compares its keys its own way
    left_keys, right_keys = left.keys(), right.keys()
    common = left_keys & right_keys
    same = {key: left[key] for key in common if left[key] == right[key]}
    if same and settings.verbose < 2:
        yield f"Omitting {len(same)} identical items, use -vv to show"
    elif same:
        yield "Common items:"
        yield from pprint.pformat(same).splitlines()
    differing = {key for key in common if left[key] != right[key]}
    if differing:
        yield "Differing items:"
        for key in differing:
            yield f"{saferepr({key: left[key]})} != {saferepr({key: right[key]})}"
    for side, own, extra in (
        ("Left", left, left_keys - right_keys),
        ("Right", right, right_keys - left_keys),
    ):
        if extra:
            yield f"{side} contains {len(extra)} more item{'' if len(extra) == 1 else 's'}:"
            yield from _extra_items(own, extra, settings)


def _extra_items(mapping: Mapping[Any, Any], keys: AbstractSet[Any], settings: Settings) -> Iterator[str]:
    import pprint

    max_lines = settings.budget()[0]
    if max_lines == 0 or len(keys) <= max_lines:
        yield from pprint.pformat({key: mapping[key] for key in keys}).splitlines()
        return
    import heapq

    from rt_testrunner.pretty import SortKey

    # only the entries truncation keeps, in the order pprint would sort them
    for key in heapq.nsmallest(max_lines, keys, key=SortKey):
        yield saferepr({key: mapping[key]})


def _record(left: Any, right: Any, settings: Settings) -> Iterator[str]:
    """Two instances of one dataclass, attrs class or namedtuple: the differing attributes, each drilled
    into. A class with its own ``__eq__`` gets nothing (its fields may not be what it compares)."""
    if not _default_eq(left):
        return
    import pprint

    names = _fields(left) or []
    same = [name for name in names if getattr(left, name) == getattr(right, name)]
    differing = [name for name in names if getattr(left, name) != getattr(right, name)]
    if same or differing:
        yield ""
    if same and settings.verbose < 2:
        yield f"Omitting {len(same)} identical items, use -vv to show"
    elif same:
        yield "Matching attributes:"
        yield from pprint.pformat(same).splitlines()
    if differing:
        yield "Differing attributes:"
        yield from pprint.pformat(differing).splitlines()
        for name in differing:
            left_value, right_value = getattr(left, name), getattr(right, name)
            yield ""
            yield f"Drill down into differing attribute {name}:"
            yield f"  {name}: {left_value!r} != {right_value!r}"
            yield from ("  " + line for line in _equal(left_value, right_value, settings))


def _default_eq(value: Any) -> bool:
    """Whether ``__eq__`` is the one dataclasses or attrs generated (or has no code to tell)."""
    code = getattr(getattr(value.__eq__, "__code__", None), "co_filename", None)
    if code is None:
        return True
    if getattr(value, "__attrs_attrs__", None) is not None:
        return "attrs generated " in code
    return bool(code == "<string>")


def _approx(left: Any, right: Any) -> list[str] | None:
    """``x == pytest.approx(y)``: the approx object's own explanation (the mismatched elements, with the
    differences), as pytest's ``pytest_assertrepr_compare`` asks it for. Found by its class's module, so
    pytest is never imported here."""
    for expected, obtained in ((right, left), (left, right)):
        kind = type(expected)
        if kind.__module__.startswith("_pytest.") and hasattr(kind, "_repr_compare"):
            return [str(line) for line in expected._repr_compare(obtained)]
    return None


def _full_diff(left: Any, right: Any, settings: Settings) -> Iterator[str]:
    """At the default verbosity off CI, a hint (``Use -v to get more diff``: a suite may look for that line, as
    pytest-mock's does); else the diff of both sides pretty-printed one item per line."""
    if settings.verbose <= 0 and not running_on_ci():
        yield "Use -v to get more diff"
        return
    import difflib

    from rt_testrunner.pretty import pformat_lines

    max_lines, max_chars = settings.budget()
    left_lines = pformat_lines(left, max_lines or None, max_chars or None)
    right_lines = pformat_lines(right, max_lines or None, max_chars or None)
    yield ""
    yield "Full diff: (-: missing in left side, +: extra in left side)"
    yield from (line.rstrip() for line in difflib.ndiff(right_lines, left_lines))
