"""The text of a failed rewritten ``assert``, worded as pytest's, character for character.

Suites compare it (``str(excinfo.value)``, pytest-mock's ``assert_called_with`` re-raising the first line of
an assert's message), so rt follows pytest's rules rather than inventing its own wording:

- the assert's expression is shown with the *values* in place of its parts (``assert (1, 2) == (1, 3)``); a
  name shows its name instead when it is a global function, class or module (what has a ``__name__``);
- a call or an attribute is shown as its value, then explained on a ``+  where value = f(args)`` line under
  it (nested ones indented under it, a second one at the same level as ``+  and``);
- a failed comparison is replaced by its explanation (``pytest_assertrepr_compare``: the suite's hooks, else
  :mod:`rt_testrunner.explain`), a summary line then the details, truncated as pytest truncates them;
- ``assert x, message`` puts the message first and ``>assert ...`` under it.

Values are shown with pytest's ``saferepr``: :mod:`reprlib`'s limits (6 items of a list, 4 of a dict ...), the
whole repr cut in the middle past 240 characters (2400 at ``-v``, never at ``-vv``), and a repr that raises
shown as ``<[error raised in repr()] ...>``. The explanation is first built in pytest's small markup, where
a newline followed by ``{`` opens a ``where`` line, ``}`` closes it and ``~`` continues a multi-line part;
:func:`format_explanation` turns it into the final lines.

The rewritten code (:mod:`rt_testrunner.rewrite`) hands :func:`assert_failed` a *plan*: the text of nested
tuples, constant per assert, describing the expression (see ``_PLAN_KINDS``), and the tuple of the values it
captured. Nothing here runs unless an assert fails.
"""

from __future__ import annotations

import reprlib
import sys
import types
from collections.abc import Iterable
from itertools import islice
from typing import Any

#: what an unevaluated temporary holds (an operand after a short-circuit): never shown
UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<not evaluated>"})()

#: pytest's DEFAULT_REPR_MAX_SIZE: the longest value repr at the default verbosity (x10 at -v, no limit at -vv)
REPR_MAX_SIZE = 240

#: the first element of each plan tuple (rewrite.py builds them, :func:`_explain` reads them)
_PLAN_KINDS = {
    "r": "(r, index): the repr of a value",
    "n": "(n, name, index): a name, shown by its value unless a global with a __name__",
    "a": "(a, index, owner plan, attribute): an attribute's value and a where line",
    "c": "(c, index, function plan, ((prefix, plan), ...)): a call's result and a where line",
    "u": "(u, prefix, plan): not / ~ / - / + before an operand",
    "b": "(b, symbol, left plan, right plan): a binary operation, in parentheses",
    "o": "(o, is_or, (plans ...), (result indexes ...)): and/or up to the operand that decided it",
    "C": "(C, (symbols ...), (plans ...), (parenthesized ...), (operand indexes ...), (result indexes ...))",
}


def _repr_failed(error: BaseException, value: object) -> str:
    try:
        text = repr(error)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as inner:  # noqa: BLE001 - a broken __repr__ must not hide the failure
        try:
            text = f"unpresentable exception ({_plain_repr(inner)})"
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001
            text = "unpresentable exception"
    return f"<[{text} raised in repr()] {type(value).__name__} object at 0x{id(value):x}>"


def _plain_repr(value: object) -> str:
    try:
        return repr(value)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001
        return f'{type(value).__name__}("{value}")'


