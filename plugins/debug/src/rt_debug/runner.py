"""``rt run script.py [args...]`` (and ``rt script.py``): run a program as ``python script.py`` would.

Same ``sys.argv``, ``__name__ == "__main__"``, ``sys.path[0]`` (the script's folder), exit codes and untouched
stdin: a file runs through :func:`exec_main`, a folder or zip archive through :func:`runpy.run_path`. The kernel has already applied ``--backend`` to its configuration and
made itself current, so ``rt.serve(...).run()`` and ``rt.backend.run`` in the script use that backend; it is
also exported as ``RT_BACKEND`` so that threads and child processes, which start with a default kernel, agree.

An unhandled exception prints the error report (source preview, message, V8-style stack; see
:mod:`rt_debug.report`) instead of Python's traceback, with rt's and runpy's own frames left out; so does an
exception that ends a thread. A ``sys.excepthook`` installed by the program is called instead.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import io
import os
import runpy
import sys
import threading
import types
import zipfile
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rt_debug.callsite import CallSite, add_launcher
from rt_debug.report import error_report

if TYPE_CHECKING:
    from rt.kernel import Kernel
    from rt_debug.inspector.server import Inspector

EXIT_USAGE = 2
EXIT_FAILURE = 1


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def configure(parser: argparse.ArgumentParser) -> None:
    from rt_debug.inspector.flags import add_inspect_options

    add_inspect_options(parser)
    parser.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="serve with N processes sharing the port ([serve] workers; docs/scaling.md)",
    )
    parser.add_argument("script", help="the Python file (or folder/zip with __main__.py) to run")
    parser.add_argument(
        "args", nargs=argparse.REMAINDER, help="arguments given to the script as sys.argv[1:]"
    )


def run(args: argparse.Namespace, kernel: Kernel) -> int:
    backend = kernel.config.get("backend")  # the kernel has applied --backend to its config already
    if getattr(args, "workers", None) is not None:  # rt.serve(...) in the script reads it (rt_http.workers)
        kernel.with_overrides({"serve.workers": args.workers})
    from rt_debug.inspector.address import InspectValueError
    from rt_debug.inspector.flags import inspect_address

    try:
        address = inspect_address(args)
    except InspectValueError as exc:
        print(f"rt run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if address is None:
        return run_script(args.script, list(args.args), backend=backend)
    if not os.path.isfile(args.script):
        print(
            f"rt run: can't open file {args.script!r}: no such file (the inspector runs a file)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from rt_debug.inspector.server import Inspector, InspectorUnavailable

    try:
        inspector = Inspector(address, os.path.abspath(args.script), kernel, _ui_url(kernel))
        inspector.start()
    except InspectorUnavailable as exc:
        print(f"rt run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return run_script(args.script, list(args.args), backend=backend, inspector=inspector)
    finally:
        inspector.stop()


def _ui_url(kernel: Kernel) -> str:
    from rt_debug.inspector.server import DEFAULT_UI_URL

    value = kernel.config.get("debug.inspector_ui_url", DEFAULT_UI_URL)
    return str(value or DEFAULT_UI_URL)


def _outside_rt(sites: list[CallSite]) -> list[CallSite]:
    """Drop the outermost call sites that belong to this runner or runpy: they are rt's, not the user's."""
    # runpy is frozen in CPython 3.11+: its frames name "<frozen runpy>", so take file names from the code objects
    internal = {runpy.run_path.__code__.co_filename, run_script.__code__.co_filename}
    end = len(sites)
    while end and sites[end - 1].get_file_name() in internal:
        end -= 1
    return sites[:end]


def _wants_colors() -> bool:
    return "NO_COLOR" not in os.environ and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()


# runpy's private helpers run a folder's or zip's __main__: their frames are the launcher's too
_RUNPY_PRIVATE = [
    getattr(runpy, name).__code__ for name in ("_run_code", "_run_module_code") if hasattr(runpy, name)
]


def _without_rt(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback from the program's first frame on: this runner's (and runpy's) entries are rt's."""
    internal = {exec_main.__code__, run_script.__code__, runpy.run_path.__code__, *_RUNPY_PRIVATE}
    while tb is not None and tb.tb_frame.f_code in internal:
        tb = tb.tb_next
    return tb


