"""``rt secrets set|get|delete --service S --name N``.

The value never comes from argv (it would show in ``ps`` and shell history): ``set`` reads it from stdin when
stdin is not a terminal, else from a hidden prompt. ``get`` prints the value and nothing else, so
``TOKEN=$(rt secrets get -s my-cli -n alice)`` works. Errors go to stderr and exit 1, as the reference does.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING, TextIO

import rt.backend
from rt_secrets.api import secrets
from rt_secrets.errors import InvalidSecretArgumentType, InvalidSecretArgumentValue, SecretsError

if TYPE_CHECKING:
    from rt.kernel import Kernel

ACTIONS = ("set", "get", "delete")
# Bounded read of stdin: no OS store takes more than a few KiB, so a runaway pipe is refused early.
MAX_STDIN_CHARS = 1 << 20


class _RefuseValueFlag(argparse.Action):
    """``--value`` exists only to explain why it does not."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: object,
        values: object,
        option_string: str | None = None,
    ) -> None:
        parser.exit(
            1,
            "rt secrets: the value is never taken from the command line (it would show in `ps` "
            "and shell history): pipe it on stdin, or run `rt secrets set` in a terminal for a "
            "hidden prompt\n",
        )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=ACTIONS, help="what to do")
    parser.add_argument("--service", "-s", help="service or application name")
    parser.add_argument("--name", "-n", help="user or account name")
    parser.add_argument("--value", action=_RefuseValueFlag, nargs="?", help=argparse.SUPPRESS)


def _read_value(stdin: TextIO, prompt: str) -> str:
    if stdin.isatty():
        return getpass.getpass(prompt)
    text = stdin.read(MAX_STDIN_CHARS + 1)
    if len(text) > MAX_STDIN_CHARS:
        raise ValueError(f"the value on stdin is longer than {MAX_STDIN_CHARS} characters")
    # One trailing newline is what `echo` and here-strings add; it is not part of the secret.
    if text.endswith("\r\n"):
        return text[:-2]
    return text.removesuffix("\n")


async def _perform(action: str, service: str, name: str, value: str | None) -> str | bool | None:
    if action == "get":
        return await secrets.get(service, name)
    if action == "delete":
        return await secrets.delete(service, name)
    assert value is not None
    await secrets.set(service, name, value)
    return None


def run(
    args: argparse.Namespace,
    kernel: Kernel,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr

    def fail(message: str) -> int:
        print(f"rt secrets: {message}", file=stderr)
        return 1

    if args.action is None:
        return fail("Missing action: set, get or delete")
    if not args.service:
        return fail("Missing required --service")
    if not args.name:
        return fail("Missing required --name")
    value: str | None = None
    if args.action == "set":
        try:
            value = _read_value(stdin, f"Secret for {args.name} on {args.service}: ")
        except (ValueError, EOFError) as exc:
            return fail(f"cannot read the value: {exc}")
        if value == "":
            return fail("Empty value: nothing stored (use `rt secrets delete` to remove a secret)")
    try:
        result = rt.backend.run(_perform, args.action, args.service, args.name, value, config=kernel.config)
    except (SecretsError, InvalidSecretArgumentType, InvalidSecretArgumentValue) as exc:
        code = getattr(exc, "code", "")
        return fail(f"{exc} ({code})" if code else str(exc))
    if args.action == "get":
        if result is None:
            return fail(f"No secret found for --service {args.service} --name {args.name}")
        assert isinstance(result, str)
        stdout.write(result)
        if stdout.isatty():
            stdout.write("\n")
        stdout.flush()
        return 0
    if args.action == "delete" and not result:
        return fail(f"No secret found for --service {args.service} --name {args.name}")
    return 0
