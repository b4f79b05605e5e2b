"""The ``rt`` command. The kernel owns ``--version``, ``--help``, ``--backend`` and ``rt plugins``;
every other subcommand comes from a plugin through ``rt_register_commands``.

Errors share one shape, one line on stderr: ``rt <command>: message`` (``rt: message`` before a command is
known). A usage error (an unknown command or option, a missing argument) exits with status 2; every other
error with status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import rt
from rt import _attrs_codecache, _warm
from rt._known import COMMAND_TO_DISTRIBUTION
from rt.backend import BACKENDS
from rt.errors import PluginLoadError, RtError

if TYPE_CHECKING:
    from rt.interfaces import Command
    from rt.kernel import Kernel

BUILTIN_COMMANDS = ("plugins",)
USAGE_ERROR = 2
ERROR = 1


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (and with it bz2, lzma and zlib).

    argparse's default formatter imports shutil to ask the width each time it is built, which
    ``add_argument`` does for every argument: 7 million instructions of every ``rt`` start-up (an empty
    ``rt test`` run is about 490 million), for a question ``os`` answers. Same rules: ``COLUMNS`` when it is
    a positive number, else the terminal of ``sys.__stdout__``, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, told the terminal width (:func:`_terminal_columns`) so it does not import shutil."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ):
        super().__init__(
            prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width
        )


class Parser(argparse.ArgumentParser):
    """argparse with rt's error shape: the usage line, then ``rt <command>: message``, exit status 2; help is
    formatted by :class:`HelpFormatter` unless a command asks for another formatter."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def _optional_remainders(parser: argparse.ArgumentParser) -> None:
    """A ``nargs=REMAINDER`` positional (``rt run script [args ...]``) may be empty: argparse would otherwise
    report it as required ("the following arguments are required: script, args")."""
    for action in parser._actions:
        if action.nargs == argparse.REMAINDER:
            action.required = False


def _common_options() -> Parser:
    """Options every subcommand accepts, so ``rt test --backend trio`` and ``rt --backend trio test`` agree."""
    common = Parser(add_help=False)
    common.add_argument(
        "--backend",
        choices=BACKENDS,
        default=argparse.SUPPRESS,
        help="async backend (default: RT_BACKEND, then config, then asyncio)",
    )
    return common


def build_parser(kernel: Kernel, selected: str | None = None) -> argparse.ArgumentParser:
    """The ``rt`` parser. Only the ``selected`` subcommand's arguments are configured: configuring imports
    that plugin's command module, and neither ``rt --help`` nor ``rt plugins`` should pay for (or be broken
    by) every plugin's command."""
    common = _common_options()
    parser = Parser(
        prog="rt",
        usage="rt [-h] [--backend {asyncio,trio}] [--version] COMMAND ...\n       rt FILE.py [ARGS ...]",
        description="rt: a Python runtime kernel; facilities come from plugins (see `rt plugins`).",
        epilog="rt FILE.py [ARGS ...] runs a Python script (or a folder or zip with __main__.py): the same as "
        "`rt run FILE.py ...` (rt-debug).",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"rt {rt.__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    plugins_parser = subparsers.add_parser(
        "plugins",
        prog="rt plugins",
        parents=[common],
        help="list loaded plugins: name, distribution, version, hooks",
    )
    plugins_parser.add_argument("--json", action="store_true", help="machine-readable output")
    seen: set[str] = set()
    for name, registered in sorted(kernel.host.commands().items()):
        command = registered.value
        if command.name in seen or name != command.name:
            continue
        seen.add(command.name)
        sub = subparsers.add_parser(
            command.name,
            prog=f"rt {command.name}",
            parents=[common],
            help=command.help,
            description=command.help,
            aliases=list(command.aliases),
        )
        if selected in (command.name, *command.aliases):
            try:
                command.configure(sub)
                _optional_remainders(sub)
            except Exception as exc:
                raise PluginLoadError(
                    f"plugin {registered.plugin!r} failed to set up `rt {command.name}`: {type(exc).__name__}: {exc}"
                ) from exc
    return parser


def _command_names(kernel: Kernel) -> list[str]:
    return sorted({*BUILTIN_COMMANDS, *kernel.host.commands()})


def _route(argv: list[str], kernel: Kernel) -> list[str] | int:
    """Turn ``rt script.py`` into ``rt run script.py``; reject an unknown command with a suggestion."""
    index = _warm.first_positional(argv)
    if index is None:
        return argv
    word = argv[index]
    names = _command_names(kernel)
    if word in names:
        return argv
    looks_like_script = (
        word.endswith(".py") or os.path.isfile(word) or os.path.isfile(os.path.join(word, "__main__.py"))
    )
    if looks_like_script:
        if "run" in names:  # options before the script are run's too (`rt --inspect app.py`)
            return ["run", *argv]
        print(
            "rt: running a script needs the rt-debug plugin, which provides `rt run`: pip install rt-debug",
            file=sys.stderr,
        )
        return 2
    if word in COMMAND_TO_DISTRIBUTION:
        print(f"rt: `rt {word}` is provided by {_why_missing(word, kernel)}", file=sys.stderr)
        return 2
    import difflib

    close = difflib.get_close_matches(word, [*names, *COMMAND_TO_DISTRIBUTION], n=1, cutoff=0.5)
    hint = ""
    if close:
        missing = close[0] not in names
        hint = f" Did you mean `rt {close[0]}`?" + (
            f" (provided by {_why_missing(close[0], kernel)})" if missing else ""
        )
    print(f"rt: unknown command {word!r}.{hint} Commands: {', '.join(names)}", file=sys.stderr)
    return 2


