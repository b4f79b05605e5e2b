"""``rt test --watch``: run the tests, then re-run the affected test files whenever a file changes.

Watching is watchfiles' job (inotify/FSEvents through its Rust core, with a debounce). Each run is a fresh
``rt test`` child process: module state (imported modules, their globals, registered mocks) can never leak
from one run into the next, a syntax error in an edited file is just that run's load failure, and Ctrl-C
ends the child and the watcher without a traceback.

Which test files a change affects comes from an import graph read with :mod:`ast` (never by importing
anything): a test file is affected when it changed itself or imports, directly or through other modules of
the project, a module that changed. The graph is rebuilt on every change, so a new import is seen at once.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from rt_testrunner.discovery import discover

DEBOUNCE_MS = 200


class WatchUnavailable(Exception):
    """watchfiles is not installed."""


# --- the import graph ---------------------------------------------------------------------------------------------


def _module_file(root: Path, dotted: str) -> Path | None:
    """The project file for module ``dotted`` (``a.b`` -> ``root/a/b.py`` or ``root/a/b/__init__.py``)."""
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path, root: Path) -> list[str]:
    relative = path.parent.relative_to(root)
    return list(relative.parts)


def imports_of(path: Path, roots: Sequence[Path], project: Path) -> set[Path]:
    """Project files that ``path`` imports directly (absolute imports from each of ``roots``, relative ones
    from its package). A file that does not parse imports nothing (its run reports the syntax error)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return set()
    found: set[Path] = set()
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                try:
                    package = _package_of(path, project)
                except ValueError:
                    continue
                if node.level > 1:
                    package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
                names.extend(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
                if node.module:
                    names.append(base)
                continue
            if node.module:
                names.append(node.module)
                names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    for name in names:
        parts = name.split(".")
        for root in roots:
            # "import a.b.c" also runs a/__init__.py and a/b/__init__.py
            for end in range(1, len(parts) + 1):
                module = _module_file(root, ".".join(parts[:end]))
                if module is not None:
                    found.add(module.resolve())
    found.discard(path.resolve())
    return found


def dependencies(test_file: Path, project: Path) -> set[Path]:
    """Every project file ``test_file`` imports, transitively (itself included)."""
    roots = [project, test_file.parent]
    seen = {test_file.resolve()}
    pending = [test_file]
    while pending:
        current = pending.pop()
        for imported in imports_of(current, roots, project):
            if imported not in seen and project in imported.parents:
                seen.add(imported)
                pending.append(imported)
    return seen


def affected(test_files: Iterable[Path], changed: set[Path], project: Path) -> list[Path]:
    return [f for f in test_files if dependencies(f, project) & changed]


# --- the loop -------------------------------------------------------------------------------------------------


def child_argv(argv: Sequence[str], filters: Sequence[str]) -> list[str]:
    """``rt ...`` arguments of this process without ``--watch`` and the positional filters."""
    args = [a for a in argv if a != "--watch"]
    for value in filters:
        for index in range(len(args) - 1, -1, -1):
            if args[index] == value:
                del args[index]
                break
    return args


def _run_child(command: list[str], root: Path) -> int:
    child = subprocess.Popen(command, cwd=root)
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.terminate()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        raise


def watch(root: Path, filters: Sequence[str], argv: Sequence[str] | None = None) -> int:
    """Run, then re-run on changes until Ctrl-C (exit 0)."""
    try:
        import watchfiles
    except ImportError:
        raise WatchUnavailable("--watch needs watchfiles: pip install 'rt-testrunner[watch]'") from None
    argv = list(sys.argv[1:] if argv is None else argv)
    base = [sys.executable, "-m", "rt", *child_argv(argv, filters)]
    err = sys.stderr
    try:
        _run_child([sys.executable, "-m", "rt", *[a for a in argv if a != "--watch"]], root)
        err.write("\nWatching for changes (Ctrl-C to stop)...\n")
        err.flush()
        for changes in watchfiles.watch(
            root, watch_filter=watchfiles.PythonFilter(), debounce=DEBOUNCE_MS, raise_interrupt=True
        ):
            changed = {Path(path).resolve() for _, path in changes}
            try:
                test_files = [f.path.resolve() for f in discover(root, filters)]
            except Exception as exc:  # noqa: BLE001 - a DiscoveryError after a rename: say so, keep watching
                err.write(f"error: {exc}\n")
                continue
            to_run = affected(test_files, changed, root.resolve())
            names = ", ".join(sorted(_shown(p, root) for p in changed))
            if not to_run:
                err.write(f"\nChanged: {names} (no test file imports it)\n")
                err.flush()
                continue
            err.write(
                f"\nChanged: {names}; re-running {len(to_run)} test file{'s' if len(to_run) != 1 else ''}\n"
            )
            err.flush()
            _run_child([*base, *(f"./{_shown(p, root)}" for p in to_run)], root)
            err.write("\nWatching for changes (Ctrl-C to stop)...\n")
            err.flush()
    except KeyboardInterrupt:
        err.write("\nStopped watching.\n")
        err.flush()
    return 0


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
