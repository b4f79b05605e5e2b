"""``rt run script.py [args...]`` (and ``rt script.py``): run a program as ``python script.py`` would.

Same ``sys.argv``, ``__name__ == "__main__"``, ``sys.path[0]`` (the script's folder), exit codes and untouched
stdin, through :func:`runpy.run_path`. The kernel has already applied ``--backend`` to its configuration and
made itself current, so ``rt.serve(...).run()`` and ``rt.backend.run`` in the script use that backend; it is
also exported as ``RT_BACKEND`` so that threads and child processes, which start with a default kernel, agree.

An unhandled exception prints the error report (source preview, message, V8-style stack) instead of Python's
traceback, with rt's and runpy's own frames left out; so does an exception that ends a thread.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rt_debug.callsite import CallSite
from rt_debug.preview import error_report

if TYPE_CHECKING:
    from rt.kernel import Kernel

_INTERNAL_FILES = frozenset({os.path.normcase(os.path.abspath(f)) for f in (runpy.__file__, __file__)})
EXIT_USAGE = 2
EXIT_FAILURE = 1


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="the Python file (or folder/zip with __main__.py) to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments given to the script as sys.argv[1:]")


def run(args: argparse.Namespace, kernel: Kernel) -> int:
    backend = getattr(args, "backend", None) or kernel.config.get("backend")
    return run_script(args.script, list(args.args), backend=backend)


def _outside_rt(sites: list[CallSite]) -> list[CallSite]:
    """Drop the outermost call sites that belong to this runner or runpy: they are rt's, not the user's."""
    end = len(sites)
    while end and os.path.normcase(os.path.abspath(sites[end - 1].get_file_name())) in _INTERNAL_FILES:
        end -= 1
    return sites[:end]


def _wants_colors() -> bool:
    return "NO_COLOR" not in os.environ and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()


def print_error(error: BaseException) -> None:
    """Print the report of an unhandled ``error`` on stderr, after whatever the program wrote to stdout."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    print(error_report(error, colors=_wants_colors(), skip_frames=_outside_rt), file=sys.stderr, flush=True)


def _thread_excepthook(hook_args: threading.ExceptHookArgs) -> None:
    if hook_args.exc_type is SystemExit or hook_args.exc_value is None:
        return
    name = hook_args.thread.name if hook_args.thread is not None else "?"
    print(f"Exception in thread {name}:", file=sys.stderr)
    print_error(hook_args.exc_value)


def exit_code(exit: SystemExit) -> int:
    """What ``python`` exits with for ``sys.exit(code)``: None is 0, an int itself, anything else printed and 1."""
    code = exit.code
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    print(code, file=sys.stderr)
    return EXIT_FAILURE


@contextlib.contextmanager
def _as_main(script: str, argv: Sequence[str], backend: str | None) -> Iterator[None]:
    """Set sys.argv, sys.path[0], RT_BACKEND and the thread excepthook for the script; restore them after."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    saved_hook, saved_backend = threading.excepthook, os.environ.get("RT_BACKEND")
    sys.argv = [script, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    threading.excepthook = _thread_excepthook
    if backend:
        os.environ["RT_BACKEND"] = backend
    try:
        yield
    finally:
        sys.argv[:] = saved_argv
        sys.path[:] = saved_path
        threading.excepthook = saved_hook
        if saved_backend is None:
            os.environ.pop("RT_BACKEND", None)
        else:
            os.environ["RT_BACKEND"] = saved_backend


def run_script(script: str, argv: Sequence[str] = (), *, backend: str | None = None) -> int:
    """Run ``script`` as ``__main__`` with ``argv`` and return the process exit code."""
    if not os.path.exists(script):
        print(f"rt run: can't open file {script!r}: no such file or directory", file=sys.stderr)
        return EXIT_USAGE
    with _as_main(script, argv, backend):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exit:
            return exit_code(exit)
        except KeyboardInterrupt:
            raise  # the rt command exits 130, as python does on Ctrl-C
        except BaseException as error:  # noqa: BLE001 - this *is* the top-level handler of the program
            print_error(error)
            return EXIT_FAILURE
    return 0
