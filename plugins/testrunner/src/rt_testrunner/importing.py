"""Importing test files, conftest.py files and the suite's helper modules under their real names.

As pytest's default ("prepend") import mode: the module's name is its dotted path from the first directory
upward without an ``__init__.py`` (its basedir), which goes first on ``sys.path``. So a test module's classes
pickle, ``multiprocessing`` can find its functions, and relative imports inside test packages work.

Assertions are rewritten (:mod:`rt_testrunner.rewrite`) in test files, conftest.py files and every module
imported from the suite's test directories (its helpers), through a finder on ``sys.meta_path`` just before
the path finder.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rt_testrunner.discovery import SUFFIXES, python_file_matches
from rt_testrunner.rewrite import _HELPER, _UNSET, UNSET, assert_failed, compile_test_file


class ImportMismatchError(ImportError):
    """Two files that would import under one module name (pytest's "import file mismatch")."""


class _RewritingLoader(importlib.machinery.SourceFileLoader):
    """The source file loader with rewritten code. Only what the module is made of changes (``create_module``,
    ``get_code``): importlib's own ``exec_module`` runs it, so no frame of rt's sits between the module and
    its importer, and a warning the module gives at import with ``stacklevel=2`` names the importing file,
    as for any module the normal loader imports (importlib's frames are skipped when warnings count
    levels)."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        if self.helper:
            # a module pytest would not rewrite keeps its namespace as it is (typing_extensions' tests
            # compare its public names with its __all__): its rewritten asserts find rt's names as builtins
            _publish_builtins()
        else:
            module.__dict__[_HELPER] = assert_failed
            module.__dict__[_UNSET] = UNSET
        if self.marked:  # importlib keeps a ``__loader__`` the module has already
            _look_rewritten_by_pytest(module, self)
        return module

    #: a module of an installed plugin's distribution, which pytest imports through its rewriting hook
    marked = False

    #: a helper module of the suite (not a test file nor a conftest.py): see ``compile_test_file``
    helper = False

    def get_code(self, fullname: str) -> types.CodeType:
        return compile_test_file(Path(self.path), helper=self.helper, read=self.get_data)


def _publish_builtins() -> None:
    """rt's two names for rewritten asserts, where a module that does not define them finds them."""
    import builtins

    namespace = builtins.__dict__
    if _HELPER not in namespace:
        namespace[_HELPER] = assert_failed
        namespace[_UNSET] = UNSET


class RewritingFinder:
    """Finds modules as the normal path finder does, and hands the suite's own ones to the rewriting loader.

    A plain class with ``find_spec`` (all ``sys.meta_path`` asks for), not a subclass of
    ``importlib.abc.MetaPathFinder``: importing that module imports ``importlib.resources``, ``tempfile``,
    ``shutil``, ``random`` and the compression modules into every run.
    """

    def invalidate_caches(self) -> None:
        """Nothing cached here (``importlib.invalidate_caches`` calls it on every finder)."""

    def __init__(self, python_files: Sequence[str]) -> None:
        self.test_dirs: set[str] = set()
        self.python_files = tuple(python_files)
        #: pytest's ``consider_namespace_packages`` ini option (see :func:`module_name`)
        self.namespace_packages = False
        #: the suite's other modules are rewritten too, unless its modules' doctests are tests (pytest rewrites
        #: only test files and conftest.py files: a library module's doctest may show an ``AssertionError``
        #: its plain ``assert`` raises, without a message)
        self.rewrite_helpers = True
        #: a second test file under a module name already imported from another file is pytest's "import
        #: file mismatch" error (its "prepend" and "append" modes); under ``--import-mode=importlib``, where
        #: pytest names each module by its path, and in a project of the spec's patterns alone (the reference
        #: runtime imports by path), the second file is imported in the first one's place
        self.unique_names = False
        #: no pytest configuration: files of the spec's patterns (``x_test.py``) are imported by path as the
        #: reference runtime imports them, never refused for a name another file holds
        self.spec_project = False
        #: pytest's ``--import-mode=importlib``: each file is imported from where it is and ``sys.path`` is left
        #: as it is (see :func:`_import_by_location`)
        self.by_location = False
        #: the rootdir, which names a file outside any package under ``--import-mode=importlib``
        #: (:func:`location_name`)
        self.root: Path | None = None

    def add_test_dir(self, directory: Path) -> None:
        self.test_dirs.add(str(directory))

    def is_test_module(self, origin: str) -> bool:
        """A test file or a conftest.py, whose asserts pytest rewrites (others are the suite's helpers)."""
        return os.path.basename(origin) == "conftest.py" or any(
            python_file_matches(origin, pattern) for pattern in self.python_files
        )

    def wants(self, origin: str) -> bool:
        if _installed(origin):
            return False
        if self.is_test_module(origin):
            return True
        if not self.rewrite_helpers:
            return False
        directory = os.path.dirname(origin)
        while directory and directory not in self.test_dirs:
            parent = os.path.dirname(directory)
            if parent == directory:
                return False
            directory = parent
        return bool(directory)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        marked = bool(_MARKED) and is_marked(fullname)
        if marked:
            pass
        elif path is not None and all(isinstance(entry, str) and _installed(entry) for entry in path):
            # a submodule of an installed package (pytest's own, the suite's dependencies): never rewritten,
            # so not searched for twice (here, then by the path finder that follows)
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.origin, str) or not spec.origin.endswith(".py"):
            return self._as_found(spec)
        if not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return self._as_found(spec)
        if not marked and not self.wants(spec.origin):
            return self._as_found(spec)
        loader = _RewritingLoader(fullname, spec.origin)
        loader.helper = not marked and not self.is_test_module(spec.origin)
        loader.marked = marked
        spec.loader = loader
        return spec

    def _as_found(self, spec: importlib.machinery.ModuleSpec | None) -> importlib.machinery.ModuleSpec | None:
        """A module not rewritten: the path finder's spec as it is, when the path finder is the next finder,
        which would search ``sys.path`` again for the same answer (every module of the standard library and of
        the suite was searched for twice); None otherwise, so a finder another library put between the two still has its say."""
        meta_path = sys.meta_path
        try:
            after = meta_path.index(self) + 1
        except ValueError:
            return None
        if after < len(meta_path) and meta_path[after] is importlib.machinery.PathFinder:
            return spec
        return None