def _middle_cut(text: str, limit: int) -> str:
    """``'abc...xyz'``: as long as ``limit``, the start and the end kept (the middle is what goes)."""
    if len(text) <= limit:
        return text
    head = max(0, (limit - 3) // 2)
    tail = max(0, limit - 3 - head)
    return text[:head] + "..." + text[len(text) - tail :]


class _LimitedRepr(reprlib.Repr):
    """reprlib with pytest's choices: a length limit on the whole text, instances' own reprs (cut to the
    limit), dicts in insertion order, and a repr that raises shown rather than propagated."""

    def __init__(self, limit: int | None, use_ascii: bool = False) -> None:
        super().__init__()
        self.maxstring = limit if limit is not None else 1_000_000_000
        self.limit = limit
        self.use_ascii = use_ascii

    def repr(self, x: object) -> str:
        try:
            text = ascii(x) if self.use_ascii else super().repr(x)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: BLE001
            text = _repr_failed(error, x)
        return text if self.limit is None else _middle_cut(text, self.limit)

    def repr_instance(self, x: object, level: int) -> str:
        try:
            text = repr(x)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # noqa: BLE001
            text = _repr_failed(error, x)
        return text if self.limit is None else _middle_cut(text, self.limit)

    def repr_dict(self, x: dict[object, object], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(x[key], level - 1)}"
            for key in islice(x, self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append("...")
        return "{" + ", ".join(pieces) + "}"


def saferepr(value: object, limit: int | None = REPR_MAX_SIZE, use_ascii: bool = False) -> str:
    """pytest's ``saferepr``: a repr no longer than ``limit`` that never raises."""
    return _LimitedRepr(limit, use_ascii).repr(value)


def unlimited_repr(value: object, use_ascii: bool = True) -> str:
    """pytest's ``saferepr_unlimited``: the whole repr (``ascii()`` by default), one that raises shown."""
    try:
        return ascii(value) if use_ascii else repr(value)
    except Exception as error:  # noqa: BLE001
        return _repr_failed(error, value)


def verbosity() -> int:
    """The assertion verbosity of the running pytest item (``-v`` count, or ``verbosity_assertions``); 0
    outside a pytest suite."""
    item = _running_item()
    if item is None:
        return 0
    try:
        return int(item.session.config.get_verbosity("assertions"))
    except Exception:  # noqa: BLE001 - a configuration object without it: the default
        return 0


def _running_item() -> Any:
    pyruntest = sys.modules.get("rt_testrunner.pyruntest")
    return pyruntest.RUNNING.get() if pyruntest is not None else None


def value_repr(value: object, level: int) -> str:
    """How a value appears in the first line and the where lines (pytest's rewrite ``_saferepr``): a bound
    method by its name, newlines escaped (they would break the markup)."""
    if isinstance(value, types.MethodType):
        return value.__name__
    if level >= 2:
        return unlimited_repr(value).replace("\n", "\\n")
    limit = REPR_MAX_SIZE * 10 if level >= 1 else REPR_MAX_SIZE
    return saferepr(value, limit).replace("\n", "\\n")


def _shows_value(value: object) -> bool:
    """A global name is shown by its value unless that is a function, class or module (something with a
    ``__name__``): ``assert f()`` reads ``f()``, not ``<function f at 0x...>()``. A pytest fixture function
    is the exception pytest makes (its repr says more than its name)."""
    if callable(value):
        kind = type(value)
        return kind.__name__ == "FixtureFunctionDefinition" and kind.__module__.startswith("_pytest")
    try:
        return not hasattr(value, "__name__")
    except Exception:  # noqa: BLE001
        return True


class _Explainer:
    def __init__(self, values: tuple[Any, ...], local_names: Iterable[str], level: int) -> None:
        self.values = values
        self.local_names = local_names
        self.level = level

    def repr(self, index: int) -> str:
        return value_repr(self.values[index], self.level)

    def text(self, plan: tuple[Any, ...]) -> str:  # noqa: PLR0911 - one branch per kind of plan
        kind = plan[0]
        if kind == "r":
            return self.repr(plan[1])
        if kind == "n":
            value = self.values[plan[2]]
            if plan[1] in self.local_names or _shows_value(value):
                return value_repr(value, self.level)
            return str(plan[1])
        if kind == "a":
            shown = self.repr(plan[1])
            return f"{shown}\n{{{shown} = {self.text(plan[2])}.{plan[3]}\n}}"
        if kind == "c":
            shown = self.repr(plan[1])
            arguments = ", ".join(prefix + self.text(argument) for prefix, argument in plan[3])
            return f"{shown}\n{{{shown} = {self.text(plan[2])}({arguments})\n}}"
        if kind == "u":
            return str(plan[1]) + self.text(plan[2])
        if kind == "b":
            return f"({self.text(plan[2])} {plan[1]} {self.text(plan[3])})"
        if kind == "o":
            return self.boolean(plan)
        return self.comparison(plan)

    def boolean(self, plan: tuple[Any, ...]) -> str:
        """The operands that ran: each after the first ran because the one before it did not decide."""
        _, is_or, operands, results = plan
        parts = [self.text(operands[0])]
        for index in range(1, len(operands)):
            if bool(self.values[results[index - 1]]) == bool(is_or):
                break
            parts.append(self.text(operands[index]))
        return "(" + (" or " if is_or else " and ").join(parts) + ")"

    def comparison(self, plan: tuple[Any, ...]) -> str:
        """The first comparison of a chain that failed (all of them run, as under pytest), explained by the
        ``pytest_assertrepr_compare`` hooks, else shown with its operands in place."""
        _, symbols, operands, parenthesized, operand_indexes, result_indexes = plan
        chosen = len(symbols) - 1
        for index, result_index in enumerate(result_indexes):
            try:
                failed = not self.values[result_index]
            except Exception:  # noqa: BLE001 - a result without a truth value (an array): that one
                failed = True
            if failed:
                chosen = index
                break
        symbol = symbols[chosen]
        left, right = self.values[operand_indexes[chosen]], self.values[operand_indexes[chosen + 1]]
        custom = compare_text(symbol, left, right)
        if custom is not None:
            return custom
        texts = [
            f"({self.text(operands[index])})" if parenthesized[index] else self.text(operands[index])
            for index in (chosen, chosen + 1)
        ]
        return f"{texts[0]} {symbol} {texts[1]}"


def compare_text(op: str, left: Any, right: Any) -> str | None:
    """The explanation of a failed comparison in the markup (lines joined by a newline and ``~``), or None:
    the first non-empty answer of the suite's ``pytest_assertrepr_compare`` hooks (its conftest.py files' and
    plugins', in pluggy's order, as pytest calls them), else rt's own (:mod:`rt_testrunner.explain`, what
    pytest's own hook answers), truncated as pytest truncates it."""
    from rt_testrunner import explain

    lines: list[str] | None = None
    item = _running_item()
    if item is not None:
        hooks = item.session.hooks_for("pytest_assertrepr_compare", item.file)
        if hooks:
            from rt_testrunner import pyplugins

            available = {"config": item.session.config, "op": op, "left": left, "right": right}
            for answer in pyplugins.call("pytest_assertrepr_compare", hooks, available):
                if answer:
                    lines = [str(line) for line in answer]
                    break
    settings = explain.Settings.current()
    if lines is None:
        lines = explain.assertrepr_compare(op, left, right, settings)
    lines = explain.truncate(lines, settings)
    if not lines:
        return None
    return "\n~".join(line.replace("\n", "\\n") for line in lines)


def message_text(message: object, level: int) -> str:
    """``assert x, message``: a string as it is (its lines continued with ``~``), anything else by its repr,
    whose escaped newlines then become line breaks too (pytest's ``_format_assertmsg``)."""
    if isinstance(message, str):
        return message.replace("\n", "\n~")
    return value_repr(message, level).replace("\\n", "\n~")


def format_explanation(explanation: str) -> str:
    """The final text of the markup: a newline not followed by ``{``, ``}``, ``~`` or ``>`` is escaped as
    ``\\n``; ``{`` opens a ``+  where`` line (``+  and`` for the next one at the same depth), indented by
    depth; ``}`` returns to the enclosing line; ``~`` starts a continuation line indented by depth; ``>``
    starts a line one level less indented (the assert under its message)."""
    raw = explanation.split("\n")
    pieces = [raw[0]]
    for line in raw[1:]:
        if line and line[0] in "{}~>":
            pieces.append(line)
        else:
            pieces[-1] += "\\n" + line
    lines = [pieces[0]]
    #: for each open level: the index of its line in ``lines`` and how many where lines it has had
    open_lines = [0]
    counts = [0]
    for piece in pieces[1:]:
        mark = piece[0]
        if mark == "{":
            word = "and   " if counts[-1] else "where "
            counts[-1] += 1
            open_lines.append(len(lines))
            counts.append(0)
            lines.append(" +" + "  " * (len(open_lines) - 1) + word + piece[1:])
        elif mark == "}":
            open_lines.pop()
            counts.pop()
            lines[open_lines[-1]] += piece[1:]
        else:
            open_lines[-1] += 1
            depth = len(open_lines) if mark == "~" else len(open_lines) - 1
            lines.append("  " * depth + piece[1:])
    return "\n".join(lines)


def assert_failed(plan: str, values: tuple[Any, ...], *message: object) -> AssertionError:
    """The AssertionError a rewritten ``assert`` raises (called only when it fails, from the assert's own
    frame, whose local names decide how a name is shown). ``plan`` is the text of the plan's tuple."""
    import ast

    caller = sys._getframe(1)
    level = verbosity()
    body = _Explainer(values, caller.f_locals, level).text(ast.literal_eval(plan))
    text = f"{message_text(message[0], level)}\n>assert {body}" if message else f"assert {body}"
    return AssertionError(format_explanation(text))
