"""Parametrized tests' ids as pytest 9 makes them (``_pytest.python.IdMaker``).

The id is part of the test's node id, which selects it on the command line, names it in every report and
keys Hypothesis's database and pytest-regressions' files, so each rule of pytest's is followed: strings and
bytes are escaped to printable ASCII (a backslash doubled, control characters as ``\\x..``), a string
longer than 100 characters falls back to ``argname0`` unless ``parametrize_long_str_id_strategy`` says
otherwise, any object with a ``__name__`` is named by it, an ``ids=`` callable's answer goes through the
same rules, and duplicate ids get a counter that skips ids already taken (or are an error under
``strict_parametrization_ids``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Any

import attrs

#: pytest's translation of ASCII characters that are not printable
_NON_PRINTABLE = {i: f"\\x{i:02x}" for i in range(128) if i not in range(32, 127)}
_NON_PRINTABLE.update({ord("\t"): "\\t", ord("\r"): "\\r", ord("\n"): "\\n"})
#: a string or bytes value longer than this gets an id by ``parametrize_long_str_id_strategy``
LONG_STR = 100
STRATEGIES = ("short", "sha256", "legacy", "disallow")


class IdError(ValueError):
    """An id pytest refuses to make (a collection error of the test's file, with pytest's message)."""


def escaped(value: str | bytes) -> str:
    """pytest's ``ascii_escaped``: non-ASCII and unprintable characters as escapes, a backslash doubled in a
    string (bytes keep theirs)."""
    if isinstance(value, bytes):
        text = value.decode("ascii", "backslashreplace")
    else:
        text = value.encode("unicode_escape").decode("ascii")
    return text.translate(_NON_PRINTABLE)


# eq=False: never compared, so no __eq__/__hash__ to compile
@attrs.frozen(eq=False)
class IdRules:
    """The configuration's say in ids (pytest's ini values of the same names)."""

    long_str_strategy: str = "short"
    #: ``disable_test_id_escaping_and_forfeit_all_rights_to_community_support``
    no_escaping: bool = False
    #: ``strict_parametrization_ids`` (or ``strict`` when it is not set): duplicate ids are an error
    strict: bool = False
    #: ``empty_parameter_set_mark``: what a ``parametrize`` with no values makes of the test (``skip``,
    #: ``xfail`` or ``fail_at_collect``)
    empty_set: str = "skip"

    @classmethod
    def from_values(cls, flag: Callable[[str], bool], values: dict[str, Any]) -> IdRules:
        """From a configuration's ``flag(name)`` reader and its raw ``values``."""
        strategy = str(values.get("parametrize_long_str_id_strategy", "short")).strip() or "short"
        if strategy not in STRATEGIES:
            raise IdError(
                f"Unknown parametrize_long_str_id_strategy: {strategy!r}. Valid values: {', '.join(sorted(STRATEGIES))}"
            )
        strict = (
            flag("strict_parametrization_ids") if "strict_parametrization_ids" in values else flag("strict")
        )
        empty_set = str(values.get("empty_parameter_set_mark") or "skip").strip() or "skip"
        return cls(
            strategy,
            flag("disable_test_id_escaping_and_forfeit_all_rights_to_community_support"),
            strict,
            empty_set,
        )

    def text(self, value: str | bytes) -> str:
        return value if self.no_escaping and isinstance(value, str) else escaped(value)

    def from_value(self, value: Any) -> str | None:
        """pytest's ``_idval_from_value``: the id of a value of a type it names, else None."""
        if isinstance(value, str | bytes):
            return self.text(value)
        if value is None or isinstance(value, int | float | complex | bool):
            return str(value)
        if isinstance(value, re.Pattern):
            return escaped(value.pattern)
        if isinstance(value, enum.Enum):
            if type(value).__name__ == "NotSetType":  # pytest's NOTSET: the default below
                return None
            return str(value)
        name = getattr(value, "__name__", None)
        return name if isinstance(name, str) else None

    def auto(self, value: Any, argname: str, index: int, nodeid: str) -> str:
        """pytest's id of a value nothing else named (after an ``ids`` callable and the hook)."""
        if isinstance(value, str | bytes):
            if len(value) <= LONG_STR or self.long_str_strategy == "legacy":
                return self.text(value)
            if self.long_str_strategy == "sha256":
                import hashlib  # only for this strategy

                return hashlib.sha256(value.encode("utf-8") if isinstance(value, str) else value).hexdigest()
            if self.long_str_strategy == "disallow":
                raise IdError(
                    f"In {nodeid}: parametrize value for '{argname}' at index {index} is too long for an "
                    f"auto-generated ID ({len(value)} characters). Use pytest.param(..., id=...) or "
                    "parametrize(..., ids=...) to set an explicit ID, or change parametrize_long_str_id_strategy."
                )
            return f"{argname}{index}"
        named = self.from_value(value)
        return named if named is not None else f"{argname}{index}"

    def given(self, value: Any, index: int, nodeid: str) -> str:
        """An entry of ``ids=[...]``: pytest's ``_idval_from_value_required``."""
        named = self.from_value(value)
        if named is None:
            raise IdError(
                f"In {nodeid}: ids contains unsupported value {value!r} (type: {type(value)!r}) at index {index}. "
                "Supported types are: str, bytes, int, float, complex, bool, enum, regex or anything with a "
                "__name__."
            )
        return named

    def unique(self, ids: list[str], nodeid: str, argnames: list[str]) -> list[str]:
        """pytest's ``make_unique_parameterset_ids``: each duplicate gets a counter (after ``_`` when it ends
        in a digit), skipping ids already taken; an error when ``strict``."""
        counts: dict[str, int] = {}
        for id_ in ids:
            counts[id_] = counts.get(id_, 0) + 1
        if all(count == 1 for count in counts.values()):
            return ids
        if self.strict:
            duplicates = ", ".join(id_ for id_, count in counts.items() if count > 1)
            raise IdError(
                "Duplicate parametrization IDs detected, but strict_parametrization_ids is set.\n\n"
                f"Test name:      {nodeid}\nParameters:     {', '.join(argnames)}\n"
                f"IDs:            {', '.join(ids)}\nDuplicates:     {duplicates}"
            )
        current = dict(counts)  # the ids as they stand, each with how often: pytest checks what is taken now
        suffixes: dict[str, int] = {}
        result = list(ids)
        for index, id_ in enumerate(ids):
            if counts[id_] > 1:
                suffix = "_" if id_ and id_[-1].isdigit() else ""
                number = suffixes.get(id_, 0)
                while current.get(f"{id_}{suffix}{number}"):
                    number += 1
                new = f"{id_}{suffix}{number}"
                result[index] = new
                current[id_] -= 1
                current[new] = current.get(new, 0) + 1
                suffixes[id_] = number + 1
        return result
