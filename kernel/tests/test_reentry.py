"""A file named like a plugin's package (``rt_debug.py``) gets a clear error, never a deadlock.

Before: ``python rt_debug.py`` whose code used ``rt.inspect`` built the default kernel, whose entry point
``rt_debug.plugin`` imported the script again as ``rt_debug``, which used ``rt.`` again and waited forever on
the lock held by the first construction."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from rt.testing import clean_environ

SCRIPT = textwrap.dedent("""
    import rt
    print(rt.anything_at_all)
""")


def _site(root: Path, entry_point: str) -> Path:
    """An installed distribution rt-shadowed whose plugin lives in package ``rt_shadowed``."""
    site = root / "site"
    package = site / "rt_shadowed"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text("")
    info = site / "rt_shadowed-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rt-shadowed\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[rt]\nshadowed = {entry_point}\n")
    return site


def _run(args: list[str], cwd: Path, site: Path) -> subprocess.CompletedProcess[str]:
    # A deadlock shows as a timeout (an error of this test), not as a hang of the suite.
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_environ({"PYTHONPATH": str(site)}),
    )


def test_a_script_named_like_a_plugin_package_is_told_to_rename(tmp_path):
    site = _site(tmp_path, "rt_shadowed.plugin")
    work = tmp_path / "work"
    work.mkdir()
    (work / "rt_shadowed.py").write_text(SCRIPT)
    result = _run(["rt_shadowed.py"], work, site)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert "rt_shadowed.py has the name of its package 'rt_shadowed'" in last and "rename that file" in last


def test_a_module_that_uses_rt_while_a_plugin_imports_it_is_an_error_not_a_deadlock(tmp_path):
    """The entry point names a module (no package), so nothing looks shadowed before the import: the
    re-entrant kernel construction itself is detected."""
    site = _site(tmp_path, "rt_shadowed")
    work = tmp_path / "work"
    work.mkdir()
    (work / "rt_shadowed.py").write_text(SCRIPT)
    result = _run(["-c", "import rt; rt.CSRF"], work, site)
    assert result.returncode == 1
    assert "rt was used while importing plugin shadowed (rt_shadowed)" in result.stderr
    assert "Rename it" in result.stderr
