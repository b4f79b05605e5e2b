"""The rewriting finder's place on ``sys.meta_path`` and what a module it does not rewrite costs, and the
import of a test file its folder's cached listing does not show yet."""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from rt_testrunner import importing


@pytest.fixture
def isolated_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's own finders alone on ``sys.meta_path`` (a finder an earlier test or a plugin left there, e.g.
    pytest's rewriting hook, would search the path too), copies of ``sys.path`` and ``sys.modules`` for one
    test, and no finder of rt's installed."""
    machinery = importlib.machinery
    monkeypatch.setattr(
        sys, "meta_path", [machinery.BuiltinImporter, machinery.FrozenImporter, machinery.PathFinder]
    )
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    monkeypatch.setattr(importing, "_FINDER", None)


@pytest.mark.usefixtures("isolated_imports")
def test_the_finder_goes_just_before_the_path_finder() -> None:
    finder = importing.install(["test_*.py"])
    at = sys.meta_path.index(finder)
    assert sys.meta_path[at + 1] is importlib.machinery.PathFinder
    # the built-in and frozen importers still answer first for their own modules
    assert importlib.machinery.BuiltinImporter in sys.meta_path[:at]
    assert importlib.machinery.FrozenImporter in sys.meta_path[:at]


@pytest.mark.usefixtures("isolated_imports")
def test_a_module_not_rewritten_is_searched_for_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plain_helper_module.py").write_text("VALUE = 1\n")
    sys.path.insert(0, str(tmp_path))
    importing.install(["test_*.py"])
    searched: list[str] = []
    original = importlib.machinery.PathFinder.find_spec

    def counted(fullname: str, path: Any = None, target: Any = None) -> Any:
        searched.append(fullname)
        return original(fullname, path, target)

    monkeypatch.setattr(importlib.machinery.PathFinder, "find_spec", counted)
    module = importlib.import_module("plain_helper_module")
    assert module.VALUE == 1
    assert type(module.__loader__) is importlib.machinery.SourceFileLoader  # not rewritten
    assert searched == ["plain_helper_module"]


@pytest.mark.usefixtures("isolated_imports")
def test_a_finder_between_it_and_the_path_finder_still_has_its_say(tmp_path: Path) -> None:
    (tmp_path / "answered_elsewhere.py").write_text("VALUE = 'path finder'\n")
    sys.path.insert(0, str(tmp_path))
    finder = importing.install(["test_*.py"])

    class Other:
        def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
            if fullname != "answered_elsewhere":
                return None
            return importlib.machinery.ModuleSpec(fullname, importlib.machinery.BuiltinImporter)

    other = Other()
    sys.meta_path.insert(sys.meta_path.index(finder) + 1, other)
    spec = importlib.util.find_spec("answered_elsewhere")
    assert spec is not None
    assert spec.loader is importlib.machinery.BuiltinImporter


@pytest.mark.usefixtures("isolated_imports")
def test_a_test_file_the_cached_folder_listing_misses_still_imports(tmp_path: Path) -> None:
    # the folder's listing is cached by the path finder; a file made in the same mtime tick (here: the
    # folder's mtime put back) is not in it, so the first import misses it and the retry finds it
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "test_first.py").write_text("def test_a():\n    assert True\n")
    importing.import_path(folder / "test_first.py")
    before = os.stat(folder)
    (folder / "test_second.py").write_text("VALUE = 2\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    module = importing.import_path(folder / "test_second.py")
    assert module.VALUE == 2
    assert module.__name__ == "test_second"
