"""Folders a ``pytest_collect_directory(path, parent)`` hook (pytest 8+) collects with a collector of its own.

pytest collects every folder through that firstresult hook: its own answers are ``Package`` (a folder with an
``__init__.py``) and ``Dir``, and a conftest.py's answer for a folder below it replaces them: a
``pytest.Directory`` subclass whose ``collect()`` decides what the folder holds (pytest's documented manifest
collector takes only the files a ``manifest.json`` names; one that returns nothing leaves the folder out; one
that yields items of its own collects data files). pytest asks the hook once the conftest.py files above the
folder are loaded, and loads the folder's own conftest.py before a ``Directory``'s ``collect()``.

rt finds a run's files before any conftest.py loads (discovery.py), so the walk hands each folder below a
conftest.py that defines the hook to the run as a unit of its own (``TestFile.directory``), sorted before the
files it holds. Its test modules stay units of their own, as every test module is (the same scheduling, node
ids and ``--parallel`` split): what the hook answers decides whether each runs. A test module below a folder
that a collector of the suite's own took runs when that collector yielded pytest's ``Module`` for it, and is
left out otherwise, as pytest never collects it; the folder's unit holds whatever else the collector yielded
(its items, its file collectors, the modules the walk would not find). Each process asks the hook once per
folder (:attr:`PytestSession.folder_collectors`), as each pytest-xdist worker collects the whole tree.

The walk reads the hook from the sources, as the fast path; a hook they do not show (an installed plugin's,
an object registered at run time, a module of a ``pytest_plugins`` built by code) is known once the plugins
and conftest.py files are loaded, from the session's implementations of the hook: the folders of the run's
files that then have a collector of their own with something to collect get their units too
(:func:`folders_to_ask`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from rt_testrunner.model import Suite

if TYPE_CHECKING:
    from rt_testrunner.discovery import TestFile
    from rt_testrunner.pysession import PytestSession

HOOK = "pytest_collect_directory"


@attrs.define(eq=False)
class Folder:
    """What a folder's own collector collected: its nodes in order, a nested folder's as a :class:`Folder`,
    and the test modules among them that run as units of their own."""

    node: Any
    entries: list[Any] = attrs.field(factory=list)
    modules: set[Path] = attrs.field(factory=set)
    #: what its ``collect()`` raised: the folder's collection error, nothing below it runs
    error: BaseException | None = None
    #: the path of each node it yielded, in its order (a module's file, a folder's, an item's)
    order: list[Path] = attrs.field(factory=list)


def _pytest_own(collector: Any) -> bool:
    """pytest's own folder collectors, which rt stands in for: the folder is collected as always."""
    kind = type(collector)
    return (kind.__module__, kind.__name__) in (("_pytest.main", "Dir"), ("_pytest.python", "Package"))


def folder_collection(folder: Path, session: PytestSession) -> Folder | None:
    """What the hook's own collector for ``folder`` collected; None when no hook answers or the answer is
    pytest's ``Dir`` or ``Package``. Asked once per folder and process."""
    known = session.folder_collectors
    if folder in known:
        found: Folder | None = known[folder]
        return found
    known[folder] = None  # a collector that asks about its own folder again finds the default
    hooks = session.hooks_for(HOOK, str(folder))
    if not hooks:
        return None
    from rt_testrunner import pyplugins
    from rt_testrunner.pycollect import directory_node

    answer = pyplugins.call(
        HOOK, hooks, {"path": folder, "parent": directory_node(folder.parent, session)}, firstresult=True
    )
    if answer is None or _pytest_own(answer):
        return None
    collection = Folder(answer)
    try:
        _gather(collection, session)
    except Exception as exc:  # noqa: BLE001 - the folder's collection error, told by its own unit
        collection.error = exc
    known[folder] = collection
    return collection


def _gather(folder: Folder, session: PytestSession) -> None:
    """Call the collector's ``collect()`` (a ``Directory``'s after its folder's conftest.py loaded, as
    pytest's collection report does) and sort what it yields."""
    import pytest

    collector = folder.node
    if isinstance(collector, pytest.Directory):
        session.load_conftests(Path(collector.path))
    for node in collector.collect() or ():
        folder.order.append(Path(node.path))
        kind = type(node)
        if (kind.__module__, kind.__name__) == ("_pytest.python", "Module") and walked(node.path, session):
            folder.modules.add(Path(node.path))
        elif isinstance(node, pytest.Directory):
            inner = Folder(node)
            _gather(inner, session)
            folder.modules.update(inner.modules)
            folder.entries.append(inner)
        else:
            folder.entries.append(node)


def walked(path: Path, session: Any) -> bool:
    """``path`` is a file the walk finds as a test module (a unit of its own)."""
    from rt_testrunner.discovery import SUFFIXES, python_file_matches

    text = str(path)
    return text.endswith(SUFFIXES) or any(python_file_matches(text, p) for p in session.pyconfig.python_files)


def _folders_above(path: Path, session: PytestSession) -> list[Path]:
    """The folders above ``path`` below the rootdir, the outermost first."""
    root = Path(session.pyconfig.rootdir)
    if root not in path.parents:
        return []
    above = []
    for folder in path.parents:
        if folder == root:
            break
        above.append(folder)
    return above[::-1]