def _installed(path: str) -> bool:
    """Installed code, which is not the suite's: its modules keep their plain asserts, as under pytest
    (but for those marked: :func:`mark_rewrite`)."""
    return "site-packages" in path or "dist-packages" in path


#: the top-level modules and packages whose asserts are rewritten wherever they are installed: those of the
#: installed pytest plugins, as pytest marks every package of a distribution with a ``pytest11`` entry point
#: (pytest-mock's ``assert_called_with`` adds the rewritten assert's explanation to its own message)
_MARKED: set[str] = set()


def mark_rewrite(name: str) -> None:
    """Rewrite the asserts of module or package ``name`` (and its submodules) when it is imported from now
    on; a module imported already keeps its code, as under pytest."""
    _MARKED.add(name)


def is_marked(fullname: str) -> bool:
    return any(fullname == name or fullname.startswith(f"{name}.") for name in _MARKED)


def show_marked_as_rewritten() -> None:
    """Give the marked modules imported already a ``__loader__`` pytest's rewriting hook takes for its own.

    pytest imports the installed plugins' packages through its rewriting hook; a pytest run inside the
    session (pytester's ``runpytest``) marks them again and warns about every one imported by another loader
    ("Module already imported so cannot be rewritten"), a warning its summary then counts (``1 failed, 2
    warnings``, where a suite's ``fnmatch_lines(["* 1 failed in *"])`` expects none). rt imported them (with
    its own rewriting, or before the suite, as anyio), so each gets a stand-in loader of pytest's hook class
    that hands every question to the module's real loader; ``__spec__.loader`` (what importlib uses) is left
    as it is. Nothing when pytest is not imported."""
    for name in _MARKED:
        module = sys.modules.get(name)
        loader = getattr(module, "__loader__", None)
        if module is not None and loader is not None:
            _look_rewritten_by_pytest(module, loader)


def _look_rewritten_by_pytest(module: types.ModuleType, loader: Any) -> None:
    """``module``'s ``__loader__`` a stand-in of pytest's hook class around ``loader`` (see
    :func:`show_marked_as_rewritten`); also for a marked module rt imports later (the suite's own ``tests``
    package, which the ``*.egg-info`` folder of a plugin's sdist lists, and so pytest marks)."""
    rewrite = sys.modules.get("_pytest.assertion.rewrite")
    hook = getattr(rewrite, "AssertionRewritingHook", None)
    if isinstance(hook, type) and not isinstance(loader, hook):
        module.__loader__ = _stand_in_loader(hook)(loader)


#: the loader methods pytest's hook defines itself, which the stand-in hands to the real loader too
_LOADER_METHODS = (
    "find_spec",
    "create_module",
    "exec_module",
    "get_data",
    "get_resource_reader",
    "load_module",
)
_STAND_INS: dict[type, type] = {}


