"""rt._entrypoints finds exactly what importlib.metadata finds, without importing it for directories."""

from __future__ import annotations

import importlib.metadata
import sys
import zipfile

import pytest

from rt._entrypoints import entry_points


def _reference(group: str, path: list[str] | None = None) -> list[tuple[str, str, str]]:
    distributions = (
        importlib.metadata.distributions(path=path)
        if path is not None
        else importlib.metadata.distributions()
    )
    seen, found = set(), []
    for dist in distributions:
        name = dist.metadata["Name"]
        key = name.lower().replace("_", "-").replace(".", "-")
        if key in seen:
            continue
        seen.add(key)
        found += [(ep.name, ep.value, name) for ep in dist.entry_points if ep.group == group]
    return sorted(found)


def _groups() -> list[str]:
    return sorted({ep.group for dist in importlib.metadata.distributions() for ep in dist.entry_points})


def test_agrees_with_importlib_metadata_for_every_group_installed_here():
    groups = _groups()
    assert "console_scripts" in groups
    for group in groups:
        ours = sorted((ep.name, ep.value, ep.distribution) for ep in entry_points(group))
        assert ours == _reference(group), group


def test_in_path_order_it_lists_what_importlib_metadata_lists_in_its_order():
    """The test runner reads pytest plugins (``pytest11``) this way; which plugin's fixture wins a name
    depends on that order."""
    for group in _groups():
        ours = [(ep.name, ep.value) for ep in entry_points(group, by_name=False)]
        assert ours == [(ep.name, ep.value) for ep in importlib.metadata.entry_points(group=group)], group


def test_a_distribution_is_known_by_its_directory_name_as_importlib_metadata_does(tmp_path):
    """Two copies of one distribution on the path: the first wins, even when only the second has a group,
    and the first one's metadata need not be read to tell them apart."""
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "same_dist-1.0.dist-info").mkdir(parents=True)
    (first / "same_dist-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: same-dist\n")
    info = second / "same_dist-2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: same-dist\nVersion: 2.0\n")
    (info / "entry_points.txt").write_text("[rt]\nsame = same_mod\n")
    assert entry_points("rt", path=[str(first), str(second)]) == []
    assert _reference("rt", [str(first), str(second)]) == []
    assert [e.version for e in entry_points("rt", path=[str(second)])] == ["2.0"]


def test_versions_come_from_metadata():
    for ep in entry_points("console_scripts"):
        assert ep.version == importlib.metadata.version(ep.distribution)


def test_zip_files_on_the_path_go_through_importlib(tmp_path):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped_plugin.py", "VALUE = 7\n")
        zf.writestr(
            "zipped_plugin-2.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: zipped-plugin\nVersion: 2.0\n",
        )
        zf.writestr("zipped_plugin-2.0.dist-info/entry_points.txt", "[rt]\nzipped = zipped_plugin:VALUE\n")
    found = entry_points("rt", path=[str(archive)])
    assert [(e.name, e.distribution, e.version) for e in found] == [("zipped", "zipped-plugin", "2.0")]
    sys.path.insert(0, str(archive))
    try:
        assert found[0].load() == 7
    finally:
        sys.path.remove(str(archive))
        sys.modules.pop("zipped_plugin", None)


def test_egg_info_and_first_on_path_wins(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for root, version in ((first, "1.0"), (second, "2.0")):
        info = root / "legacy_plugin.egg-info"
        info.mkdir(parents=True)
        (info / "PKG-INFO").write_text(f"Metadata-Version: 1.1\nName: legacy-plugin\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(
            "[console_scripts]\nx = y\n\n[rt]\nlegacy = legacy_mod:plugin\n"
        )
    found = entry_points("rt", path=[str(first), str(second)])
    assert [(e.name, e.value, e.version) for e in found] == [("legacy", "legacy_mod:plugin", "1.0")]
    assert _reference("rt", [str(first), str(second)]) == [("legacy", "legacy_mod:plugin", "legacy-plugin")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[rt]\na = b\n", [("a", "b")]),
        ("# comment\n[other]\na = b\n[rt]\n; note\nc=d:e\n\n[more]\nx = y\n", [("c", "d:e")]),
        ("[ rt ]\n  spaced  =  mod.sub : attr  \n", [("spaced", "mod.sub : attr")]),
    ],
)
def test_group_parsing(tmp_path, text, expected):
    info = tmp_path / "p-1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: p\nVersion: 1\n")
    (info / "entry_points.txt").write_text(text)
    assert [(e.name, e.value) for e in entry_points("rt", path=[str(tmp_path)])] == expected


def test_kernel_start_does_not_import_importlib_metadata(run_python):
    result = run_python("import sys, rt; rt.get_kernel(); print('importlib.metadata' in sys.modules)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