def leaving_out(path: Path, session: PytestSession) -> Any | None:
    """The collector node that leaves test module ``path`` out: a folder above it is collected by a hook's
    own collector that did not yield pytest's ``Module`` for it (or whose ``collect()`` failed); None when
    the module is collected."""
    for folder in _folders_above(path, session):
        collection = folder_collection(folder, session)
        if collection is not None:
            left_out = collection.error is not None or path not in collection.modules
            return collection.node if left_out else None
    return None


def load_folder(test_file: TestFile, session: PytestSession) -> Suite | None:
    """The suite of what ``test_file``'s folder's own collector collected beside the test modules; None when
    that is nothing, or the folder is collected as always (or not at all: ignored, or inside a folder another
    collector took)."""
    folder = test_file.path
    if not session.load_conftests(folder.parent) or session.is_ignored(folder):
        return None
    if any(folder_collection(above, session) is not None for above in _folders_above(folder, session)):
        return None
    collection = folder_collection(folder, session)
    if collection is None:
        return None
    if collection.error is not None:
        raise collection.error
    root = Suite(None)
    _build(collection, root, session, test_file.selectors)
    return root if root.children else None  # its modules alone: nothing of its own to show


def _build(folder: Folder, into: Suite, session: PytestSession, selectors: tuple[str, ...]) -> None:
    from rt_testrunner.pycollect import add_nodes

    for entry in folder.entries:
        if isinstance(entry, Folder):
            suite = Suite(entry.node.name, into)
            _build(entry, suite, session, selectors)
            if suite.children:
                into.children.append(suite)
        else:
            add_nodes([entry], Path(entry.path), into, session, selectors)


def folders_to_ask(path: Path, session: PytestSession, asked: set[Path]) -> list[TestFile]:
    """The folder units to try before test module ``path`` is collected: each folder above it (below the
    rootdir, outermost first) not in ``asked`` (the folders with units of the walk's, and those tried
    already, which this adds to), while the session has an implementation of the hook. A hook the sources
    did not show is known by then (an installed plugin's, an object a plugin or an initial conftest.py
    registered, a module of a computed ``pytest_plugins``), so its folders are asked where the walk would
    have put their units: before their first test module."""
    if not session.named_hooks.get(HOOK):
        return []
    from rt_testrunner.discovery import TestFile

    root = Path(session.root)
    units = []
    for folder in _folders_above(path, session):
        if folder not in asked:
            asked.add(folder)
            relative = folder.relative_to(root).as_posix() if root in folder.parents else folder.as_posix()
            units.append(TestFile(folder, relative, directory=True))
    return units


def with_units(files: Sequence[TestFile], units: Sequence[TestFile]) -> list[TestFile]:
    """``files`` with each folder unit before the first file below its folder (where the walk puts one)."""
    order = list(files)
    for unit in units:
        at = next((i for i, f in enumerate(order) if unit.path in f.path.parents), len(order))
        order.insert(at, unit)
    return order


def in_collectors_order(nodes: list[Any], session: PytestSession) -> bool:
    """Put the items below each folder a collector of its own took in the order its ``collect()`` yielded
    their modules, folders and items, as pytest collects them (a manifest's order, not the folder's); each
    folder's items take the place of its first. Whether anything moved.

    Linear in the items (times the depth of their folders): each item's path is read once, each collector's
    order becomes a map from path to place once, and every folder's items move in one pass, so a suite of
    many folders with collectors of their own (or one big manifest) sorts as fast as a plain one."""
    collections = {folder: c for folder, c in session.folder_collectors.items() if c is not None}
    places = {folder: _first_places(collection.order) for folder, collection in collections.items()}
    owner: list[Path | None] = []  # the outermost collector folder above each item
    keys: list[tuple[int, ...]] = []  # its place in each collector's order above it, the outermost first
    for node in nodes:
        path = _path_of(node)
        if path is None:
            owner.append(None)
            keys.append(())
            continue
        above = [folder for folder in path.parents if folder in collections][::-1]
        owner.append(above[0] if above else None)
        keys.append(tuple(_yield_index(path, places[f], len(collections[f].order)) for f in above))
    groups: dict[Path, list[int]] = {}
    for i, folder in enumerate(owner):
        if folder is not None:
            groups.setdefault(folder, []).append(i)
    for at in groups.values():
        at.sort(key=keys.__getitem__)  # stable: items of one place keep their order
    ordered: list[Any] = []
    for i, folder in enumerate(owner):
        if folder is None:
            ordered.append(nodes[i])
        elif folder in groups:  # the folder's first item: all of them, in its collector's order
            ordered.extend(nodes[j] for j in groups.pop(folder))
    moved = any(new is not old for new, old in zip(ordered, nodes, strict=True))
    nodes[:] = ordered
    return moved


def _path_of(node: Any) -> Path | None:
    path = getattr(node, "path", None)
    return None if path is None else Path(path)


def _first_places(order: list[Path]) -> dict[Path, int]:
    """Each path a collector yielded, with the place it first yielded it."""
    places: dict[Path, int] = {}
    for i, entry in enumerate(order):
        places.setdefault(entry, i)
    return places


def _yield_index(path: Path, places: dict[Path, int], last: int) -> int:
    """The place of ``path`` among what a collector yielded: the first entry that is it or a folder above it
    (``last``, after them all, when none is)."""
    return min((places[entry] for entry in (path, *path.parents) if entry in places), default=last)