def _stand_in_loader(hook: type) -> type:
    """A subclass of pytest's ``AssertionRewritingHook`` (``hook``) wrapping a module's real loader."""
    found = _STAND_INS.get(hook)
    if found is None:

        def delegate(name: str) -> Any:
            def method(self: Any, *args: Any, **kwargs: Any) -> Any:
                return getattr(self.__dict__["loader"], name)(*args, **kwargs)

            return method

        def init(self: Any, loader: Any) -> None:
            self.__dict__["loader"] = loader  # not the hook's own __init__, which wants pytest's config

        def getattr_(self: Any, name: str) -> Any:
            return getattr(self.__dict__["loader"], name)

        namespace: dict[str, Any] = {name: delegate(name) for name in _LOADER_METHODS}
        namespace.update(__init__=init, __getattr__=getattr_, __module__=__name__)
        found = _STAND_INS[hook] = type("ImportedByRt", (hook,), namespace)
    return found


_FINDER: RewritingFinder | None = None


def install(
    python_files: Sequence[str],
    namespace_packages: bool = False,
    rewrite_helpers: bool = True,
    unique_names: bool = False,
    spec_project: bool = False,
    by_location: bool = False,
    root: Path | None = None,
) -> RewritingFinder:
    """Put the rewriting finder on ``sys.meta_path`` just before the path finder (once per process): after the
    built-in and frozen importers, which answer first for their modules as in any import, and where the
    path finder's answer for a module not rewritten can be handed on as it is (``_as_found``)."""
    global _FINDER
    if _FINDER is None:
        _FINDER = RewritingFinder(python_files)
        meta_path = sys.meta_path
        at = (
            meta_path.index(importlib.machinery.PathFinder)
            if importlib.machinery.PathFinder in meta_path
            else 0
        )
        meta_path.insert(at, _FINDER)
    _FINDER.namespace_packages = namespace_packages
    _FINDER.rewrite_helpers = rewrite_helpers
    _FINDER.unique_names = unique_names
    _FINDER.spec_project = spec_project
    _FINDER.by_location = by_location
    _FINDER.root = root
    return _FINDER


def module_name(path: Path) -> tuple[str, Path]:
    """The dotted name of ``path`` and its basedir (the first directory upward that is not a package).

    With pytest's ``consider_namespace_packages``, a basedir that is itself inside a namespace package (a
    folder without ``__init__.py``: jaraco's ``jaraco/functools/__init__.py``) is looked through, as pytest
    does: the first directory from the basedir upward under which the dotted name imports as this very file
    (``jaraco.functools``, not ``functools``, which is the standard library's) is the basedir."""
    parts = [path.stem] if path.name != "__init__.py" else []
    directory = path.parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        if directory.parent == directory:
            break
        directory = directory.parent
    if _FINDER is not None and _FINDER.namespace_packages:
        found = _namespace_name(path, directory)
        if found is not None:
            return found
    return ".".join(parts), directory


def _namespace_name(path: Path, basedir: Path) -> tuple[str, Path] | None:
    import importlib.util

    for candidate in (basedir, *basedir.parents):
        relative = path.with_suffix("").relative_to(candidate).parts
        if relative and relative[-1] == "__init__":
            relative = relative[:-1]
        if not relative:
            continue
        name = ".".join(relative)
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, ImportWarning):
            continue
        if spec is not None and isinstance(spec.origin, str) and _same_path(spec.origin, path):
            return name, candidate
    return None


def _same_path(origin: str, path: Path) -> bool:
    try:
        return os.path.samefile(origin, path)
    except OSError:
        return False


def importable(path: Path) -> bool:
    return path.stem.isidentifier()


#: a test file or conftest.py has been imported in this process (:func:`import_path`): what a warm server
#: imports must come before any of the suite's code (rt_testrunner.warm_server)
SUITE_IMPORTED = False


def import_path(path: Path) -> types.ModuleType:
    """Import ``path`` under its real name (prepend mode's, with its basedir first on ``sys.path``; under
    ``--import-mode=importlib`` from where it is); a second file under the same name is an error."""
    global SUITE_IMPORTED
    SUITE_IMPORTED = True
    name, basedir = module_name(path)
    if "." not in name and _reimported(name, path):
        # a top-level module such as conftest or test_utils in several folders: each file is its own module
        previous = sys.modules.get(name)
        if previous is not None and _same_file(previous, path) is False:
            del sys.modules[name]
    if _FINDER is not None and _FINDER.by_location:
        if "." not in name and basedir == path.parent and _FINDER.root is not None:
            name = location_name(path, _FINDER.root)
        return _import_by_location(name, path)
    base = str(basedir)
    if not sys.path or sys.path[0] != base:
        if base in sys.path:
            sys.path.remove(base)
        sys.path.insert(0, base)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # a file made after its folder's listing was cached (within the folder's mtime tick): the import
        # system's caches are dropped and the import is tried once more; never before every file, since each
        # drop makes every folder on sys.path be listed again at the next import
        if exc.name is None or not (name == exc.name or name.startswith(f"{exc.name}.")):
            raise
        importlib.invalidate_caches()
        module = importlib.import_module(name)
    if _same_file(module, path) is False:
        raise ImportMismatchError(
            f"import file mismatch: module {name!r} was imported from {module.__file__}, not {path}; "
            "give the test files unique names or make their folders packages (__init__.py)"
        )
    return module