def print_error(error: BaseException) -> None:
    """Report an unhandled ``error`` on stderr, after whatever the program wrote to stdout.

    A ``sys.excepthook`` the program installed (Sentry, rich, its own) is called instead of rt's printer, as
    ``python`` would call it, with a traceback that starts at the program's own code. If that hook fails,
    Python's rule applies: its error is reported, then the original one.
    """
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    hook = sys.excepthook
    if hook is not sys.__excepthook__:
        try:
            hook(type(error), error, _without_rt(error.__traceback__))
        except BaseException as hook_error:  # noqa: BLE001 - as python: report the hook's failure, then the error
            if hook_error.__context__ is error:
                hook_error.__suppress_context__ = True  # the original error is printed in full just after
            print("Error in sys.excepthook:", file=sys.stderr)
            _print_report(hook_error)
            print("\nOriginal exception was:", file=sys.stderr)
        else:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            return
    _print_report(error)


def _print_report(error: BaseException) -> None:
    print(error_report(error, colors=_wants_colors(), skip_frames=_outside_rt), file=sys.stderr, flush=True)


def _thread_excepthook(hook_args: threading.ExceptHookArgs) -> None:
    if hook_args.exc_type is SystemExit or hook_args.exc_value is None:
        return
    name = hook_args.thread.name if hook_args.thread is not None else "?"
    print(f"Exception in thread {name}:", file=sys.stderr)
    _print_report(hook_args.exc_value)


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


def exec_main(path: str) -> None:
    """Run the file at the absolute ``path`` as the ``__main__`` module, as ``python path`` does.

    Not ``runpy.run_path``: it sets ``sys.argv[0]`` to the path it is given, and it must be given the absolute
    path for ``__file__`` and the stack to be absolute (as with ``python script.py`` since 3.9), while
    ``sys.argv[0]`` must stay as the user typed it. The module is what run_path makes for a plain file:
    ``__spec__``/``__loader__`` None, and it is ``sys.modules["__main__"]`` while it runs (pickle needs that).
    """
    with io.open_code(path) as source_file:
        source = source_file.read()
    code = compile(source, path, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__dict__.update(
        __file__=path,
        __cached__=None,
        __loader__=None,
        __spec__=None,
        __package__=None,
        __builtins__=builtins,
    )
    saved_main = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 - running the user's program is this command's job
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


add_launcher(exec_main.__code__)


def run_script(
    script: str, argv: Sequence[str] = (), *, backend: str | None = None, inspector: Inspector | None = None
) -> int:
    """Run ``script`` as ``__main__`` with ``argv`` and return the process exit code.

    With an ``inspector``, the script waits for a client first (``--inspect-brk``/``--inspect-wait``), runs
    under its tracer, and an uncaught error pauses before it is reported (pause on exceptions).
    """
    if not os.path.exists(script):
        print(f"rt run: can't open file {script!r}: no such file or directory", file=sys.stderr)
        return EXIT_USAGE
    with _as_main(script, argv, backend):
        try:
            if inspector is not None:
                inspector.before_main()
            if os.path.isfile(script) and not zipfile.is_zipfile(script):
                exec_main(os.path.abspath(script))
            else:  # a folder or a zip archive with __main__.py: runpy knows how to find it
                runpy.run_path(script, run_name="__main__")
        except SystemExit as exit:
            return exit_code(exit)
        except KeyboardInterrupt as interrupt:
            print_error(interrupt)  # where it was interrupted, as python shows it
            raise  # the rt command exits 130, as python does on Ctrl-C
        except BaseException as error:  # noqa: BLE001 - this *is* the top-level handler of the program
            if inspector is not None:
                inspector.uncaught(error)
            print_error(error)
            return EXIT_FAILURE
    return 0