def _why_missing(command: str, kernel: Kernel) -> str:
    """Name the distribution of a first-party command that is not available, and why it is not."""
    dist = COMMAND_TO_DISTRIBUTION[command]
    state = {p.distribution: p for p in kernel.plugins()}.get(dist)
    if state is None:
        return f"{dist}, which is not installed: pip install {dist}"
    if state.disabled:
        return f"{dist}, which is disabled (RT_DISABLE_PLUGINS or [plugins] disable)"
    return f"{dist}, which is installed but registered no `{command}` command (is it up to date?)"


def _print_plugins(kernel: Kernel, as_json: bool) -> int:
    infos = kernel.plugins()
    if as_json:
        import json

        print(
            json.dumps(
                [
                    {
                        "name": i.name,
                        "distribution": i.distribution,
                        "version": i.version,
                        "hooks": list(i.hooks),
                        "disabled": i.disabled,
                    }
                    for i in infos
                ],
                indent=2,
            )
        )
        return 0
    if not infos:
        print(
            "No plugins installed. Each facility is a plugin: pip install rt-csrf rt-secrets rt-http "
            "rt-testrunner rt-debug"
        )
        return 0
    rows = [("NAME", "DISTRIBUTION", "VERSION", "HOOKS")]
    for info in infos:
        hooks = "(disabled)" if info.disabled else ", ".join(info.hooks) or "-"
        rows.append((info.name, info.distribution or "-", info.version or "-", hooks))
    widths = [max(len(row[col]) for row in rows) for col in range(3)]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=False)) + "  " + row[3]
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rt`` console script; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["--version"]:  # answered before plugins load, so a broken plugin cannot hide it
        print(f"rt {rt.__version__}")
        return 0
    if _warm.command(args_list) in _warm.COMMANDS:
        # opt-in (RT_TEST_WARM, [test] warm): a warm server's child runs it, when one answers (rt._warm)
        warm_status = _warm.attempt(args_list)
        if warm_status is not None:
            return warm_status
    command_name: str | None = None
    # rt's attrs classes are created by the imports below: their methods' code comes from the cache
    _attrs_codecache.install()
    try:
        from rt.kernel import Kernel, use_kernel

        kernel = Kernel()
        for warning in kernel.config.warnings:
            print(f"rt: warning: {warning}", file=sys.stderr)
        routed = _route(args_list, kernel)
        if isinstance(routed, int):
            return routed
        selected = _warm.command(routed)
        registered_commands = kernel.host.commands()
        if selected in registered_commands:
            command_name = registered_commands[selected].value.name
        parser = build_parser(kernel, selected)
        args, extra = parser.parse_known_args(routed)
        if extra and command_name is not None and registered_commands[command_name].value.extra_options:
            args.extra_options, extra = extra, []  # the command's own to check (Command.extra_options)
        if extra:
            prog = f"rt {args.command}" if getattr(args, "command", None) else "rt"
            parser.exit(
                USAGE_ERROR, f"{prog}: unrecognized arguments: {' '.join(extra)} (see `{prog} --help`)\n"
            )
        if getattr(args, "backend", None):
            kernel.with_overrides({"backend": args.backend})
        if args.command is None:
            parser.print_help()
            return 0
        if args.command == "plugins":
            return _print_plugins(kernel, args.json)
        registered = kernel.host.commands()[args.command]
        command_name = registered.value.name
        # a command's own code (a script `rt run` runs) sees attrs as it is; `rt test` installs it again
        _attrs_codecache.uninstall()
        with use_kernel(kernel):
            return _run_command(registered.value, registered.plugin, args, kernel)
    except RtError as exc:
        prog = f"rt {command_name}" if command_name else "rt"
        print(f"{prog}: {exc}", file=sys.stderr)
        return ERROR
    except KeyboardInterrupt:
        return 130
    finally:
        _attrs_codecache.uninstall()  # a no-op when it was done before the command ran


def _run_command(command: Command, plugin: str, args: argparse.Namespace, kernel: Kernel) -> int:
    """Run a plugin's command; a crash keeps its traceback but says which plugin to report it to."""
    try:
        return int(command.run(args, kernel) or 0)
    except (RtError, KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        import traceback

        traceback.print_exc()
        info = {p.name: p for p in kernel.plugins()}.get(plugin)
        origin = f"{info.distribution} {info.version}" if info and info.distribution else "no distribution"
        print(
            f"rt {command.name}: crashed inside plugin {plugin!r} ({origin}): {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return ERROR


if __name__ == "__main__":  # pragma: no cover - `python -m rt.cli`
    sys.exit(main())
