"""``--inspect[=VALUE]``, ``--inspect-brk[=VALUE]`` and ``--inspect-wait[=VALUE]`` on ``rt run``.

The value is optional and only given with ``=``, as in the reference runtime: ``rt run --inspect app.py`` must
not take ``app.py`` for the value. argparse cannot say that (an optional value would swallow the script name),
so the run parser's ``parse_known_args`` turns a bare ``--inspect`` before the script into ``--inspect=``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rt_debug.inspector.address import InspectAddress, Mode, parse_inspect_value

FLAGS: dict[str, Mode] = {"--inspect": "inspect", "--inspect-brk": "brk", "--inspect-wait": "wait"}


def _with_explicit_values(
    args: Sequence[str], takes_value: frozenset[str] = frozenset({"--backend"})
) -> list[str]:
    """A bare flag before the script becomes ``flag=``; everything from the script on is left alone.

    ``takes_value`` are the options whose next word is their value (``--backend trio``), not the script.
    """
    result: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in FLAGS:
            result.append(arg + "=")
        elif not arg.startswith("-") or arg == "--":
            return result + list(args[index:])
        else:
            result.append(arg)
            if arg in takes_value and index + 1 < len(args):  # its value is not the script
                index += 1
                result.append(args[index])
        index += 1
    return result


def add_inspect_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("debugger (WebKit Inspector Protocol)")
    group.add_argument(
        "--inspect",
        metavar="VALUE",
        nargs="?",
        const="",
        default=None,
        help="start the inspector (VALUE: port, host:port or host:port/prefix; default localhost:6499)",
    )
    group.add_argument(
        "--inspect-brk",
        metavar="VALUE",
        nargs="?",
        const="",
        default=None,
        help="the same, and pause at the first line of the script",
    )
    group.add_argument(
        "--inspect-wait",
        metavar="VALUE",
        nargs="?",
        const="",
        default=None,
        help="the same, and run nothing until a debugger has attached",
    )
    original = parser.parse_known_args

    def parse_known_args(args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        takes_value = frozenset(
            option
            for option, action in parser._option_string_actions.items()
            if action.nargs in (None, 1) and option not in FLAGS
        )
        return original(None if args is None else _with_explicit_values(list(args), takes_value), namespace)

    parser.parse_known_args = parse_known_args  # type: ignore[method-assign, assignment]


def inspect_address(args: argparse.Namespace) -> InspectAddress | None:
    """The address asked for, the most demanding flag winning (brk, then wait, then inspect)."""
    for flag, mode in (("inspect_brk", "brk"), ("inspect_wait", "wait"), ("inspect", "inspect")):
        value = getattr(args, flag, None)
        if value is not None:
            return parse_inspect_value(value, mode)  # type: ignore[arg-type]
    return None
