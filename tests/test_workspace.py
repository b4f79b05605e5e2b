"""The workspace stays consistent as plugins are added: each member is a real distribution with an entry
point in group `rt`, a README, an env in the tox matrix, a place in the dev group and in docs/index.md."""

from __future__ import annotations

import configparser
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEMBERS = sorted(p.parent for pattern in ("plugins/*/pyproject.toml", "contrib/*/pyproject.toml")
                 for p in ROOT.glob(pattern))


def _project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text())["project"]


def test_there_are_plugins():
    assert MEMBERS


@pytest.mark.parametrize("folder", MEMBERS, ids=lambda p: p.name)
def test_member_is_a_plugin_distribution(folder):
    project = _project(folder)
    module = project["name"].replace("-", "_")
    entry_points = project["entry-points"]["rt"]
    assert list(entry_points) == [folder.name], "the entry-point name is the folder name"
    assert entry_points[folder.name].split(":")[0].split(".")[0] == module
    assert (folder / "src" / module / "__init__.py").is_file()
    assert (folder / "README.md").is_file()
    assert any(dep.startswith("rt-kernel") for dep in project["dependencies"])


@pytest.mark.parametrize("folder", MEMBERS, ids=lambda p: p.name)
def test_member_is_in_the_dev_group_docs_and_tox(folder):
    name = _project(folder)["name"]
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert f"{name}[test]" in root["dependency-groups"]["test"]
    assert root["tool"]["uv"]["sources"][name] == {"workspace": True}
    assert f"| {name} |" in (ROOT / "docs" / "index.md").read_text()
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    assert f"testenv:{folder.name}" in tox, f"tox.ini needs an env installing {name} alone with the kernel"
    assert folder.name in tox["tox"]["env_list"]


# The modules allowed to import an event loop library directly (ARCHITECTURE.md: only where a measured
# backend-specific fast path pays, behind one function). Everything else goes through anyio.
BACKEND_SPECIFIC = {
    "plugins/http/src/rt_http/asyncio_streams.py": "asyncio sockets; see docs/benchmarks.md (echo)",
    "plugins/http/src/rt_http/trio_streams.py": "trio sockets; see docs/benchmarks.md (echo)",
}


def test_library_code_does_not_import_asyncio_or_trio():
    import ast

    assert all((ROOT / path).is_file() for path in BACKEND_SPECIFIC), "a stale BACKEND_SPECIFIC entry"
    offenders = []
    sources = [*ROOT.glob("kernel/src/**/*.py"), *ROOT.glob("plugins/*/src/**/*.py"),
               *ROOT.glob("contrib/*/src/**/*.py")]
    assert sources
    for path in sources:
        relative = path.relative_to(ROOT).as_posix()
        if relative in BACKEND_SPECIFIC:
            continue
        for node in ast.walk(ast.parse(path.read_text(), relative)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(name.split(".")[0] in ("asyncio", "trio") for name in names):
                offenders.append(f"{relative}:{node.lineno}")
    assert offenders == [], "import anyio instead, or add a measured fast path to BACKEND_SPECIFIC"
