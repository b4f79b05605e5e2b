"""Whether an option a conftest.py or a plugin registers takes a value, known before any of them is imported.

``rt test --basedir tests``: rt picks its test paths before the conftest.py files load (they are loaded
while collecting), so it cannot ask the option itself whether ``tests`` is its value or a test path. pytest
parses its command line once its initial conftest.py files have registered their options, so ``tests`` is
``--basedir``'s value there. rt reads the ``parser.addoption(...)`` calls of those conftest.py files' source
(parsed, never run): an option registered without a flag action (``store_true``, ``count`` ...) or
``nargs=0`` takes the word after it, whatever that word names. The same holds of the plugins' options
(installed ``pytest11`` plugins, ``-p NAME``), read from their modules' source: ``addopts = --some-flag
tests`` gives ``tests`` to pytest as a path when the plugin registers ``--some-flag`` as a flag
(:func:`option_arity`).
"""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

#: argparse's actions that take no value
_FLAG_ACTIONS = frozenset(
    {"store_true", "store_false", "store_const", "append_const", "count", "help", "version"}
)


#: the number of words an option takes when it is open (``nargs="*"``, ``"+"``): every word up to the next option
OPEN = -1


def registrations(source: Path | str) -> Iterator[tuple[str, int]]:
    """Each option a ``parser.addoption(...)`` call of ``source`` registers, with how many words it takes (:func:`_arity`); a name
    made by an f-string (pytest-benchmark's ``f"--{prefix}columns"``) as a pattern, ``*`` for each
    replacement field (see :func:`_matches`)."""
    try:
        text = source.read_bytes() if isinstance(source, Path) else source
        tree = ast.parse(text, str(source) if isinstance(source, Path) else "<plugin>")
    except (OSError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node.func) in ("addoption", "_addoption"):
            count = _arity(node)
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"):
                    yield arg.value, count
                elif isinstance(arg, ast.JoinedStr):
                    yield _pattern(arg), count


def _called(function: ast.expr) -> str | None:
    """The name a call is made by: ``group.addoption(...)``, or ``addoption(...)`` handed over as a function
    (pytest-benchmark's ``add_display_options(addoption)``)."""
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else None


def _pattern(name: ast.JoinedStr) -> str:
    return "".join(
        part.value.replace("*", "") if isinstance(part, ast.Constant) and isinstance(part.value, str) else "*"
        for part in name.values
    )


def _matches(option: str, registered: str) -> bool:
    """``option`` is ``registered``, or fits its pattern (``--*columns``: the constant parts in order, each
    ``*`` one or more characters)."""
    if "*" not in registered:
        return option == registered
    import fnmatch

    return registered.startswith("-") and fnmatch.fnmatchcase(option, registered.replace("*", "?*"))


def plugin_texts(plugin_names: Iterable[str], path: Sequence[str]) -> Iterator[str]:
    """The sources of the modules ``-p`` names (``plugin_names``) and of the installed plugins (unless
    ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set), found on ``path`` without importing them; only those that
    call ``addoption``."""
    from rt_testrunner.plugin_sources import module_source
    from rt_testrunner.pyplugins import AUTOLOAD_OFF, pytest11

    modules = [name for name in plugin_names if name and not name.startswith("no:")]
    if not os.environ.get(AUTOLOAD_OFF):
        modules += [entry.value.split(":")[0].strip() for entry in pytest11(path)]
    for module in dict.fromkeys(modules):
        text = module_source(module, path)
        if "addoption" in text:
            yield text


def _arity(call: ast.Call) -> int:
    count = 1
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg == "action" and isinstance(value, ast.Constant) and value.value in _FLAG_ACTIONS:
            return 0
        if keyword.arg == "nargs" and isinstance(value, ast.Constant):
            # "?" takes the next word when there is one that is no option, as argparse does: one word at most
            count = value.value if isinstance(value.value, int) else 1 if value.value == "?" else OPEN
    return count


def initial_conftests(root: Path, rootdir: Path) -> list[Path]:
    """The conftest.py files pytest loads before it parses its command line: in the folder the run starts in
    (``root``), its parents up to the rootdir, and its ``test*`` subfolders."""
    folders = [root, *root.parents]
    folders = folders[: folders.index(rootdir) + 1] if rootdir in folders else [root]
    folders += sorted(child for child in root.glob("test*") if child.is_dir())
    return [folder / "conftest.py" for folder in folders if (folder / "conftest.py").is_file()]


def option_arity(
    root: Path, rootdir: Path, plugin_names: Sequence[str], path: Sequence[str]
) -> Callable[[str], int | None]:
    """How many words an option takes (0 for a flag, ``nargs`` when it is a number, 1 without it or with
    ``nargs="?"``, :data:`OPEN` for ``*`` and ``+``; None when nothing registers it), as registered by the
    initial conftest.py files, then by the plugins' modules: their sources are read when an option is first asked for, once per process, and only those that
    name the option (or make option names with f-strings) are parsed."""
    key = (root, rootdir, tuple(plugin_names), tuple(path))

    sources: list[str] | None = None

    def ask(option: str) -> int | None:
        nonlocal sources
        if sources is None:
            sources = _source_texts(*key)
        texts = [text for text in sources if option in text or "f'-" in text or 'f"-' in text]
        found = [registered for text in texts for registered in _registered(text)]
        exact = next((count for name, count in found if name == option), None)
        if exact is not None:
            return exact
        return next((count for name, count in found if "*" in name and _matches(option, name)), None)

    return ask


def _source_texts(
    root: Path, rootdir: Path, plugin_names: tuple[str, ...], path: tuple[str, ...]
) -> list[str]:
    """The initial conftest.py files' texts, read at each call (a long-lived process sees them change), then
    the plugins' (read once per process)."""
    texts = []
    for conftest in initial_conftests(root, rootdir):
        try:
            texts.append(conftest.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return [*texts, *_plugin_texts(plugin_names, path)]


@functools.cache
def _plugin_texts(plugin_names: tuple[str, ...], path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(plugin_texts(plugin_names, path))


@functools.cache
def _registered(text: str) -> tuple[tuple[str, int], ...]:
    return tuple(registrations(text))