def location_name(path: Path, root: Path) -> str:
    """The name pytest's ``--import-mode=importlib`` gives a file outside any package: its path from the
    rootdir, dotted (``tests/test_x.py`` is ``tests.test_x``, so two ``test_x.py`` in two folders are two
    modules and pickling finds each), a ``.`` in a folder's name made ``_``; a file outside the rootdir is
    named by its whole path."""
    stem = path.with_suffix("")
    try:
        parts = stem.relative_to(root).parts
    except ValueError:
        parts = stem.parts[1:]
    if len(parts) >= 2 and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(part.replace(".", "_") for part in parts)


def _import_by_location(name: str, path: Path) -> types.ModuleType:
    """pytest's ``--import-mode=importlib``: ``path`` imported as ``name`` from where it is, ``sys.path`` left as
    it is, as pytest leaves it. Putting the file's basedir first on the path, as the other modes do, changes
    what the suite's own code finds there: a ``src`` folder of library modules collected for their doctests,
    put first, hides the installed distribution's metadata behind the sdist's ``src/*.egg-info``
    (validate-pyproject's ``importlib.metadata.files`` then named files the sdist lacks). A module of that
    name imported already is the one used, as pytest uses it; the packages above the file are imported from
    their own ``__init__.py`` the same way when they are not imported yet."""
    found = sys.modules.get(name)
    if found is not None:
        return found
    parent_name, _, last = name.rpartition(".")
    parent = None
    if parent_name:
        parent = sys.modules.get(parent_name)
        if parent is None or not hasattr(parent, "__path__"):
            parent = _import_package(
                parent_name, path.parent.parent if path.name == "__init__.py" else path.parent
            )
    spec = _spec_at(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except BaseException:
        sys.modules.pop(name, None)
        raise
    if parent is not None:
        setattr(parent, last, module)
    return module


def _import_package(name: str, directory: Path) -> types.ModuleType:
    """The package ``name`` in ``directory`` (see :func:`_import_by_location`): from its ``__init__.py``, else
    as the import system finds it (a namespace package of ``consider_namespace_packages``), else a namespace
    package of that folder alone."""
    init = directory / "__init__.py"
    if init.is_file():
        return _import_by_location(name, init)
    try:
        return importlib.import_module(name)
    except ImportError:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(directory)]
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        # the folders above it too (``tests`` of ``tests.sub``): ``pickle`` imports each part of a name
        parent_name, _, last = name.rpartition(".")
        if parent_name:
            parent = sys.modules.get(parent_name) or _import_package(parent_name, directory.parent)
            setattr(parent, last, module)
        return module


def _spec_at(name: str, path: Path) -> importlib.machinery.ModuleSpec:
    """The spec of ``path`` as module ``name``: the rewriting finder's when it finds that very file in its
    folder (so the suite's asserts are rewritten as in any import), else a plain one of the file."""
    location = path.parent.parent if path.name == "__init__.py" else path.parent
    spec = _FINDER.find_spec(name, [str(location)]) if _FINDER is not None else None
    if spec is None or not isinstance(spec.origin, str) or not _same_path(spec.origin, path):
        spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ImportError(f"cannot import {path} as {name!r}")
    return spec


def _reimported(name: str, path: Path) -> bool:
    """A file whose top-level module name another file already holds is imported in its place: a conftest.py
    outside a package (pytest drops the previous ``conftest`` module before importing the next), and any file
    unless the finder wants unique names (see :attr:`RewritingFinder.unique_names`)."""
    if name == "conftest" or _FINDER is None or not _FINDER.unique_names:
        return True
    return _FINDER.spec_project and path.name.endswith(SUFFIXES)


def forget(path: Path) -> None:
    """Drop ``path``'s module from ``sys.modules`` so the next import runs it again (``--rerun-each``)."""
    name, _ = module_name(path)
    sys.modules.pop(name, None)


def _same_file(module: types.ModuleType, path: Path) -> bool | None:
    origin = getattr(module, "__file__", None)
    if origin is None:
        return None
    try:
        return os.path.samefile(origin, path)
    except OSError:
        return False
